package main_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// tinyPNG is the fake MCP server's 1x1 PNG (its image tool's data).
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// imageCalls are the image tool's calls of the media tests, by id: the
// PNG, a TIFF, broken base64, a PNG over the limit, one within it (large
// enough for the session log to keep it as a blob), a PNG labelled JPEG,
// the PNG as an embedded blob resource.
var imageCalls = []struct{ id, args string }{
	{"c_png", `{}`},
	{"c_tiff", `{"variant":"tiff"}`},
	{"c_broken", `{"variant":"broken"}`},
	{"c_big", `{"variant":"big","bytes":8000}`},
	{"c_large", `{"variant":"big","bytes":5000}`},
	{"c_label", `{"variant":"mislabelled"}`},
	{"c_res", `{"variant":"resource"}`},
}

// tinyWAV is an empty WAV file.
const tinyWAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="

// mediaConfig bounds an image at 6,000 bytes; audio is taken where the
// provider can.
const mediaConfig = `{"limits": {"maxImageBytes": 6000}, "model": {"audio": true}}`

// largePNG is the base64 of the image tool's big variant of 5,000 bytes.
var largePNG = func() string {
	png, _ := base64.StdEncoding.DecodeString(tinyPNG)
	b := make([]byte, 5000)
	copy(b, png)
	return base64.StdEncoding.EncodeToString(b)
}()

// checkLogBlobs checks that the session log of sid under state keeps the
// large image's data as one blob record, referred to by the history: its
// base64 appears twice, in the blob and in the client's replay copy of
// the call (the tool_call_update).
func checkLogBlobs(t *testing.T, state string, sid acpsdk.SessionId) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(state, "sessions", string(sid), "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(raw)
	if n := strings.Count(log, largePNG); n != 2 || !strings.Contains(log, `{"k":"blob"`) || !strings.Contains(log, "blob:sha256:") {
		t.Errorf("the large image is in the log %d times (want 2: the blob, the client's copy); blob record %v, reference %v",
			n, strings.Contains(log, `{"k":"blob"`), strings.Contains(log, "blob:sha256:"))
	}
}

// TestToolImagesReachOpenAIModel: a step whose results hold images, audio
// and images the model cannot take, through the binary to an
// OpenAI-compatible endpoint. The tool messages carry text only and say
// which parts follow; the user message after them carries each image the
// model can take exactly once, as a data URL, each preceded by its frame
// naming the server and the tool as untrusted; the audio goes as
// input_audio; an unsupported type, broken base64 and an oversized image
// each become a note; the next turn succeeds with the same parts, and so
// does a turn after a restart and session/load.
func TestToolImagesReachOpenAIModel(t *testing.T) {
	t.Parallel()
	var calls []fakellm.ToolCall
	for _, c := range imageCalls {
		calls = append(calls, fakellm.ToolCall{ID: c.id, Name: "mcp__s__image", Arguments: c.args})
	}
	calls = append(calls, fakellm.ToolCall{ID: "c_audio", Name: "mcp__s__audio", Arguments: `{}`})
	llm := fakellm.Start(fakellm.Turn{ToolCalls: calls, SequentialToolCalls: true}, fakellm.Turn{Text: "I see a pixel."}, fakellm.Turn{Text: "Still a pixel."}, fakellm.Turn{Text: "A pixel, after the restart."})
	defer llm.Close()
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--config", writeConfig(t, mediaConfig), "--model", "fake-model", "--base-url", llm.URL}
	a := startAgent(t, state, args...)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if r := prompt(t, a, sid, "look at these"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop %s", r.StopReason)
	}
	if got := agentText(a.client.all()); got != "I see a pixel." {
		t.Fatalf("answer %q", got)
	}
	before := len(a.client.all())
	prompt(t, a, sid, "/context")
	if got := agentText(a.client.all()[before:]); !strings.Contains(got, "- of which 7 images and 1 audio clips: ") {
		t.Errorf("/context does not count the media:\n%s", got)
	}
	prompt(t, a, sid, "and now?")
	reqs := llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	checkOpenAIImages(t, reqs[1])
	// The next turn sends the step's messages again, byte for byte.
	if got, want := openAIStep(t, reqs[2]), openAIStep(t, reqs[1]); got != want {
		t.Errorf("the next turn sends the step otherwise:\n got %s\nwant %s", got, want)
	}

	_ = a.stdin.Close()
	<-a.exited
	checkLogBlobs(t, state, sid)
	b := startAgent(t, state, args...)
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}}); err != nil {
		t.Fatal(err)
	}
	// model.audio: the agent says it takes audio, and a prompt's audio
	// block reaches the model as input_audio.
	init, err := b.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
	if err != nil || !init.AgentCapabilities.PromptCapabilities.Audio {
		t.Errorf("promptCapabilities %+v, %v", init.AgentCapabilities.PromptCapabilities, err)
	}
	if _, err := b.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("after the restart?"), acpsdk.AudioBlock(tinyWAV, "audio/wav")}}); err != nil {
		t.Fatal(err)
	}
	reqs = llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if last := reqs[3].Messages[len(reqs[3].Messages)-1]; !strings.Contains(mustJSON(last.Parts), `"input_audio":{"data":"`+tinyWAV+`","format":"wav"}`) {
		t.Errorf("the prompt's audio: %s", mustJSON(last))
	}
	if got, want := openAIStep(t, reqs[3]), openAIStep(t, reqs[1]); got != want {
		t.Errorf("the loaded session sends the step otherwise:\n got %s\nwant %s", got, want)
	}
}

