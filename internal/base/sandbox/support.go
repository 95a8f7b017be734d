package sandbox

import (
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by the error for a policy the running system
// cannot enforce (an old kernel, Landlock disabled, a network rule the
// ABI lacks, no sandbox-exec, Windows).
var ErrUnavailable = errors.New("sandbox unavailable")

// Support is what a system can enforce. It is plain data.
type Support struct {
	// Mechanism names how: "landlock ABI 7 with a seccomp socket
	// filter", "landlock ABI 3", "sandbox-exec", "" for none.
	Mechanism string
	// Files: file rules (read, write and hide; on Linux, truncation
	// included, which needs Landlock ABI 3). Network: TCP connect and bind
	// rules (Landlock ABI 4) and, on Linux, the seccomp filter that
	// refuses the other network protocols (seccomp_linux.go).
	Files, Network bool
	// Why says what is missing, for people ("Landlock is not enabled in
	// this kernel", "Windows has no sandbox acpgate can use").
	Why string
}

// String describes the support in one line, as `acpgate config check`
// prints it.
func (s Support) String() string {
	switch {
	case s.Files && s.Network:
		return s.Mechanism + ": file and network rules are enforced"
	case s.Files:
		return s.Mechanism + ": file rules are enforced, network rules are not (" + s.Why + ")"
	default:
		return "no sandbox: " + s.Why
	}
}

// Prober says what the running system can enforce. The real one asks
// the kernel (System); a test gives another to simulate a missing
// feature.
type Prober interface {
	Probe() Support
}

// ProberFunc adapts a function to Prober.
type ProberFunc func() Support

// Probe implements Prober.
func (f ProberFunc) Probe() Support { return f() }

// System is the running system's Prober.
var System Prober = ProberFunc(probe)

// Enforceable returns nil when s can enforce r, else an error wrapping
// ErrUnavailable that says what is missing.
func (s Support) Enforceable(r Rules) error {
	if !s.Files {
		return fmt.Errorf("%w: policy %s: %s", ErrUnavailable, r.Policy, s.Why)
	}
	if r.Network != NetAll && !s.Network {
		return fmt.Errorf("%w: policy %s: its network rule cannot be enforced: %s", ErrUnavailable, r.Policy, s.Why)
	}
	return nil
}
