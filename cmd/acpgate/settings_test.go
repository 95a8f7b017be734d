package main_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// newSession opens a session with no client servers, in profile (none if
// "").
func newSession(t *testing.T, a *agent, profile string) acpsdk.SessionId {
	t.Helper()
	return openSession(t, a, profile).SessionId
}

// openSession is newSession returning the whole answer.
func openSession(t *testing.T, a *agent, profile string) acpsdk.NewSessionResponse {
	t.Helper()
	req := acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}
	if profile != "" {
		req.Meta = map[string]any{"profile": profile}
	}
	resp, err := a.conn.NewSession(ctx30(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// modelOf prompts session sid and returns the model name and the X-Profile
// header of the request the fake model received for it.
func modelOf(t *testing.T, a *agent, llm *fakellm.Server, sid acpsdk.SessionId) (model, header string) {
	t.Helper()
	before := len(llm.Requests())
	prompt(t, a, sid, "which model are you?")
	reqs := llm.Requests()
	if len(reqs) != before+1 {
		t.Fatalf("%d model requests for one prompt", len(reqs)-before)
	}
	return reqs[before].Model, reqs[before].Header.Get("X-Profile")
}

// TestProfileModel: a session of a profile uses the profile's model
// settings (name and headers), the others the file's; flags override both.
func TestProfileModel(t *testing.T) {
	t.Parallel()
	turns := make([]fakellm.Turn, 8)
	for i := range turns {
		turns[i] = fakellm.Turn{Text: "ok"}
	}
	llm := fakellm.Start(turns...)
	defer llm.Close()
	cfg := writeConfig(t, `{
  "model": {"baseUrl": "`+llm.URL+`", "model": "default-model", "headers": {"X-Profile": "none"}},
  "agents": {"list": [
    {"id": "research", "model": {"model": "research-model", "headers": {"X-Profile": "research"}}},
    {"id": "plain"}
  ]}
}`)
	a := startAgent(t, t.TempDir(), "--config", cfg)
	for _, tc := range []struct{ profile, model, header string }{
		{"research", "research-model", "research"},
		{"", "default-model", "none"},
		{"plain", "default-model", "none"},
		{"research", "research-model", "research"}, // the cached provider
	} {
		if model, header := modelOf(t, a, llm, newSession(t, a, tc.profile)); model != tc.model || header != tc.header {
			t.Errorf("profile %q: model %q, X-Profile %q; want %q, %q", tc.profile, model, header, tc.model, tc.header)
		}
	}

	// Flags and environment win over the profile and the file.
	b := startAgent(t, t.TempDir(), "--config", cfg, "--model", "flag-model")
	for _, profile := range []string{"research", ""} {
		if model, _ := modelOf(t, b, llm, newSession(t, b, profile)); model != "flag-model" {
			t.Errorf("profile %q with --model: model %q, want flag-model", profile, model)
		}
	}
}

// TestProfileModelBadSecret: a model API key that does not resolve fails
// that profile's prompts with the reason, not the agent or other profiles.
func TestProfileModelBadSecret(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "fine"})
	defer llm.Close()
	cfg := writeConfig(t, `{
  "model": {"baseUrl": "`+llm.URL+`", "model": "default-model"},
  "agents": {"list": [{"id": "broken", "model": {"apiKey": "secret://env/ACPGATE_E2E_NO_SUCH_KEY"}}]}
}`)
	// The environment's OPENAI_API_KEY would override the profile's key.
	a := startAgentEnv(t, t.TempDir(), []string{"OPENAI_API_KEY="}, "--config", cfg)
	sid := newSession(t, a, "broken")
	before := len(a.client.all())
	prompt(t, a, sid, "hello")
	if text := agentText(a.client.all()[before:]); !strings.Contains(text, `profile "broken"`) || !strings.Contains(text, "ACPGATE_E2E_NO_SUCH_KEY") {
		t.Errorf("prompt of the broken profile said %q", text)
	}
	if model, _ := modelOf(t, a, llm, newSession(t, a, "")); model != "default-model" {
		t.Errorf("default session: model %q", model)
	}
}

