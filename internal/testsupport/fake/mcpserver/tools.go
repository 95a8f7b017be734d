package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// pngBase64 is a valid 1x1 RGBA PNG.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// wavBase64 is a 44-byte WAV file (8 kHz, mono, 16 bit) with no samples.
var wavBase64 = func() string {
	b := make([]byte, 0, 44)
	le32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	le16 := func(v uint16) { b = binary.LittleEndian.AppendUint16(b, v) }
	b = append(b, "RIFF"...)
	le32(36)
	b = append(b, "WAVEfmt "...)
	le32(16)   // fmt chunk size
	le16(1)    // PCM
	le16(1)    // channels
	le32(8000) // sample rate
	le32(16000)
	le16(2)  // block align
	le16(16) // bits per sample
	b = append(b, "data"...)
	le32(0)
	return base64.StdEncoding.EncodeToString(b)
}()

// imageVariant is the image tool's content for variant: the 1x1 PNG
// (""), a TIFF header labelled image/tiff ("tiff"), text that is not
// base64 labelled image/png ("broken"), the PNG's signature padded to size
// bytes ("big"), the PNG labelled image/jpeg ("mislabelled"), or the PNG
// as an embedded blob resource test://image.png ("resource").
func imageVariant(variant string, size int) mcp.Content {
	switch variant {
	case "tiff":
		return mcp.NewImageContent(base64.StdEncoding.EncodeToString([]byte("II*\x00\x08\x00\x00\x00")), "image/tiff")
	case "broken":
		return mcp.NewImageContent("this is not base64!", "image/png")
	case "big":
		png, _ := base64.StdEncoding.DecodeString(pngBase64)
		b := make([]byte, max(size, len(png)))
		copy(b, png)
		return mcp.NewImageContent(base64.StdEncoding.EncodeToString(b), "image/png")
	case "mislabelled":
		return mcp.NewImageContent(pngBase64, "image/jpeg")
	case "resource":
		return mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "test://image.png", MIMEType: "image/png", Blob: pngBase64})
	}
	return mcp.NewImageContent(pngBase64, "image/png")
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

