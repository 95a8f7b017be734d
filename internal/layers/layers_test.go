package layers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// A rule forbids the packages under from to depend on a package under
// any of not. Paths are relative to the module root; a prefix names the
// package of that path and every package beneath it.
type rule struct {
	from string
	not  []string
	why  string
}

// rules are DESIGN's layering (see the package comment).
var rules = []rule{
	{"gateway", []string{"mcpclient", "bridge", "acp", "session"}, "gateway knows nothing of MCP, ACP or sessions"},
	{"mcpclient", []string{"acp", "gateway", "bridge", "session"}, "mcpclient knows nothing of ACP, models or sessions"},
	{"bridge", []string{"acp"}, "bridge knows nothing of ACP"},
	{"session", []string{"acp"}, "session knows nothing of ACP"},
	{"acp/jsonrpc", []string{"acp", "bridge", "cmd", "gateway", "internal", "mcpclient", "session", "testdata"},
		"acp/jsonrpc, a JSON-RPC connection, imports nothing of the module"},
}

// testSupport are the prefixes of the packages only tests may import;
// a package named ...test (workspacetest, oauthtest) is test support too.
var testSupport = []string{"internal/testsupport", "internal/fake", "internal/acpschema", "testdata"}

// under reports whether package p is prefix or beneath it.
func under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// isTestSupport reports whether only tests may import package p.
func isTestSupport(p string) bool {
	for _, prefix := range testSupport {
		if under(p, prefix) {
			return true
		}
	}
	return strings.HasSuffix(path.Base(p), "test")
}

// check returns the dependencies in deps (package → the module's
// packages it depends on, directly or not; all relative to the module
// root) that break a rule, one line each, sorted. forTests says deps are
// test binaries': the test-support rule does not apply to them.
func check(deps map[string][]string, forTests bool) []string {
	var out []string
	for pkg, ds := range deps {
		for _, d := range ds {
			// A package's own test package is itself, and tests may use
			// test support (what that reaches is in ds on its own).
			self := d == pkg || d == pkg+"_test"
			for _, r := range rules {
				if self || forTests && isTestSupport(d) {
					break
				}
				if !under(pkg, r.from) {
					continue
				}
				for _, not := range r.not {
					if under(d, not) {
						out = append(out, fmt.Sprintf("%s depends on %s: %s", pkg, d, r.why))
					}
				}
			}
			if !forTests && isTestSupport(d) && !isTestSupport(pkg) {
				out = append(out, fmt.Sprintf("%s depends on %s: only tests may import test support", pkg, d))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestCheck: the checker finds every broken rule of a hand-made
// dependency map, and nothing else: allowed imports, packages whose
// names merely start like a layer's, and, for tests, test support.
func TestCheck(t *testing.T) {
	deps := map[string][]string{
		"acp":                             {"gateway", "bridge", "mcpclient", "session", "internal/config"},
		"acp/jsonrpc":                     {"internal/ratelimit"},
		"acp/jsonrpcx":                    {"internal/ratelimit"},
		"gateway":                         {"gateway/toolsearch"},
		"gateway/sysprompt":               {"gateway", "bridge", "internal/safefile"},
		"gateway/workspace":               {"internal/fake/fakellm"},
		"gateway/workspace/workspacetest": {"gateway", "internal/testsupport/testbin"},
		"gatewayx":                        {"acp"},
		"mcpclient":                       {"mcpclient/oauth", "session"},
		"mcpclient/oauth":                 {"gateway/plan", "internal/secrets"},
		"bridge":                          {"gateway", "mcpclient", "acp/jsonrpc", "sessionx"},
		"session":                         {"internal/atomicfile", "acp/config"},
		"cmd/acpgate":                     {"acp", "mcpclient/oauth/oauthtest", "testdata/fakemcp"},
		"internal/testsupport/harness":    {"acp", "internal/fake/fakellm"},
	}
	want := []string{
		"acp/jsonrpc depends on internal/ratelimit: acp/jsonrpc, a JSON-RPC connection, imports nothing of the module",
		"bridge depends on acp/jsonrpc: bridge knows nothing of ACP",
		"cmd/acpgate depends on mcpclient/oauth/oauthtest: only tests may import test support",
		"cmd/acpgate depends on testdata/fakemcp: only tests may import test support",
		"gateway/sysprompt depends on bridge: gateway knows nothing of MCP, ACP or sessions",
		"gateway/workspace depends on internal/fake/fakellm: only tests may import test support",
		"mcpclient depends on session: mcpclient knows nothing of ACP, models or sessions",
		"mcpclient/oauth depends on gateway/plan: mcpclient knows nothing of ACP, models or sessions",
		"session depends on acp/config: session knows nothing of ACP",
	}
	if got := check(deps, false); !slices.Equal(got, want) {
		t.Errorf("check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var wantTests []string
	for _, w := range want {
		if !strings.Contains(w, "test support") {
			wantTests = append(wantTests, w)
		}
	}
	if got := check(deps, true); !slices.Equal(got, wantTests) {
		t.Errorf("check of tests found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantTests, "\n"))
	}
	if got := check(map[string][]string{"acp": {"gateway", "bridge", "mcpclient", "session"}, "bridge": {"gateway", "mcpclient"}}, false); got != nil {
		t.Errorf("allowed imports reported: %q", got)
	}
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

// moduleDeps returns the dependencies of the module's packages for goos
// as check takes them: relative to the module root, the module's own
// only. With forTests, the keys are the packages that have tests, and
// their dependencies those of their test binaries.
func moduleDeps(t *testing.T, goos string, forTests bool) map[string][]string {
	t.Helper()
	modPath, root := module(t)
	args := []string{"-json=ImportPath,Deps"}
	if forTests {
		args = append(args, "-test")
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
		for _, d := range p.Deps {
			if r, ok := rel(d); ok && !slices.Contains(ds, r) {
				ds = append(ds, r)
			}
		}
		deps[pkg] = ds
	}
	return deps
}

// TestLayers: the module's packages, and their tests, keep the rules, on
// every system acpgate builds for. The dependency maps are first checked
// to be real (acp depends on every layer below it, and every layer the
// rules name is there), so that a listing that went wrong cannot pass.
func TestLayers(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, forTests := range []bool{false, true} {
			deps := moduleDeps(t, goos, forTests)
			for _, r := range rules {
				if _, ok := deps[r.from]; !ok {
					t.Fatalf("%s (tests %v): no package %s listed: %v", goos, forTests, r.from, deps)
				}
			}
			for _, layer := range []string{"gateway", "bridge", "mcpclient", "session"} {
				if !slices.Contains(deps["acp"], layer) {
					t.Fatalf("%s (tests %v): acp does not depend on %s: the listing is wrong: %v", goos, forTests, layer, deps["acp"])
				}
			}
			for _, v := range check(deps, forTests) {
				what := "code"
				if forTests {
					what = "tests"
				}
				t.Errorf("%s, %s: %s", goos, what, v)
			}
		}
	}
}
