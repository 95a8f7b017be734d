// Package hooks runs hooks in Claude Code's format: commands that a
// team's configuration attaches to the events of a session (SessionStart,
// UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact,
// Stop, SessionEnd), each given the event as JSON on stdin. A hook's exit
// status and its JSON answer decide what happens next: exit 2 blocks with
// its stderr as the reason; a JSON object on stdout can allow, deny or ask
// for a tool call, rewrite its input, add context or block. Scripts
// written for Claude Code (and for Codex's hooks.json and gemini-cli's
// settings, which took the same shape) run unchanged.
//
// The package knows nothing of ACP or of the model loop: it parses hook
// files ([Parse]), picks the hooks of an event ([Set.Matching]), runs them
// ([Runner.Run]: bounded in time and output, in their own process group,
// with the environment the caller gives), reads their answers into a
// verdict per event ([Verdict]) and frames what they print for the model
// ([Frame]). Whether a project's hooks may run at all is the caller's
// question; [TrustStore] remembers the user's answer per project and per
// digest of its hook files.
//
// Where things are:
//
//	doc.go     this map
//	config.go  the hook files: Parse, Set, Hook, Command, matchers
//	run.go     Runner: a hook run (argv or sh -c), its input and Outcome
//	proc_unix.go  the process group a hook runs in, killed whole
//	proc_other.go the same elsewhere: the command alone
//	decide.go  Verdict: the runs of one event read together; Frame
//	trust.go   TrustStore: the user's answers about a project's hooks
package hooks
