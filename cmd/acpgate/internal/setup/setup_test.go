package setup_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/secrets"

	"github.com/acpgate/acpgate/cmd/acpgate/internal/setup"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

const testKey = "sk-setup-test-4f1c9a"

// input is a file whose contents are in, as stdin.
func input(t *testing.T, in string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(in); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// options are setup.Options for a configuration file in a new directory, with
// stdin holding in and the output kept in out.
func options(t *testing.T, in string, out *bytes.Buffer) setup.Options {
	red := secrets.NewRedactor()
	return setup.Options{ConfigPath: filepath.Join(t.TempDir(), "acpgate", "config.json"), In: input(t, in), Out: red.Writer(out), Redactor: red}
}

// loaded is the model block acpgate loads from the configuration at path.
func loaded(t *testing.T, path string) config.Model {
	t.Helper()
	c, warnings, err := config.Load(path, true)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("loading %s: %v %v", path, err, warnings)
	}
	return c.Model
}

// TestRunScripted: with flags and the key on stdin, setup checks the
// endpoint and writes a configuration acpgate loads, the key in a file of
// mode 0600 that resolves to it, and the key nowhere else.
func TestRunScripted(t *testing.T) {
	t.Parallel()
	base := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList(testKey, "m1", "m2")})
	var out bytes.Buffer
	o := options(t, testKey+"\n", &out)
	o.Provider, o.BaseURL, o.Model, o.APIKeyStdin = setup.Custom, base, "m2", true
	if err := setup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(filepath.Dir(o.ConfigPath), "keys", "custom.key")
	m := loaded(t, o.ConfigPath)
	if want := (config.Model{BaseURL: base, Model: "m2", APIKey: "secret://file/" + keyFile}); !reflect.DeepEqual(m, want) {
		t.Errorf("model %+v, want %+v", m, want)
	}
	key, err := (&secrets.Resolver{Redactor: secrets.NewRedactor()}).ResolveKey(context.Background(), "apiKey", m.APIKey)
	if err != nil || key != testKey {
		t.Errorf("the key resolves to %q, %v", key, err)
	}
	if fi, err := os.Stat(keyFile); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi.Mode(), err)
	}
	data, _ := os.ReadFile(o.ConfigPath)
	if strings.Contains(string(data), testKey) || strings.Contains(out.String(), testKey) {
		t.Errorf("the key leaked:\n%s\n%s", data, out.String())
	}

	// Again without --api-key-stdin: the saved key is kept and checked.
	o2 := o
	o2.In, o2.APIKeyStdin, o2.Model, o2.Redactor = input(t, ""), false, "m1", secrets.NewRedactor()
	if err := setup.Run(context.Background(), o2); err != nil {
		t.Fatal(err)
	}
	if m := loaded(t, o.ConfigPath); m.Model != "m1" || m.APIKey != "secret://file/"+keyFile {
		t.Errorf("second run: %+v", m)
	}
}

// TestRunKeepsTheRest: an existing file keeps every other member byte for
// byte; an invalid one is an error naming it and is left as it was.
func TestRunKeepsTheRest(t *testing.T) {
	t.Parallel()
	base := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList("", "llama3")})
	var out bytes.Buffer
	o := options(t, "", &out)
	o.Provider, o.BaseURL, o.Model = "ollama", base, "llama3"
	before := "{\n  \"mcpServers\": {\"fs\": {\"command\": \"npx\",   \"args\": [\"-y\"]}},\n  \"model\": {\"model\": \"old\"},\n  \"agents\": {\"list\": [{\"id\": \"w\", \"model\": {\"model\": \"gpt-4.1\"}}]}\n}\n"
	if err := os.MkdirAll(filepath.Dir(o.ConfigPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.ConfigPath, []byte(before), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := setup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(o.ConfigPath)
	want := strings.Replace(before, `{"model": "old"}`, "{\n    \"baseUrl\": \""+base+"\",\n    \"model\": \"llama3\"\n  }", 1)
	if string(after) != want {
		t.Errorf("got\n%s\nwant\n%s", after, want)
	}
	if fi, _ := os.Stat(o.ConfigPath); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(o.ConfigPath), "keys")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a key directory without a key: %v", err)
	}

	bad := `{"limits": {"maxTools": "many"}}`
	if err := os.WriteFile(o.ConfigPath, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := setup.Run(context.Background(), o)
	var fe *config.FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), o.ConfigPath) {
		t.Errorf("invalid file: %v", err)
	}
	if got, _ := os.ReadFile(o.ConfigPath); string(got) != bad {
		t.Errorf("the invalid file was changed: %s", got)
	}
}