// openAIStep is the JSON of the first step's tool messages and the user
// message after them, as request r sent them.
func openAIStep(t *testing.T, r fakellm.Request) string {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	first := -1
	for i, m := range r.Messages {
		if m.Role == "tool" && first < 0 {
			first = i
		}
	}
	if first < 0 || first+len(imageCalls)+2 > len(body.Messages) {
		t.Fatalf("no step in %s", r.Raw)
	}
	return mustJSON(body.Messages[first : first+len(imageCalls)+2])
}

// checkOpenAIImages checks the request after the step of images.
func checkOpenAIImages(t *testing.T, r fakellm.Request) {
	t.Helper()
	tool := map[string]string{}
	var after *fakellm.Message
	for i, m := range r.Messages {
		if m.Role == "tool" {
			tool[m.ToolCallID] = m.Content
			if i+1 < len(r.Messages) && r.Messages[i+1].Role == "user" {
				after = &r.Messages[i+1]
			}
		}
	}
	if after == nil {
		t.Fatalf("no user message after the tool messages: %s", r.Raw)
	}
	for id, want := range map[string]string{
		"c_png":    "[image 1 of this result (image/png, 96 bytes base64) follows in the user message after the tool results]",
		"c_tiff":   `[image not sent to the model: the model does not take "image/tiff"`,
		"c_broken": "[image not sent to the model: its data (19 bytes) is not valid base64]",
		"c_big":    "[image not sent to the model: image/png of 8000 bytes, over the limit of 6000 bytes per part]",
		"c_large":  "[image 1 of this result (image/png, 6668 bytes base64) follows",
		"c_label":  "[image 1 of this result (image/png, 96 bytes base64) follows",
		"c_res":    "[image 1 of this result (image/png, 96 bytes base64) follows",
		"c_audio":  "[audio 1 of this result (audio/wav, 60 bytes base64) follows",
	} {
		if !strings.Contains(tool[id], want) {
			t.Errorf("tool message %s lacks %q:\n%s", id, want, tool[id])
		}
	}
	var images, audio, frames int
	for _, raw := range after.Parts {
		var p struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
			InputAudio struct {
				Data, Format string
			} `json:"input_audio"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		switch p.Type {
		case "image_url":
			images++
			if p.ImageURL.URL != "data:image/png;base64,"+tinyPNG && p.ImageURL.URL != "data:image/png;base64,"+largePNG {
				t.Errorf("image part %s", raw)
			}
		case "input_audio":
			audio++
			if p.InputAudio.Format != "wav" || p.InputAudio.Data == "" {
				t.Errorf("audio part %s", raw)
			}
		case "text":
			if strings.Contains(p.Text, `of the MCP server "s"`) && strings.Contains(p.Text, "untrusted external data") && strings.Contains(p.Text, `mcp__s__`) {
				frames++
			}
		}
	}
	if images != 4 || audio != 1 || frames != 5 {
		t.Errorf("%d images, %d audio clips, %d frames in the user message: %s", images, audio, frames, mustJSON(after))
	}
	if n := strings.Count(string(r.Raw), tinyPNG); n != 3 {
		t.Errorf("the PNG's bytes are sent %d times, want 3 (one per image)", n)
	}
}

// TestToolImagesReachAnthropicModel: the same step with the Anthropic
// provider puts each image it takes inside its tool_result, framed, once;
// what it cannot take (a TIFF, audio) is a note; the cache breakpoints
// are where a text-only conversation has them; a resumed session sends
// the same blocks.
func TestToolImagesReachAnthropicModel(t *testing.T) {
	t.Parallel()
	var uses []fakeanthropic.Block
	for _, c := range imageCalls {
		uses = append(uses, fakeanthropic.ToolUse(c.id, "mcp__s__image", c.args))
	}
	uses = append(uses, fakeanthropic.ToolUse("c_audio", "mcp__s__audio", `{}`))
	claude := fakeanthropic.Start(
		fakeanthropic.Turn{Blocks: uses},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("I see a pixel.")}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("A pixel, after the restart.")}},
	)
	defer claude.Close()
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--config", writeConfig(t, `{"limits": {"maxImageBytes": 6000}}`), "--provider", "anthropic", "--base-url", claude.URL, "--model", fakeanthropic.DefaultModel}
	a := startAgentEnv(t, state, []string{"ANTHROPIC_API_KEY=k"}, args...)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	prompt(t, a, sid, "look at these")
	if got := agentText(a.client.all()); got != "I see a pixel." {
		t.Fatalf("answer %q", got)
	}
	reqs := claude.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[1]
	for id, want := range map[string]string{
		"c_png":    `{"data":"` + tinyPNG + `","media_type":"image/png","type":"base64"}`,
		"c_tiff":   `the model does not take \"image/tiff\"`,
		"c_broken": "is not valid base64",
		"c_big":    "over the limit of 6000 bytes per part",
		"c_large":  `{"data":"` + largePNG + `","media_type":"image/png","type":"base64"}`,
		"c_label":  `"media_type":"image/png"`,
		"c_res":    `"media_type":"image/png"`,
		"c_audio":  "[audio not sent to the model: the model does not take audio]",
	} {
		if got := toolResultText(r, id); !strings.Contains(got, want) {
			t.Errorf("tool_result %s lacks %q:\n%s", id, want, got)
		}
	}
	if got := toolResultText(r, "c_png"); !strings.Contains(got, `[image 1 of the output of the tool \"mcp__s__image\" of the MCP server \"s\"`) {
		t.Errorf("no frame before the image: %s", got)
	}
	raw := mustJSON(r.Messages)
	if n := strings.Count(raw, tinyPNG); n != 3 {
		t.Errorf("the PNG's bytes are sent %d times, want 3", n)
	}
	if bp := r.Breakpoints(); len(bp) != 4 {
		t.Errorf("breakpoints %v", bp)
	}
	step := func(r fakeanthropic.Request) string { return mustJSON(r.Messages[:3]) }

	_ = a.stdin.Close()
	<-a.exited
	b := startAgentEnv(t, state, []string{"ANTHROPIC_API_KEY=k"}, args...)
	if _, err := b.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("s")}}); err != nil {
		t.Fatal(err)
	}
	// The API takes no audio: the agent does not say it does, and a
	// prompt's audio block is refused, naming it.
	init, err := b.conn.Initialize(ctx30(t), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
	if err != nil || init.AgentCapabilities.PromptCapabilities.Audio || !init.AgentCapabilities.PromptCapabilities.Image {
		t.Errorf("promptCapabilities %+v, %v", init.AgentCapabilities.PromptCapabilities, err)
	}
	_, err = b.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hear this"), acpsdk.AudioBlock(tinyWAV, "audio/wav")}})
	var rpcErr *acpsdk.RequestError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || !strings.Contains(mustJSON(rpcErr), "prompt[1]") {
		t.Errorf("an audio prompt: %v (%s)", err, mustJSON(rpcErr))
	}
	prompt(t, b, sid, "after the restart?")
	reqs = claude.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got, want := step(reqs[2]), step(reqs[1]); stripCache(got) != stripCache(want) {
		t.Errorf("the loaded session sends the step otherwise:\n got %s\nwant %s", got, want)
	}
}