func (a *app) addTools() {
	s := a.srv
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Returns its text argument as text content."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to echo.")),
		mcp.WithTitleAnnotation("Echo"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text(t), nil
	})

	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Adds two numbers; returns the sum as text and as structuredContent {\"sum\": n}."),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("First addend.")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("Second addend.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		x, err := req.RequireFloat("a")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		y, err := req.RequireFloat("b")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		sum := x + y
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(strconv.FormatFloat(sum, 'f', -1, 64))},
			StructuredContent: map[string]any{"sum": sum},
		}, nil
	})

	s.AddTool(mcp.NewTool("sleep",
		mcp.WithDescription("Sleeps for ms milliseconds, honouring cancellation."),
		mcp.WithInteger("ms", mcp.Required(), mcp.Min(0), mcp.Description("Milliseconds to sleep.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms, err := req.RequireInt("ms")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if !a.wait(ctx, time.Duration(ms)*time.Millisecond) {
			return a.cancelled("sleep"), nil
		}
		return text(fmt.Sprintf("slept %dms", ms)), nil
	})

	s.AddTool(mcp.NewTool("fail",
		mcp.WithDescription("Returns a tool error (isError true) with the given message."),
		mcp.WithString("message", mcp.DefaultString("tool failed"), mcp.Description("Error text.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(req.GetString("message", "tool failed")), nil
	})

	s.AddTool(mcp.NewTool("rpc_error",
		mcp.WithDescription("Answers with a JSON-RPC error (-32603) whose message is message repeated to exactly bytes bytes."),
		mcp.WithString("message", mcp.DefaultString("rpc error"), mcp.Description("Error text, repeated.")),
		mcp.WithInteger("bytes", mcp.Min(0), mcp.Description("Size of the message (default: message once).")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		msg := req.GetString("message", "rpc error")
		if n := req.GetInt("bytes", len(msg)); msg != "" && n >= 0 {
			msg = strings.Repeat(msg, n/len(msg)+1)[:n]
		}
		return nil, errors.New(msg)
	})

	s.AddTool(mcp.NewTool("crash",
		mcp.WithDescription("Makes the server process exit with status 2."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "crash tool called")
		os.Exit(2)
		return nil, nil
	})

	s.AddTool(mcp.NewTool("big",
		mcp.WithDescription("Returns one text content of exactly bytes bytes ('a' repeated)."),
		mcp.WithInteger("bytes", mcp.Required(), mcp.Min(0), mcp.Description("Size of the text.")),
		mcp.WithBoolean("log_first", mcp.Description("Send a log notification before the result (over http this makes the answer an event stream).")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, err := req.RequireInt("bytes")
		if err != nil || n < 0 {
			return mcp.NewToolResultError(fmt.Sprintf("bad bytes argument: %v", err)), nil
		}
		if req.GetBool("log_first", false) {
			if err := a.notify(ctx, string(mcp.MethodNotificationMessage), map[string]any{
				"level": "info", "logger": a.cfg.name, "data": "big result follows",
			}); err != nil {
				return mcp.NewToolResultError("notify: " + err.Error()), nil
			}
		}
		return text(strings.Repeat("a", n)), nil
	})

	s.AddTool(mcp.NewTool("image",
		mcp.WithDescription("Returns a 1x1 PNG image content (variant: another image)."),
		mcp.WithString("variant", mcp.Description("tiff, broken, big (with bytes), mislabelled or resource.")),
		mcp.WithNumber("bytes", mcp.Description("The decoded size of the big variant.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{imageVariant(req.GetString("variant", ""), req.GetInt("bytes", 0))}}, nil
	})

	s.AddTool(mcp.NewTool("audio",
		mcp.WithDescription("Returns an empty WAV audio content."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(wavBase64, "audio/wav")}}, nil
	})

	s.AddTool(mcp.NewTool("mixed",
		mcp.WithDescription("Returns text, image, audio, embedded resource and resource_link content."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("mixed content"),
			mcp.NewImageContent(pngBase64, "image/png"),
			mcp.NewAudioContent(wavBase64, "audio/wav"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: "test://mixed", MIMEType: "text/plain", Text: "mixed resource",
			}),
			mcp.NewResourceLink("test://hello", "hello", "The hello resource.", "text/plain"),
		}}, nil
	})

	s.AddTool(mcp.NewTool("structured",
		mcp.WithDescription("Returns structuredContent {\"answer\": 42} matching its outputSchema."),
		mcp.WithRawOutputSchema([]byte(`{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`)),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(`{"answer":42}`)},
			StructuredContent: map[string]any{"answer": 42},
		}, nil
	})

	s.AddTool(mcp.NewTool("mirror",
		mcp.WithDescription("Returns the object content as structuredContent, and as JSON text."),
		mcp.WithObject("content", mcp.Required(), mcp.Description("Any object: its member names are sent as they are.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, ok := req.GetArguments()["content"].(map[string]any)
		if !ok {
			return mcp.NewToolResultError("content must be an object"), nil
		}
		text, err := json.Marshal(c)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}, StructuredContent: c}, nil
	})

	s.AddTool(mcp.NewTool("progress",
		mcp.WithDescription("Sends steps progress notifications interval_ms apart (each after a wait), then returns \"done <steps>\"."),
		mcp.WithInteger("steps", mcp.Required(), mcp.Min(0), mcp.Description("Number of notifications.")),
		mcp.WithInteger("interval_ms", mcp.Min(0), mcp.DefaultNumber(0), mcp.Description("Wait before each notification.")),
	), a.progressTool)

	s.AddTool(mcp.NewTool("trace",
		mcp.WithDescription("Returns, as JSON text, the W3C trace context the call carried: _meta's traceparent, tracestate and baggage (\"meta\"), and over http the traceparent header (\"header\")."),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out := map[string]any{"meta": map[string]any{}}
		if m := req.Params.Meta; m != nil {
			got := map[string]any{}
			for _, k := range []string{"traceparent", "tracestate", "baggage"} {
				if v, ok := m.AdditionalFields[k]; ok {
					got[k] = v
				}
			}
			out["meta"] = got
		}
		if h := req.Header.Get("traceparent"); h != "" {
			out["header"] = h
		}
		b, err := json.Marshal(out)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text(string(b)), nil
	})

	s.AddTool(mcp.NewTool("env",
		mcp.WithDescription("Returns the value of an environment variable, or \"(unset)\" if empty."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Variable name.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name, err := req.RequireString("name")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if v := os.Getenv(name); v != "" {
			return text(v), nil
		}
		return text("(unset)"), nil
	})

	s.AddTool(mcp.NewToolWithRawSchema("schema_rich",
		"Has a rich input schema (top-level anyOf, $defs, enums, nested objects); returns its arguments.",
		json.RawMessage(RichSchema),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(string(req.Params.RawArguments)), nil
	})

	s.AddTool(mcp.NewTool("cwd",
		mcp.WithDescription("Returns the server's working directory."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		wd, err := os.Getwd()
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text(wd), nil
	})

	s.AddTool(mcp.NewTool("add_tool",
		mcp.WithDescription("Registers a tool with the given name at runtime (tools/list_changed is sent)."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Name of the new tool.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name, err := req.RequireString("name")
		if err != nil || name == "" {
			return mcp.NewToolResultError("missing name"), nil
		}
		a.changeTools(ctx, func() { a.addNamedTool(name) })
		return text("added " + name), nil
	})

	s.AddTool(mcp.NewTool("remove_tool",
		mcp.WithDescription("Removes the tool with the given name (tools/list_changed is sent)."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Name of the tool to remove.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name, err := req.RequireString("name")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if a.srv.GetTool(name) == nil {
			return mcp.NewToolResultError("no such tool " + name), nil
		}
		a.changeTools(ctx, func() { a.srv.DeleteTools(name) })
		return text("removed " + name), nil
	})

	s.AddTool(mcp.NewTool("log",
		mcp.WithDescription("Sends a notifications/message log notification and returns \"logged\"."),
		mcp.WithString("level", mcp.Required(), mcp.Enum(logLevels...), mcp.Description("MCP logging level.")),
		mcp.WithString("message", mcp.Required(), mcp.Description("Log data.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		level, err := req.RequireString("level")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if !isLogLevel(level) {
			return mcp.NewToolResultError("unknown level " + level), nil
		}
		msg, err := req.RequireString("message")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if err := a.notify(ctx, string(mcp.MethodNotificationMessage), map[string]any{
			"level": level, "logger": a.cfg.name, "data": msg,
		}); err != nil {
			return mcp.NewToolResultError("notify: " + err.Error()), nil
		}
		return text("logged"), nil
	})

	s.AddTool(mcp.NewTool("stderr",
		mcp.WithDescription("Writes text as one line to stderr."),
		mcp.WithString("text", mcp.Required(), mcp.Description("The line, without newline.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if _, err := os.Stderr.WriteString(t + "\n"); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text(fmt.Sprintf("written %d", len(t))), nil
	})

	s.AddTool(mcp.NewTool("flood",
		mcp.WithDescription("Writes lines lines to stderr, stdout (as junk), both or as log notifications, as fast as it can or paced."),
		mcp.WithString("kind", mcp.Required(), mcp.Enum("stderr", "stdout", "both", "notify", "log", "progress", "response", "listchanged", "badjson", "endless"),
			mcp.Description("Where to write: stderr, stdout (junk), both, notify (log notifications through the server); on stdout as raw lines: log (notifications/message), progress (for an unknown token), response (to an unknown id), listchanged (tools/list_changed), badjson (lines that start with { and are not JSON), endless (one line without a newline).")),
		mcp.WithInteger("lines", mcp.Required(), mcp.Min(0), mcp.Description("How many lines (0 with ms: no bound).")),
		mcp.WithInteger("size", mcp.Min(0), mcp.Description("Pad each line with 'x' to this many bytes.")),
		mcp.WithInteger("ms", mcp.Min(0), mcp.Description("Stop after this many milliseconds.")),
		mcp.WithInteger("per_second", mcp.Min(0), mcp.Description("Write at most this many lines a second.")),
	), a.floodTool)

	for i := range a.cfg.tools {
		a.addNamedTool(fmt.Sprintf("tool_%d", i))
	}
}

// floodPlan is what a flood call asks for: how many lines (0: no bound,
// with until), how long each is, by when to stop and at what pace.
type floodPlan struct {
	lines, size, perSecond int
	until                  time.Time // zero: no time bound
}

func (a *app) floodTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	kind, err := req.RequireString("kind")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	n, err := req.RequireInt("lines")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	plan := floodPlan{lines: n, size: req.GetInt("size", 0), perSecond: req.GetInt("per_second", 0)}
	if ms := req.GetInt("ms", 0); ms > 0 {
		plan.until = time.Now().Add(time.Duration(ms) * time.Millisecond)
	} else if n == 0 {
		return text("flooded 0"), nil
	}
	toStderr := func(line string) error { _, err := os.Stderr.WriteString(line); return err }
	toStdout := func(line string) error { _, err := a.out.Write([]byte(line)); return err }
	var written int
	switch kind {
	case "stderr":
		written, err = plan.run(toStderr)
	case "stdout", "both":
		if a.out == nil {
			return mcp.NewToolResultError("stdout flood needs stdio"), nil
		}
		if kind == "stdout" {
			written, err = plan.run(toStdout)
			break
		}
		done := make(chan error, 1)
		go func() { _, err := plan.run(toStdout); done <- err }()
		written, err = plan.run(toStderr)
		err = errors.Join(err, <-done)
	case "log", "progress", "response", "listchanged", "badjson", "endless":
		if a.out == nil {
			return mcp.NewToolResultError("a raw flood needs stdio"), nil
		}
		written, err = plan.run(rawFloodLine(kind, func(line string) error { _, err := a.out.Write([]byte(line)); return err }))
		if kind == "endless" && err == nil {
			_, err = a.out.Write([]byte("\n")) // the answer comes on a line of its own
		}
	case "notify":
		written, err = plan.run(func(line string) error {
			return a.notify(ctx, string(mcp.MethodNotificationMessage), map[string]any{
				"level": "info", "logger": a.cfg.name, "data": strings.TrimSuffix(line, "\n"),
			})
		})
	default:
		return mcp.NewToolResultError("unknown kind " + kind), nil
	}
	if err != nil {
		return mcp.NewToolResultError("flood: " + err.Error()), nil
	}
	return text(fmt.Sprintf("flooded %d", written)), nil
}

// rawFloodLine returns a writer of plan lines that writes each as the
// stdout message kind asks for instead (endless: the padding only, with no
// newline ever).
func rawFloodLine(kind string, write func(string) error) func(string) error {
	return func(line string) error {
		body := strings.TrimSuffix(line, "\n")
		var msg string
		switch kind {
		case "log":
			msg = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%q}}`, body)
		case "progress":
			msg = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1,"message":%q}}`, body)
		case "response":
			msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":"nobody-asked","result":{"text":%q}}`, body)
		case "listchanged":
			msg = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
		case "badjson":
			msg = "{" + body
		case "endless":
			return write(strings.Repeat("x", len(body)))
		}
		return write(msg + "\n")
	}
}

// run writes the plan's lines "flood line <i>" (padded to size, newline
// included) with write, and returns how many it wrote.
func (p floodPlan) run(write func(line string) error) (int, error) {
	start := time.Now()
	i := 0
	for p.lines == 0 || i < p.lines {
		if !p.until.IsZero() && !time.Now().Before(p.until) {
			break
		}
		if p.perSecond > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(p.perSecond))))
		}
		i++
		line := fmt.Sprintf("flood line %d", i)
		if pad := p.size - len(line) - 1; pad > 0 {
			line += strings.Repeat("x", pad)
		}
		if err := write(line + "\n"); err != nil {
			return i - 1, err
		}
	}
	return i, nil
}

