// Package layers checks that the module's packages depend on one another
// only as the design allows (docs/architecture.md): dependencies point
// downward, from the commands to acp to the packages it wires together,
// never back up. The package has no code; its tests hold the rule.
//
// Every package of the module has a rank in one table (ranks_test.go): a
// layer — leaf, core, client, bridge, input, acp, command, support
// (test support), check (test-only checks) — and a level within it. A
// package imports only packages of a lower rank; a package missing from
// the table fails, and so does a rank left for a package that is gone.
// Test support is the layer above the commands, so only tests and test
// support can import it.
//
// The shared packages sit in folders by layer, one rule a folder
// (folders_test.go): internal/base the leaf utilities, internal/inputs
// the application's inputs (above mcpclient, below acp),
// internal/testsupport all test support, internal/checks the test-only
// checks, cmd/internal/release the release tooling beside its command;
// a package directly under internal/ fails.
//
// Tests are held to the layering too: a package's test binary (its
// _test.go files, in-package and external, and everything they import,
// helpers included, with those helpers' own dependencies, found with
// `go list -test`) reaches no package of a layer above the package's own,
// but for test support, the package's own sub-packages (gateway's tests
// run its providers) and the few reaches the table names with their
// reasons. A test of gateway that needs MCP or ACP code to run is a test
// of the layer above and belongs there.
//
// Each check runs for linux, darwin and windows (a file for one system
// only can import what the others' do not), and docs/architecture.md's
// Rank column is checked against the table.
package layers
