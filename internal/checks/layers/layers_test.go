package layers

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCheck: the checks find every broken rule of hand-made import and
// test maps, and nothing else: an upward import, an import within a layer
// to the same level, a package the table lacks; tests reaching a higher
// layer, but not test support, their own sub-packages or testReaches.
func TestCheck(t *testing.T) {
	imports := map[string][]string{
		"acp":                       {"gateway", "bridge", "mcpclient", "session", "internal/inputs/config", "acp/jsonrpc"},
		"acp/jsonrpc":               {"internal/base/ratelimit"},
		"gateway":                   {"gateway/toolsearch", "mcpclient"},
		"gateway/sysprompt":         {"gateway", "gateway/workspace", "internal/base/safefile"},
		"bridge":                    {"gateway", "mcpclient", "internal/testsupport/testbin"},
		"internal/newthing":         {"internal/base/safefile"},
		"cmd/internal/release/dist": {"cmd/internal/release/registry"},
	}
	want := []string{
		"acp/jsonrpc (leaf) imports internal/base/ratelimit (leaf): an import points to a lower rank",
		"bridge (bridge) imports internal/testsupport/testbin (support.1): an import points to a lower rank",
		"gateway (core) imports mcpclient (client): an import points to a lower rank",
		"gateway/sysprompt (client) imports gateway/workspace (client): an import points to a lower rank",
		"internal/newthing has no rank: add it to ranks (and to docs/architecture.md)",
	}
	if got := sorted(checkImports(imports)); !slices.Equal(got, want) {
		t.Errorf("checkImports found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tests := map[string][]string{
		"gateway":                       {"gateway/openaicompat", "internal/testsupport/fake/fakellm", "gateway/toolsearch", "mcpclient"},
		"mcpclient/oauth":               {"internal/inputs/secrets", "internal/testsupport/oauthtest", "internal/testsupport/testbin"},
		"mcpclient/lines":               {"mcpclient/proctree", "mcpclient"},
		"cmd/internal/release/registry": {"cmd/internal/release/dist"},
	}
	wantTests := []string{
		"gateway (core): its tests reach mcpclient (client), of a higher layer",
		"mcpclient/lines (leaf): its tests reach mcpclient (client), of a higher layer",
	}
	if got := sorted(checkTests(tests)); !slices.Equal(got, wantTests) {
		t.Errorf("checkTests found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantTests, "\n"))
	}
}

// sorted returns lines sorted.
func sorted(lines []string) []string {
	slices.Sort(lines)
	return lines
}

// goList runs the go command in dir with args and returns its output.
func goList(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// module returns the module's path and root directory.
func module(t *testing.T) (modPath, root string) {
	t.Helper()
	f := strings.Fields(string(goList(t, "", nil, "-m", "-f", "{{.Path}} {{.Dir}}")))
	if len(f) != 2 {
		t.Fatalf("go list -m: %q", f)
	}
	return f[0], f[1]
}

// moduleDeps returns, for goos, relative to the module root and the
// module's own only: the packages' direct imports, or with forTests, for
// each package that has tests, what its test binary depends on, directly
// or not.
func moduleDeps(t *testing.T, goos string, forTests bool) map[string][]string {
	t.Helper()
	modPath, root := module(t)
	args := []string{"-json=ImportPath,Imports"}
	if forTests {
		args = []string{"-json=ImportPath,Deps", "-test"}
	}
	out := goList(t, root, []string{"GOOS=" + goos, "CGO_ENABLED=0"}, append(args, "./...")...)
	rel := func(p string) (string, bool) {
		p, _, _ = strings.Cut(p, " ") // "p [q.test]": p as recompiled for q's test
		if p == modPath {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, modPath+"/")
		return r, ok
	}
	deps := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := p.ImportPath
		if forTests {
			var ok bool
			if pkg, ok = strings.CutSuffix(pkg, ".test"); !ok {
				continue // the package itself, or its variants: in its test binary's deps
			}
		}
		pkg, ok := rel(pkg)
		if !ok {
			continue
		}
		ds := []string{}
		for _, d := range append(p.Imports, p.Deps...) {
			if r, ok := rel(d); ok && !slices.Contains(ds, r) {
				ds = append(ds, r)
			}
		}
		deps[pkg] = ds
	}
	return deps
}

// TestLayers: the module's packages import only packages of a lower
// rank, each has one, and their tests reach no higher layer, on every
// system acpgate builds for. The listings are first checked to be real
// (acp imports the layers below it, every ranked package is there), so
// that a listing that went wrong, or a rank left for a package that is
// gone, cannot pass.
func TestLayers(t *testing.T) {
	listed := map[string]bool{} // on any system (workspacetest is unix only)
	for _, goos := range []string{"linux", "darwin", "windows"} {
		imports := moduleDeps(t, goos, false)
		for pkg := range imports {
			listed[pkg] = true
		}
		for _, layer := range []string{"gateway", "bridge", "mcpclient", "session"} {
			if !slices.Contains(imports["acp"], layer) {
				t.Fatalf("%s: acp does not import %s: the listing is wrong: %v", goos, layer, imports["acp"])
			}
		}
		for _, v := range sorted(checkImports(imports)) {
			t.Errorf("%s, code: %s", goos, v)
		}
		for _, v := range sorted(checkTests(moduleDeps(t, goos, true))) {
			t.Errorf("%s, tests: %s", goos, v)
		}
	}
	for pkg := range ranks {
		if !listed[pkg] {
			t.Errorf("ranks has %s, which the module does not have", pkg)
		}
	}
}

// TestArchitectureDoc: docs/architecture.md's package tables (under
// "## Packages") list every ranked package once, with its rank.
func TestArchitectureDoc(t *testing.T) {
	_, root := module(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, packages, ok := strings.Cut(string(doc), "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md: no "## Packages" section`)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|.*\\| ([a-z]+(?:\\.[0-9]+)?) \\|$")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(packages, -1) {
		if _, dup := documented[m[1]]; dup {
			t.Errorf("docs/architecture.md lists %s twice", m[1])
		}
		documented[m[1]] = m[2]
	}
	for pkg, r := range ranks {
		if got, ok := documented[pkg]; !ok {
			t.Errorf("docs/architecture.md does not list %s (rank %s)", pkg, r)
		} else if got != r.String() {
			t.Errorf("docs/architecture.md gives %s the rank %s; ranks has %s", pkg, got, r)
		}
	}
	for pkg := range documented {
		if _, ok := ranks[pkg]; !ok {
			t.Errorf("docs/architecture.md lists %s, which ranks lacks", pkg)
		}
	}
}
