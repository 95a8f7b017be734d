// Package sandbox confines what acpgate starts (stdio MCP servers, the
// local run tool's commands, hooks) to what a policy allows: the files
// it may read and write, the paths it may not see at all, where it may
// connect.
//
// A Policy is what the configuration says (off, read-only,
// workspace-write, or custom lists, a network rule, whether an
// unenforceable policy refuses to start the process); Resolve makes it
// Rules, absolute paths for one command. A Launcher checks that the
// running system can enforce them (Support, from a Prober the tests can
// replace) and wraps the command:
//
//   - on Linux, acpgate runs itself as a launcher (LaunchArg, Main),
//     which confines its own thread with Landlock (and, under a network
//     rule, a seccomp filter on socket creation for what Landlock does
//     not see: UDP, MPTCP, raw, other families) and then executes the
//     command: the process, its process group and its pid stay the same,
//     and the command and everything it starts are confined, acpgate
//     itself not;
//   - on macOS the command runs under sandbox-exec with a profile made
//     from the same rules (Profile);
//   - elsewhere (Windows) there is no sandbox: a policy other than off
//     cannot be enforced.
//
// Landlock grants; it cannot deny part of a granted tree. So "read
// everything but ~/.ssh" is granted as every entry of /, of /home and of
// the home directory but the hidden ones (walk.go): the directories on
// the way to a hidden path cannot be listed, and entries made in them
// after the start are not readable.
//
// Where things are:
//
//   - policy.go: Policy, its JSON forms and checks
//   - rules.go: Places, Rules, DefaultHidden, Resolve
//   - support.go: Support, Prober, ErrUnavailable
//   - launcher.go: Launcher, Confine, Command, Main
//   - hint.go: Explain, the hint for failures a sandbox may cause
//   - walk.go: the walk around the hidden paths
//   - landlock_linux.go: Landlock (probe, the launcher's confinement)
//   - seccomp_linux.go: the socket filter (a small BPF assembler)
//   - seccomp_arch.go: what the filter needs of an architecture
//   - seccomp_amd64.go: amd64's system call numbers
//   - seccomp_arm64.go: arm64's
//   - seccomp_otherarch.go: the other architectures: no filter
//   - seatbelt.go: the sandbox-exec profile
//   - seatbelt_darwin.go: sandbox-exec (probe, wrap)
//   - other.go: the other systems: no sandbox
package sandbox