// stripCache removes the cache_control marks from a request's JSON (they
// move with the conversation).
func stripCache(s string) string {
	return strings.ReplaceAll(s, `,"cache_control":{"type":"ephemeral"}`, "")
}

// TestEndpointRefusingImages: an endpoint that refuses a request with an
// image (400) gets the request again with a note in its place, the turn
// succeeds, and later requests of the session carry no image.
func TestEndpointRefusingImages(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__s__image", Arguments: `{}`}}},
		fakellm.Turn{Status: 400, ErrorMessage: "image input is not supported by this model"},
		fakellm.Turn{Text: "No picture, but fine."},
		fakellm.Turn{Text: "Still fine."},
	)
	defer llm.Close()
	a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("s")}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "look")
	if got := agentText(a.client.all()); got != "No picture, but fine." {
		t.Fatalf("answer %q", got)
	}
	prompt(t, a, resp.SessionId, "again")
	reqs := llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(string(reqs[1].Raw), tinyPNG) {
		t.Errorf("the first try carries no image: %s", reqs[1].Raw)
	}
	for _, r := range reqs[2:] {
		if strings.Contains(string(r.Raw), tinyPNG) || !strings.Contains(string(r.Raw), "the model endpoint refused a request with images or audio earlier in this session") {
			t.Errorf("a request after the refusal: %s", r.Raw)
		}
	}
}