// TestRunFailsWritingNothing: missing flags, an unknown provider and each
// failed check are errors of their own types, and nothing is written.
func TestRunFailsWritingNothing(t *testing.T) {
	t.Parallel()
	base := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList(testKey, "m1", "m2")})
	for _, tc := range []struct {
		name  string
		in    string
		set   func(*setup.Options)
		check func(error) bool
	}{
		{"nothing given", "", func(*setup.Options) {}, func(err error) bool {
			var me *setup.MissingError
			return errors.As(err, &me) && slices.Equal(me.Flags, []string{"--provider", "--model"})
		}},
		{"no key", "", func(o *setup.Options) { o.Provider, o.Model = "openai", "gpt-4.1" }, func(err error) bool {
			var me *setup.MissingError
			return errors.As(err, &me) && slices.Equal(me.Flags, []string{"--api-key-stdin"})
		}},
		{"custom without URL", "", func(o *setup.Options) { o.Provider, o.Model = setup.Custom, "m" }, func(err error) bool {
			var me *setup.MissingError
			return errors.As(err, &me) && slices.Equal(me.Flags, []string{"--base-url"})
		}},
		{"no model: the list", testKey, func(o *setup.Options) { o.Provider, o.BaseURL, o.APIKeyStdin = setup.Custom, base, true }, func(err error) bool {
			var me *setup.MissingError
			return errors.As(err, &me) && slices.Equal(me.Models, []string{"m1", "m2"}) && strings.Contains(err.Error(), "the endpoint lists: m1, m2")
		}},
		{"unknown provider", "", func(o *setup.Options) { o.Provider = "acme" }, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), `unknown provider "acme"`)
		}},
		{"empty key", "\n", func(o *setup.Options) { o.Provider, o.BaseURL, o.Model, o.APIKeyStdin = setup.Custom, base, "m1", true }, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "--api-key-stdin")
		}},
		{"refused key", "sk-wrong\n", func(o *setup.Options) { o.Provider, o.BaseURL, o.Model, o.APIKeyStdin = setup.Custom, base, "m1", true }, func(err error) bool {
			return errors.Is(err, setup.ErrKeyRefused)
		}},
		{"wrong path", "", func(o *setup.Options) {
			o.Provider, o.BaseURL, o.Model = "ollama", strings.TrimSuffix(base, "/v1"), "m1"
		}, func(err error) bool {
			return errors.Is(err, setup.ErrWrongPath)
		}},
		{"closed port", "", func(o *setup.Options) { o.Provider, o.BaseURL, o.Model = "lmstudio", closedURL(t), "m1" }, func(err error) bool {
			return errors.Is(err, setup.ErrUnreachable)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			o := options(t, tc.in, &out)
			tc.set(&o)
			if err := setup.Run(context.Background(), o); !tc.check(err) {
				t.Fatalf("got %v (%T)", err, err)
			}
			if entries, err := os.ReadDir(filepath.Dir(filepath.Dir(o.ConfigPath))); err != nil || len(entries) != 0 {
				t.Errorf("written: %v %v", entries, err)
			}
		})
	}
}

