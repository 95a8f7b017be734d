package layers

import (
	"fmt"
	"strings"
)

// A layer is a band of ranks, the lowest first; docs/architecture.md
// names each package's. A package imports only packages of a lower rank:
// of a lower layer, or of its own layer and a lower level.
type layer int

const (
	leaf       layer = iota // imports nothing of the module
	core                    // the agent runtime's core, the store, the sign-in, the watchdog, the bounds on mcp-go
	client                  // the model providers and native tools; the MCP client
	bridging                // MCP tools ⇄ gateway tools, the client's workspace, the server list
	input                   // the application's inputs: secrets, the configuration
	translator              // the ACP translator, the setup command
	command                 // the commands and their release tooling
	support                 // test support: imported by tests (and test support) only
	checks                  // test-only checks: imported by nothing
)

// layerNames are the layers' names as docs/architecture.md writes them.
var layerNames = map[layer]string{leaf: "leaf", core: "core", client: "client", bridging: "bridge", input: "input",
	translator: "acp", command: "command", support: "support", checks: "check"}

// A rank is a layer and a level within it.
type rank struct {
	layer layer
	level int
}

func (r rank) less(o rank) bool {
	return r.layer < o.layer || r.layer == o.layer && r.level < o.level
}

// String is the rank as docs/architecture.md writes it: the layer's name,
// and ".N" for a level above 0.
func (r rank) String() string {
	if r.level == 0 {
		return layerNames[r.layer]
	}
	return fmt.Sprintf("%s.%d", layerNames[r.layer], r.level)
}

// ranks is every package of the module (relative to the module root) and
// its rank. A package missing here fails TestLayers.
var ranks = map[string]rank{
	"acp/jsonrpc":                  {leaf, 0},
	"cmd/internal/tty":             {leaf, 0},
	"gateway/toolsearch":           {leaf, 0},
	"internal/base/agentproc":      {leaf, 0},
	"internal/base/atomicfile":     {leaf, 0},
	"internal/base/nodump":         {leaf, 0},
	"internal/base/ratelimit":      {leaf, 0},
	"internal/base/safefile":       {leaf, 0},
	"internal/base/sandbox":        {leaf, 0},
	"internal/base/telemetry":      {leaf, 0},
	"internal/base/telemetry/otlp": {leaf, 1},
	"mcpclient/lines":              {leaf, 0},
	"mcpclient/proctree":           {leaf, 0},

	"gateway":            {core, 0},
	"session":            {core, 0},
	"mcpclient/oauth":    {core, 0},
	"mcpclient/wire":     {core, 0},
	"mcpclient/watchdog": {core, 0},

	"gateway/anthropic":    {client, 0},
	"gateway/compact":      {client, 0},
	"gateway/openaicompat": {client, 0},
	"gateway/plan":         {client, 0},
	"gateway/hooks":        {client, 0},
	"gateway/sysprompt":    {client, 0},
	"gateway/workspace":    {client, 0},
	"mcpclient":            {client, 0},

	"bridge":                     {bridging, 0},
	"acp/clientws":               {bridging, 0},
	"internal/inputs/mcpservers": {bridging, 0},
	"internal/inputs/skills":     {bridging, 0},
	"acp/sdkservers":             {bridging, 1},

	"internal/inputs/secrets": {input, 0},
	"internal/inputs/config":  {input, 1},

	"acp":                        {translator, 0},
	"cmd/acpgate/internal/setup": {translator, 0},

	"cmd/acpgate":                   {command, 0},
	"cmd/acpcli":                    {command, 0},
	"cmd/internal/release/registry": {command, 0},
	"cmd/internal/release/dist":     {command, 1},
	"cmd/internal/release":          {command, 2},

	"internal/testsupport/acpschema":           {support, 0},
	"internal/testsupport/fake/fakeanthropic":  {support, 1},
	"internal/testsupport/fake/fakellm":        {support, 1},
	"internal/testsupport/fake/scripted":       {support, 0},
	"internal/testsupport/fake/mcpserver":      {support, 1},
	"internal/testsupport/conformance":         {support, 0},
	"internal/testsupport/mcptunnel":           {support, 0},
	"internal/testsupport/loopback":            {support, 0},
	"internal/testsupport/minagent":            {support, 0},
	"internal/testsupport/typecheck":           {support, 0},
	"internal/testsupport/wsclient":            {support, 0},
	"internal/testsupport/oauthtest":           {support, 0},
	"internal/testsupport/testbin":             {support, 1},
	"internal/testsupport/cachekit":            {support, 2},
	"internal/testsupport/conformance/harness": {support, 2},
	"internal/testsupport/conformance/run":     {support, 2},
	"internal/testsupport/workspacetest":       {support, 2},

	"internal/checks/doccheck": {checks, 0},
	"internal/checks/layers":   {checks, 0},
}

// testReaches are the packages a package's tests reach above its own
// layer, and why (see checkTests).
var testReaches = map[[2]string]string{
	{"mcpclient/oauth", "internal/inputs/secrets"}: "the workload token's test runs its command as acpgate does, through secrets' runner",
}

// checkImports returns the imports in imports (package → the module's
// packages it imports directly) that break the rank rule, or name a
// package the table lacks, one line each.
func checkImports(imports map[string][]string) []string {
	var out []string
	for pkg, is := range imports {
		from, ok := ranks[pkg]
		if !ok {
			out = append(out, fmt.Sprintf("%s has no rank: add it to ranks (and to docs/architecture.md)", pkg))
			continue
		}
		for _, d := range is {
			to, ok := ranks[d]
			if ok && !to.less(from) {
				out = append(out, fmt.Sprintf("%s (%s) imports %s (%s): an import points to a lower rank", pkg, from, d, to))
			}
		}
	}
	return out
}

// checkTests returns what the test binaries in deps (package → the
// module's packages its test binary depends on, directly or not) reach
// that their package's layer does not allow: a package's tests may reach
// its own layer and those below, test support, the package's own
// sub-packages (gateway's tests run its providers), and testReaches.
func checkTests(deps map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		from, ok := ranks[pkg]
		if !ok {
			continue // checkImports reports it
		}
		for _, d := range ds {
			to, ok := ranks[d]
			switch {
			case !ok, d == pkg, strings.HasPrefix(d, pkg+"/"), to.layer == support, to.layer <= from.layer:
			case testReaches[[2]string{pkg, d}] != "":
			default:
				out = append(out, fmt.Sprintf("%s (%s): its tests reach %s (%s), of a higher layer", pkg, from, d, to))
			}
		}
	}
	return out
}
