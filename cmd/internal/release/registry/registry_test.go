package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acpgate/acpgate/cmd/internal/release/dist"
	"github.com/acpgate/acpgate/cmd/internal/release/registry"
)

const schemaURL = "https://cdn.agentclientprotocol.com/registry/v1/latest/agent.schema.json"

// schema compiles the registry's vendored agent.schema.json (see
// testdata/README.md), asserting formats (uri) too.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/agent.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validate checks the agent.json of the entry folder dir against s.
func validate(t *testing.T, s *jsonschema.Schema, dir string) error {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, registry.AgentFile))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(doc)
}

// releaseEntry makes a release of version 1.2.3 with tiny fake binaries
// and returns its output directory and its entry folder.
func releaseEntry(t *testing.T) (out, dir string) {
	t.Helper()
	out = t.TempDir()
	_, err := dist.Build(t.Context(), &dist.Options{
		Version:     "1.2.3",
		Time:        time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		URLTemplate: "https://github.com/acpgate/acpgate/releases/download/v{version}/{file}",
		Out:         out,
		Docs:        []string{"LICENSE"},
		DocsDir:     "../../../..",
		Icon:        "../../../../docs/icon.svg",
		Entry: registry.Entry{
			ID: "acpgate", Name: "acpgate", Description: "An agent", Repository: "https://github.com/acpgate/acpgate",
			Authors: []string{"The acpgate authors"}, License: "Apache-2.0",
		},
		Build: func(_ context.Context, p dist.Platform, path string) error {
			return os.WriteFile(path, []byte(p.Name), 0o755)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, filepath.Join(out, "registry", "acpgate")
}

// TestReleasedEntryIsValid: the entry a release writes passes the
// registry's schema and its other rules, and names each archive with its
// URL, sha256 and command.
func TestReleasedEntryIsValid(t *testing.T) {
	t.Parallel()
	out, dir := releaseEntry(t)
	if err := validate(t, schema(t), dir); err != nil {
		t.Errorf("schema: %v", err)
	}
	if err := errors.Join(registry.Check(dir), registry.CheckArchives(dir, out)); err != nil {
		t.Errorf("rules: %v", err)
	}
	e, err := registry.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != "acpgate" || e.Version != "1.2.3" || e.License != "Apache-2.0" || len(e.Distribution.Binary) != 6 {
		t.Errorf("entry: %+v", e)
	}
	for _, p := range dist.Platforms() {
		want := "https://github.com/acpgate/acpgate/releases/download/v1.2.3/" + p.Archive("1.2.3")
		if got := e.Distribution.Binary[p.Name]; got.Archive != want || got.Cmd != "./"+p.Binary() {
			t.Errorf("%s: %+v, want archive %s", p.Name, got, want)
		}
	}
	icon, err := os.ReadFile("../../../../docs/icon.svg")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, registry.IconFile)); !bytes.Equal(got, icon) {
		t.Error("icon.svg is not docs/icon.svg")
	}
}

// brokenEntryCases are entries each breaking one rule: a change to the
// released agent.json (as JSON) or a replacement icon.svg, whether the
// registry's schema rejects it too, and the errors Check and CheckArchives
// return (an archive URL that names no file of the release has no sha256
// to compare).
var brokenEntryCases = []struct {
	name   string
	entry  func(e map[string]any)
	icon   string
	schema bool  // the schema rejects it
	want   error // what Check or CheckArchives returns
	also   error // another error they return, or nil
}{
	{name: "id not the folder", entry: func(e map[string]any) { e["id"] = "acpgate-two" }, want: registry.ErrID},
	{name: "id uppercase", entry: func(e map[string]any) { e["id"] = "ACPgate" }, schema: true, want: registry.ErrID},
	{name: "no name", entry: func(e map[string]any) { delete(e, "name") }, schema: true, want: registry.ErrRequired},
	{name: "repository not a URL", entry: func(e map[string]any) { e["repository"] = "acpgate/acpgate" }, schema: true, want: registry.ErrRepository},
	{name: "version x.y", entry: func(e map[string]any) { e["version"] = "1.2" }, schema: true, want: registry.ErrVersion, also: registry.ErrArchive},
	{name: "latest URL", entry: func(e map[string]any) {
		target(e, "linux-x86_64")["archive"] = "https://github.com/acpgate/acpgate/releases/latest/download/acpgate-1.2.3-linux-x86_64.tar.gz"
	}, want: registry.ErrArchive},
	{name: "URL of another version", entry: func(e map[string]any) {
		target(e, "darwin-aarch64")["archive"] = "https://github.com/acpgate/acpgate/releases/download/v1.2.4/acpgate-1.2.3-darwin-aarch64.tar.gz"
	}, want: registry.ErrArchive},
	{name: "URL without the version", entry: func(e map[string]any) {
		target(e, "darwin-aarch64")["archive"] = "https://example.com/acpgate-darwin-aarch64.tar.gz"
	}, want: registry.ErrArchive, also: registry.ErrSHA256},
	{name: "installer", entry: func(e map[string]any) {
		target(e, "linux-x86_64")["archive"] = "https://github.com/acpgate/acpgate/releases/download/v1.2.3/acpgate-1.2.3.deb"
	}, want: registry.ErrArchive, also: registry.ErrSHA256},
	{name: "URL not a URL", entry: func(e map[string]any) { target(e, "linux-aarch64")["archive"] = "acpgate-1.2.3.tar.gz" }, schema: true, want: registry.ErrArchive, also: registry.ErrSHA256},
	{name: "unknown platform", entry: func(e map[string]any) {
		bin := e["distribution"].(map[string]any)["binary"].(map[string]any)
		bin["plan9-x86_64"] = bin["linux-x86_64"]
	}, schema: true, want: registry.ErrPlatform},
	{name: "no windows", entry: func(e map[string]any) {
		bin := e["distribution"].(map[string]any)["binary"].(map[string]any)
		delete(bin, "windows-x86_64")
		delete(bin, "windows-aarch64")
	}, want: registry.ErrPlatform},
	{name: "no cmd", entry: func(e map[string]any) { delete(target(e, "windows-x86_64"), "cmd") }, schema: true, want: registry.ErrRequired},
	{name: "wrong sha256", entry: func(e map[string]any) {
		target(e, "linux-x86_64")["sha256"] = strings.Repeat("ab", 32)
	}, want: registry.ErrSHA256},
	{name: "sha256 not hex", entry: func(e map[string]any) { target(e, "linux-x86_64")["sha256"] = "xyz" }, schema: true, want: registry.ErrSHA256},
	{name: "coloured fill", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path fill="#ff0000" d="M0 0h16v16z"/><path stroke="currentColor" d="M0 0h1"/></svg>`, want: registry.ErrIcon},
	{name: "coloured stroke in style", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><path style="stroke-width:1; stroke: red" d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "coloured <style> rule", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><style>path { fill: blue }</style><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "no currentColor", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="none"><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "not square", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="12" viewBox="0 0 16 12" fill="currentColor"><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "viewBox not square", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 16" fill="currentColor"><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "24×24", icon: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="currentColor"><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "no size", icon: `<svg xmlns="http://www.w3.org/2000/svg" fill="currentColor"><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "comment", icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" fill="currentColor"><!-- a gate --><path d="M0 0h16"/></svg>`, want: registry.ErrIcon},
	{name: "not svg", icon: `<html><body fill="currentColor"/></html>`, want: registry.ErrIcon},
	{name: "not XML", icon: `<svg width="16" height="16"><path></svg>`, want: registry.ErrIcon},
}

// ruleErrors are the errors of the rules Check and CheckArchives apply.
var ruleErrors = []error{registry.ErrRequired, registry.ErrID, registry.ErrRepository, registry.ErrVersion, registry.ErrPlatform, registry.ErrArchive, registry.ErrSHA256, registry.ErrIcon}

// TestBrokenEntriesFail: each broken entry fails the checks with its
// error and no other, and the schema when it should.
func TestBrokenEntriesFail(t *testing.T) {
	t.Parallel()
	out, released := releaseEntry(t)
	s := schema(t)
	for _, tc := range brokenEntryCases {
		dir := filepath.Join(t.TempDir(), "acpgate")
		copyEntry(t, released, dir, tc.entry, tc.icon)
		err := validate(t, s, dir)
		if tc.schema != (err != nil) {
			t.Errorf("%s: the schema says %v, want a rejection: %v", tc.name, err, tc.schema)
		}
		err = errors.Join(registry.Check(dir), registry.CheckArchives(dir, out))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		for _, other := range ruleErrors {
			if other != tc.want && other != tc.also && errors.Is(err, other) {
				t.Errorf("%s: %v, want only %v and %v", tc.name, err, tc.want, tc.also)
			}
		}
	}
}

// TestIconsAccepted: icons the registry accepts.
func TestIconsAccepted(t *testing.T) {
	t.Parallel()
	for _, icon := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg" width="16px" height="16px"><path fill="CurrentColor" stroke="inherit" d="M0 0h16"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path style="fill: currentColor; stroke:none" d="M0 0h16"/></svg>`,
		`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><style>.a{stroke:currentColor;stroke-width:2}</style><path class="a" d="M0 0h16"/></svg>`,
	} {
		if err := registry.CheckIcon([]byte(icon)); err != nil {
			t.Errorf("%s: %v", icon, err)
		}
	}
}

// target is the binary target of platform in the entry e.
func target(e map[string]any, platform string) map[string]any {
	return e["distribution"].(map[string]any)["binary"].(map[string]any)[platform].(map[string]any)
}

// copyEntry copies the entry folder from into to, its agent.json changed
// by change (if not nil), its icon.svg replaced by icon (if not empty).
func copyEntry(t *testing.T, from, to string, change func(map[string]any), icon string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(from, registry.AgentFile))
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		var e map[string]any
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		change(e)
		if data, err = json.Marshal(e); err != nil {
			t.Fatal(err)
		}
	}
	svg := []byte(icon)
	if icon == "" {
		if svg, err = os.ReadFile(filepath.Join(from, registry.IconFile)); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{registry.AgentFile: data, registry.IconFile: svg} {
		if err := os.WriteFile(filepath.Join(to, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