// addNamedTool registers a no-argument tool that returns its own name.
func (a *app) addNamedTool(name string) {
	a.srv.AddTool(mcp.NewTool(name,
		mcp.WithDescription("Returns its own name."),
		mcp.WithReadOnlyHintAnnotation(true),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(name), nil
	})
}

// changeTools runs change, which makes mcp-go broadcast
// tools/list_changed, and waits (up to 2s) until that notification has been
// written for the caller's session, so that it precedes the tool's result.
// mcp-go only notifies initialized sessions.
func (a *app) changeTools(ctx context.Context, change func()) {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || !sess.Initialized() {
		change()
		return
	}
	_ = a.sendAndWait(ctx, listChangedJSON, func() error { change(); return nil })
}

func (a *app) progressTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	steps, err := req.RequireInt("steps")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	interval := time.Duration(req.GetInt("interval_ms", 0)) * time.Millisecond
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i := 1; i <= steps; i++ {
		if !a.wait(ctx, interval) {
			return a.cancelled("progress"), nil
		}
		if token == nil {
			continue
		}
		if err := a.notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token,
			"progress":      i,
			"total":         steps,
			"message":       fmt.Sprintf("step %d/%d", i, steps),
		}); err != nil {
			return mcp.NewToolResultError("notify: " + err.Error()), nil
		}
	}
	return text(fmt.Sprintf("done %d", steps)), nil
}

// wait sleeps for d and reports whether it was not cancelled first.
func (a *app) wait(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (a *app) cancelled(tool string) *mcp.CallToolResult {
	a.rec.event("cancelled %s", tool)
	fmt.Fprintf(os.Stderr, "%s cancelled\n", tool)
	return mcp.NewToolResultError("cancelled")
}

func isLogLevel(s string) bool {
	for _, l := range logLevels {
		if s == l {
			return true
		}
	}
	return false
}

// RichSchema is the input schema of schema_rich, which clients must pass on
// unchanged.
const RichSchema = `{"type":"object","$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"properties":{"mode":{"type":"string","enum":["fast","slow"]},"at":{"$ref":"#/$defs/point"},"nested":{"type":"object","properties":{"deep":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}}},"anyOf":[{"required":["mode"]},{"required":["at"]}],"description":"top-level keywords must survive"}`