// TestHotReloadModel: a model change in the file applies to the next
// session/new; open sessions keep theirs until /reload.
func TestHotReloadModel(t *testing.T) {
	t.Parallel()
	turns := make([]fakellm.Turn, 5)
	for i := range turns {
		turns[i] = fakellm.Turn{Text: "ok"}
	}
	llm := fakellm.Start(turns...)
	defer llm.Close()
	body := `{"model": {"baseUrl": "` + llm.URL + `", "model": "MODEL"}}`
	cfg := writeConfig(t, strings.ReplaceAll(body, "MODEL", "model-one"))
	a := startAgent(t, t.TempDir(), "--config", cfg)
	old := newSession(t, a, "")
	if model, _ := modelOf(t, a, llm, old); model != "model-one" {
		t.Fatalf("before the change: %q", model)
	}
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(body, "MODEL", "model-two")), 0o600); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "the reload", func() bool { return strings.Contains(a.stderr.String(), "configuration reloaded") })
	if model, _ := modelOf(t, a, llm, newSession(t, a, "")); model != "model-two" {
		t.Errorf("new session after the change: %q, want model-two", model)
	}
	if model, _ := modelOf(t, a, llm, old); model != "model-one" {
		t.Errorf("open session after the change: %q, want model-one until /reload", model)
	}
	prompt(t, a, old, "/reload")
	if model, _ := modelOf(t, a, llm, old); model != "model-two" {
		t.Errorf("open session after /reload: %q, want model-two", model)
	}
}

// TestHotReloadSharedServers: on a change of the file, a shared server
// whose spec changed is restarted with the new spec, an unchanged one keeps
// running, and one added is started.
func TestHotReloadSharedServers(t *testing.T) {
	t.Parallel()
	keepRec, keepRecord := recordFile(t)
	tunedRec, tunedRecord := recordFile(t)
	body := `{"mcpServers": {
  "keep": {"command": "SERVER", "args": ["-name", "keep", "-record", "` + keepRec + `"], "shared": true},
  "tuned": {"command": "SERVER", "args": ["-name", "tuned", "-record", "` + tunedRec + `"], "env": {"LEVEL": "VALUE"}, "shared": true}EXTRA}}`
	edit := func(level, extra string) string {
		return strings.NewReplacer("VALUE", level, "EXTRA", extra, "SERVER", serverBin).Replace(body)
	}
	cfg := writeConfig(t, edit("one", ""))
	a := startAgent(t, t.TempDir(), "--config", cfg)
	sid := newSession(t, a, "")
	a.client.answer = func(acpsdk.RequestPermissionRequest) string { return "allow_once" }
	envOf := func() string {
		t.Helper()
		before := len(a.client.all())
		prompt(t, a, sid, `/call mcp__tuned__env {"name":"LEVEL"}`)
		return mustJSON(a.client.all()[before:])
	}
	if got := envOf(); !strings.Contains(got, `"text":"one"`) {
		t.Fatalf("LEVEL before: %s", got)
	}
	// /call waits for its own server only: keep may still be starting.
	testbin.WaitFor(t, "keep to start", func() bool { return len(pids(keepRecord())) > 0 })
	keepPIDs, tunedPIDs := pids(keepRecord()), pids(tunedRecord())
	if len(keepPIDs) != 1 || len(tunedPIDs) != 1 {
		t.Fatalf("started: keep %v, tuned %v", keepPIDs, tunedPIDs)
	}

	addedRec, addedRecord := recordFile(t)
	added := `, "added": {"command": "` + serverBin + `", "args": ["-name", "added", "-record", "` + addedRec + `"], "shared": true}`
	if err := os.WriteFile(cfg, []byte(edit("two", added)), 0o600); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "tuned to restart", func() bool { return len(pids(tunedRecord())) == 2 })
	testbin.WaitFor(t, "the old tuned to exit", func() bool { return !testbin.Alive(tunedPIDs[0]) })
	if got := pids(keepRecord()); !slices.Equal(got, keepPIDs) || !testbin.Alive(keepPIDs[0]) {
		t.Errorf("the unchanged shared server was restarted or stopped: %v -> %v", keepPIDs, got)
	}
	testbin.WaitFor(t, "the added server to start", func() bool { return len(pids(addedRecord())) == 1 })
	// The restarted server joins the session's tools once it has
	// initialized and listed them.
	testbin.WaitFor(t, "tuned to initialize again", func() bool { return strings.Count(tunedRecord(), "initialized\n") == 2 })
	testbin.WaitFor(t, "tuned to answer with the new spec", func() bool { return strings.Contains(envOf(), `"text":"two"`) })
}

// TestServersSeeTheBinaryVersion: --version prints the version and the
// commit (a test build is not stamped: the toolchain's revision, else
// "unknown"), and MCP servers get that version in initialize's
// clientInfo.
func TestServersSeeTheBinaryVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(agentBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^acpgate (\S+) \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)\n$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("--version printed %q", out)
	}
	version := m[1]
	rec, record := recordFile(t)
	a := startAgent(t, t.TempDir())
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{stdioServer("v", "-record", rec)}})
	if err != nil {
		t.Fatal(err)
	}
	a.serversUntil(t, resp, "the server ready", settled)
	if want := "client acpgate " + version; !slices.Contains(strings.Split(record(), "\n"), want) {
		t.Errorf("record:\n%s\nwant the line %q", record(), want)
	}
}
