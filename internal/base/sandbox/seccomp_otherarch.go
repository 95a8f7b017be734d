//go:build linux && !amd64 && !arm64

package sandbox

// seccompArch is empty: acpgate has no socket filter for this
// architecture, so network rules are not enforceable here.
var seccompArch archCalls