// everythingImage is the PNG the reference server's get-tiny-image tool
// returns, read from its source.
func everythingImage(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(everythingDist(t), "tools", "get-tiny-image.js"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), `MCP_TINY_IMAGE = "`)
	img, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 || len(img) < 100 {
		t.Fatal("no MCP_TINY_IMAGE in get-tiny-image.js")
	}
	return img
}

// TestEverythingImageReachesBothModels: the reference server's
// get-tiny-image result (text, the image, text) reaches an
// OpenAI-compatible model and an Anthropic one as an image, once, framed
// as the server's.
func TestEverythingImageReachesBothModels(t *testing.T) {
	t.Parallel()
	img := everythingImage(t)
	const tool = "mcp__e__get-tiny-image"
	t.Run("openai", func(t *testing.T) {
		t.Parallel()
		llm := fakellm.Start(fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: tool, Arguments: `{}`}}}, fakellm.Turn{Text: "The MCP logo."})
		defer llm.Close()
		a := startAgent(t, t.TempDir(), "--model", "fake-model", "--base-url", llm.URL)
		a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
		prompt(t, a, everythingSession(t, a, t.TempDir()), "show me the logo")
		reqs := llm.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		raw := string(reqs[1].Raw)
		msgs := reqs[1].Messages
		last := msgs[len(msgs)-1]
		if strings.Count(raw, img) != 1 || last.Role != "user" || !strings.Contains(mustJSON(last.Parts), `"url":"data:image/png;base64,`+img+`"`) ||
			!strings.Contains(last.Content, `of the MCP server \"e\"`) && !strings.Contains(last.Content, `of the MCP server "e"`) {
			t.Errorf("the image in the request (%d times): %s", strings.Count(raw, img), mustJSON(last))
		}
		t.Logf("openai: the step's request is %d bytes; the image %d bytes of base64; the user message after the tool message %d bytes", len(raw), len(img), len(mustJSON(last)))
		if tm := msgs[len(msgs)-2]; tm.Role != "tool" || !strings.Contains(tm.Content, "The image above is the MCP logo.") || !strings.Contains(tm.Content, "follows in the user message") {
			t.Errorf("tool message %s", mustJSON(tm))
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		t.Parallel()
		claude := fakeanthropic.Start(
			fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", tool, `{}`)}},
			fakeanthropic.Turn{Blocks: []fakeanthropic.Block{fakeanthropic.Text("The MCP logo.")}},
		)
		defer claude.Close()
		a := startAgentEnv(t, t.TempDir(), []string{"ANTHROPIC_API_KEY=k"}, "--provider", "anthropic", "--base-url", claude.URL, "--model", fakeanthropic.DefaultModel)
		a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
		prompt(t, a, everythingSession(t, a, t.TempDir()), "show me the logo")
		reqs := claude.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		got := toolResultText(reqs[1], "toolu_1")
		t.Logf("anthropic: the step's messages are %d bytes; the image %d bytes of base64; the tool_result content %d bytes", len(mustJSON(reqs[1].Messages)), len(img), len(got))
		if strings.Count(mustJSON(reqs[1].Messages), img) != 1 || !strings.Contains(got, `{"data":"`+img+`","media_type":"image/png","type":"base64"}`) ||
			!strings.Contains(got, `of the MCP server \"e\"`) {
			t.Errorf("tool_result %s", got)
		}
	})
}
