package layers

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A folder of the module whose packages share one rule.
type folder struct {
	prefix string
	rule   string
	ok     func(r rank) bool
}

// folders are the folders that sort the module's shared packages by
// layer; every package under internal/ is in one of them.
var folders = []folder{
	{"internal/base/", "leaf utilities: they import nothing of the module", func(r rank) bool { return r.layer == leaf }},
	{"internal/inputs/", "the application's inputs: above the MCP client, below acp", func(r rank) bool { return ranks["mcpclient"].less(r) && r.layer < translator }},
	{"internal/testsupport/", "test support", func(r rank) bool { return r.layer == support }},
	{"internal/checks/", "test-only checks", func(r rank) bool { return r.layer == checks }},
	{"cmd/internal/release/", "the release tooling beside the command that uses it", func(r rank) bool { return r.layer == command }},
}

// checkFolders returns the packages of ranks that are not where their
// rank puts them: in a folder whose rule their rank breaks, or directly
// under internal/ in none.
func checkFolders(ranks map[string]rank) []string {
	var out []string
	for pkg, r := range ranks {
		i := slices.IndexFunc(folders, func(f folder) bool { return strings.HasPrefix(pkg, f.prefix) })
		switch {
		case i >= 0 && !folders[i].ok(r):
			out = append(out, fmt.Sprintf("%s (%s) is under %s, which holds %s", pkg, r, folders[i].prefix, folders[i].rule))
		case i < 0 && strings.HasPrefix(pkg, "internal/"):
			out = append(out, fmt.Sprintf("%s is in none of internal/'s folders (base, inputs, testsupport, checks)", pkg))
		}
	}
	return out
}

// TestFolders: each package is in the folder its rank puts it in (a
// hand-made misplaced package fails).
func TestFolders(t *testing.T) {
	bad := map[string]rank{"internal/base/x": {core, 0}, "internal/y": {leaf, 0}, "internal/inputs/z": {input, 0}}
	want := []string{
		"internal/base/x (core) is under internal/base/, which holds leaf utilities: they import nothing of the module",
		"internal/y is in none of internal/'s folders (base, inputs, testsupport, checks)",
	}
	if got := sorted(checkFolders(bad)); !slices.Equal(got, want) {
		t.Errorf("checkFolders found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, v := range sorted(checkFolders(ranks)) {
		t.Error(v)
	}
}

// acpSDK is acp-go-sdk's module path.
const acpSDK = "github.com/coder/acp-go-sdk"

// TestInputsFreeOfACPSDK: the application's inputs (and the leaf
// utilities) depend, directly or not, on no package of acp-go-sdk; the
// ACP shape of a server list is converted at the edge (acp/sdkservers).
// The listing is first checked to be real: acp depends on the SDK.
func TestInputsFreeOfACPSDK(t *testing.T) {
	_, root := module(t)
	out := goList(t, root, nil, "-deps=false", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./acp", "./internal/inputs/...", "./internal/base/...")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		uses := slices.ContainsFunc(strings.Fields(deps), func(d string) bool { return d == acpSDK || strings.HasPrefix(d, acpSDK+"/") })
		if acp := strings.HasSuffix(pkg, "/acp"); acp != uses {
			t.Errorf("%s: depends on %s: %v", pkg, acpSDK, uses)
		}
	}
}