// TestRunAsks: in a terminal, what the flags do not give is asked: the
// provider from the list, the URL, the key, then the model, narrowed by
// part of its name.
func TestRunAsks(t *testing.T) {
	t.Parallel()
	base := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList(testKey, "alpha-1", "beta-1", "beta-2")})
	var out bytes.Buffer
	custom := slices.IndexFunc(setup.Catalogue(), func(p setup.Provider) bool { return p.ID == setup.Custom }) + 1
	// An invalid choice, the custom entry, its URL, a refused key and the
	// right one, part of a model name, a number of the narrowed list.
	o := options(t, strings.Join([]string{"9", strconv.Itoa(custom), base, "sk-wrong", testKey, "beta", "2", ""}, "\n"), &out)
	o.Interactive = true
	// The local servers are not running (whatever runs on this machine).
	o.Providers = setup.Catalogue()
	for i := range o.Providers {
		if o.Providers[i].Local {
			o.Providers[i].BaseURL = closedURL(t)
		}
	}
	if err := setup.Run(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if m := loaded(t, o.ConfigPath); m.Model != "beta-2" || m.BaseURL != base {
		t.Errorf("model %+v", m)
	}
	for _, want := range []string{"Type a number from 1 to", "refused the API key", "Which model should be the default? (3 listed)", "  1) beta-1\n  2) beta-2\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the dialogue lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), testKey) {
		t.Errorf("the key was shown:\n%s", out.String())
	}
}

// TestRunRelativeConfig: a relative --config gets a key reference with an
// absolute path, which resolves from any directory.
func TestRunRelativeConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	base := endpoint(t, map[string]http.HandlerFunc{"/v1/models": modelList(testKey, "m1")})
	var out bytes.Buffer
	o := options(t, testKey, &out)
	o.ConfigPath, o.Provider, o.BaseURL, o.Model, o.APIKeyStdin = "config.json", setup.Custom, base, "m1", true
	if err := setup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if m := loaded(t, filepath.Join(dir, "config.json")); m.APIKey != "secret://file/"+filepath.Join(dir, "keys", "custom.key") {
		t.Errorf("apiKey %q", m.APIKey)
	}
}

// TestRunAnthropic: the Anthropic entry checks the key against its model
// list and writes provider "anthropic" with the key in keys/anthropic.key;
// acpgate loads it as an Anthropic model.
func TestRunAnthropic(t *testing.T) {
	t.Parallel()
	srv := fakeanthropic.Start()
	defer srv.Close()
	srv.RequireKey(testKey)
	srv.SetModels(fakeanthropic.Model{ID: "claude-a"}, fakeanthropic.Model{ID: "claude-b"})
	var out bytes.Buffer
	o := options(t, testKey+"\n", &out)
	o.Provider, o.BaseURL, o.Model, o.APIKeyStdin = "anthropic", srv.URL, "claude-b", true
	if err := setup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	m := loaded(t, o.ConfigPath)
	keyFile := filepath.Join(filepath.Dir(o.ConfigPath), "keys", "anthropic.key")
	if want := (config.Model{Provider: config.ProviderAnthropic, BaseURL: srv.URL, Model: "claude-b", APIKey: "secret://file/" + keyFile}); !reflect.DeepEqual(m, want) {
		t.Errorf("model %+v, want %+v", m, want)
	}
	if strings.Contains(out.String(), testKey) || !strings.Contains(out.String(), "Set up Anthropic, model claude-b") {
		t.Errorf("output:\n%s", out.String())
	}
	var show bytes.Buffer
	if err := setup.Show(o.ConfigPath, &show, func(v string) string { return map[string]string{"ANTHROPIC_API_KEY": "x"}[v] }); err != nil || !strings.Contains(show.String(), "Provider:      Anthropic") || !strings.Contains(show.String(), "ANTHROPIC_API_KEY") {
		t.Errorf("show: %v\n%s", err, show.String())
	}
	// A refused key is its own error, and nothing changes.
	o2 := options(t, "sk-wrong\n", &out)
	o2.Provider, o2.BaseURL, o2.Model, o2.APIKeyStdin = "anthropic", srv.URL, "claude-b", true
	if err := setup.Run(context.Background(), o2); !errors.Is(err, setup.ErrKeyRefused) {
		t.Errorf("a wrong key: %v", err)
	}
}
