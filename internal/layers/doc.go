// Package layers checks that the module's packages depend on one another
// only as the design allows (docs/architecture.md): dependencies point
// downward, from acp to the packages it wires together, never back up. The package has no code;
// its test lists every package of the module with its dependencies,
// direct or not (`go list -json=ImportPath,Deps ./...`, the Deps that
// `go list -deps` walks), for linux, darwin and windows (a file for one
// system only can import what the others' do not), and fails on a
// dependency that breaks a rule:
//
//   - gateway/... imports nothing of mcpclient, bridge, acp or session:
//     the agent runtime knows nothing of MCP, ACP or sessions' storage;
//   - mcpclient/... imports nothing of acp, gateway, bridge or session:
//     it knows nothing of ACP, models or sessions;
//   - bridge/... imports nothing of acp;
//   - session/... imports nothing of acp;
//   - acp/jsonrpc, a generic JSON-RPC connection, imports nothing of the
//     module;
//   - no package imports test support (internal/testsupport/...,
//     internal/fake/..., internal/acpschema, Go packages under testdata/,
//     and helper packages named ...test such as
//     gateway/workspace/workspacetest) except test support itself: only
//     tests may.
//
// The rules name packages by path prefix relative to the module root
// ("acp" is acp and every package under acp/), so they hold wherever a
// package moves beneath them.
//
// Tests are held to the same layering: a package's test binary (its
// _test.go files, in-package and external, and everything they import,
// helpers included, with those helpers' own dependencies) must not reach
// what the package's rule forbids, found with `go list -test`. A
// test of gateway that needs MCP or ACP code to run is a test of the
// layer above and belongs there; the rules are about what code must know
// to be tested, not only to be built. Only the test-support rule is for
// code alone: tests are what test support is for.
package layers
