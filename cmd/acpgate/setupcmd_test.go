package main_test

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

const setupKey = "sk-e2e-setup-7d3b21"

// runSetup runs `acpgate setup args...` with stdin and returns its exit
// code and output.
func runSetup(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(agentBin, append([]string{"setup"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestSetupScripted: `acpgate setup` with flags and the key on stdin
// checks the endpoint, changes only the model block of an existing
// configuration, keeps the key in a file of mode 0600 and nowhere else,
// and acpgate then answers a prompt with that model and key. A refused
// key, a wrong path and a closed port each fail with their own message,
// writing nothing; --show prints the setup without the key.
func TestSetupScripted(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start(fakellm.Turn{Text: "answered through the configured endpoint"})
	defer llm.Close()
	llm.SetModels("other-model", "fake-model")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.json")
	prefix := "{\n  \"mcpServers\": {\"calc\": {\"command\": \"" + serverBin + "\", \"args\": [\"-name\", \"calc\"]}},\n  \"model\": "
	suffix := ",\n  \"agents\":   {\"list\": [{\"id\": \"work\", \"model\": {\"model\": \"gpt-4.1\"}}]}\n}\n"
	before := prefix + `{"model": "old"}` + suffix
	if err := os.WriteFile(cfgPath, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}

	// Failures first: each its own message, nothing written.
	refusing := fakellm.Start()
	defer refusing.Close()
	refusing.FailModels(401)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close()
	for _, tc := range []struct{ url, says string }{
		{refusing.URL, "the endpoint refused the API key (401 Unauthorized): check the key"},
		{strings.TrimSuffix(llm.URL, "/v1"), "not an OpenAI-compatible model list (404 Not Found)"},
		{closed, "cannot reach the endpoint"},
	} {
		code, stdout, stderr := runSetup(t, setupKey+"\n", "--config", cfgPath, "--provider", "custom", "--base-url", tc.url, "--model", "fake-model", "--api-key-stdin")
		if code != 1 || !strings.Contains(stderr, tc.says) || strings.Contains(stdout+stderr, setupKey) {
			t.Errorf("%s: exit %d\n%s%s", tc.url, code, stdout, stderr)
		}
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != before {
		t.Fatalf("a failed setup changed the file:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(dir, "keys")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed setup wrote a key: %v", err)
	}

	code, stdout, stderr := runSetup(t, setupKey+"\n", "--config", cfgPath, "--provider", "custom", "--base-url", llm.URL, "--model", "fake-model", "--api-key-stdin")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	after, _ := os.ReadFile(cfgPath)
	if !strings.HasPrefix(string(after), prefix) || !strings.HasSuffix(string(after), suffix) {
		t.Errorf("the rest of the file changed:\n%s", after)
	}
	keyFile := filepath.Join(dir, "keys", "custom.key")
	key, err := os.ReadFile(keyFile)
	if fi, _ := os.Stat(keyFile); err != nil || strings.TrimSpace(string(key)) != setupKey || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %q %v", key, err)
	}
	if strings.Contains(string(after)+stdout+stderr, setupKey) {
		t.Errorf("the key leaked:\n%s\n%s%s", after, stdout, stderr)
	}
	c, _, err := config.Load(cfgPath, true)
	if err != nil || c.Model.Model != "fake-model" || c.Model.BaseURL != llm.URL || c.Model.APIKey != "secret://file/"+keyFile {
		t.Fatalf("loaded %+v, %v", c, err)
	}

	if code, stdout, _ := runSetup(t, "", "--show", "--config", cfgPath); code != 0 || !strings.Contains(stdout, "Model:         fake-model") || !strings.Contains(stdout, "secret://file/"+keyFile) || strings.Contains(stdout, setupKey) {
		t.Errorf("--show: exit %d\n%s", code, stdout)
	}

	// acpgate with that configuration (and no key in its environment).
	a := startAgentEnv(t, t.TempDir(), []string{"OPENAI_API_KEY="}, "--config", cfgPath)
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, a, resp.SessionId, "hello")
	if text := agentText(a.client.all()); !strings.Contains(text, "answered through the configured endpoint") {
		t.Errorf("said %q", text)
	}
	if reqs := llm.Requests(); len(reqs) != 1 || reqs[0].Model != "fake-model" || reqs[0].Header.Get("Authorization") != "Bearer "+setupKey {
		t.Errorf("the model was asked %+v", reqs)
	}
}

// TestSetupMissingFlags: without a terminal, missing values are an error
// naming the flags; after the agent's own flags (as terminal auth appends
// it), setup uses their --config.
func TestSetupMissingFlags(t *testing.T) {
	t.Parallel()
	code, _, stderr := runSetup(t, "", "--provider", "openai")
	if code != 1 || !strings.Contains(stderr, "missing --api-key-stdin, --model (stdin is not a terminal") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	cmd := exec.Command(agentBin, "--config", cfgPath, "--log-level", "debug", "setup", "--show")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Configuration: "+cfgPath) || !strings.Contains(string(out), "No model is set up") {
		t.Errorf("setup after the agent's flags: %v\n%s", err, out)
	}
}

// TestSetupKeyWithControlCharacter: a key with a CR pasted into it is
// refused as the key's fault, naming the character, before any request
// (which would fail as a transport error blaming the URL).
func TestSetupKeyWithControlCharacter(t *testing.T) {
	t.Parallel()
	llm := fakellm.Start()
	defer llm.Close()
	llm.SetModels("fake-model")
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	code, stdout, stderr := runSetup(t, "sk-abc\rdef\n", "--config", cfgPath, "--provider", "custom", "--base-url", llm.URL, "--model", "fake-model", "--api-key-stdin")
	if code != 1 || !strings.Contains(stderr, "the API key holds a control character (U+000D at byte 7)") || strings.Contains(stderr, "URL") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if len(llm.Requests()) != 0 {
		t.Error("the endpoint was asked with the key")
	}
	if _, err := os.Stat(cfgPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused setup wrote the configuration: %v", err)
	}
}
