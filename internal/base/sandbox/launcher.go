package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// LaunchArg is the hidden first argument that makes acpgate the Linux
// launcher (see Main).
const LaunchArg = "__acpgate-sandbox"

// ExitLaunch is the launcher's exit status when it cannot confine or
// execute the command (126: "cannot execute", as shells use it).
const ExitLaunch = 126

// maxEncoded bounds the encoded rules the launcher accepts.
const maxEncoded = 1 << 20

// Launcher runs commands under policies: it resolves a policy, checks
// that the system can enforce it and wraps the command so that it runs
// confined. Its fields are set before use and not changed after; its
// methods are safe for concurrent use.
type Launcher struct {
	// Exe is the executable that calls Main when its first argument is
	// LaunchArg: acpgate itself (os.Executable). Linux needs it.
	Exe string
	// Prober says what the system enforces (nil: System).
	Prober Prober
	// Places are the home, the caches and the extra hidden paths of every
	// policy; Workspace and Temp are set per command.
	Places Places
}

// Support returns what the system enforces.
func (l *Launcher) Support() Support {
	if l.Prober == nil {
		return System.Probe()
	}
	return l.Prober.Probe()
}

// Confined is a command prepared to run under a policy. Close removes
// its temporary directory once the command (and everything it started)
// is gone; Close is idempotent.
type Confined struct {
	// Argv is the command line to run (the launcher's, when enforced).
	Argv []string
	// Policy describes the policy (Policy.String).
	Policy string
	// Enforced is whether the system confines the command; Note says why
	// not, when the policy allowed running unconfined.
	Enforced bool
	Note     string
	// Temp is the command's own temporary directory ("" when none).
	Temp string

	once sync.Once
}

// Environ returns env with TMPDIR set to the command's own temporary
// directory (env unchanged when there is none).
func (c *Confined) Environ(env []string) []string {
	if c.Temp == "" {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if len(kv) >= 7 && kv[:7] == "TMPDIR=" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR="+c.Temp)
}

// Close removes the temporary directory.
func (c *Confined) Close() error {
	var err error
	c.once.Do(func() {
		if c.Temp != "" {
			err = os.RemoveAll(c.Temp)
		}
	})
	return err
}

// Confine prepares argv (argv[0] a path or a name found on the
// command's PATH) to run under p with workspace as the writable
// workspace of workspace-write. An off policy returns argv as it is. A
// policy the system cannot enforce is an error wrapping ErrUnavailable,
// unless the policy says failIfUnavailable: false: then argv runs
// unconfined, and Note says why.
func (l *Launcher) Confine(p Policy, workspace []string, argv []string) (*Confined, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if p.Off() {
		return &Confined{Argv: argv, Policy: p.String()}, nil
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	places := l.Places
	places.Workspace = workspace
	r := p.Resolve(places)
	if err := l.Support().Enforceable(r); err != nil {
		if p.Strict() {
			return nil, fmt.Errorf("%w (to run it unconfined here, set \"failIfUnavailable\": false in its sandbox policy)", err)
		}
		return &Confined{Argv: argv, Policy: p.String(), Note: err.Error()}, nil
	}
	for _, dir := range expand(places.Home, places.Cache) {
		// A cache that does not exist yet could not be granted: make it,
		// as its package manager would.
		_ = os.MkdirAll(dir, 0o700)
	}
	temp, err := os.MkdirTemp("", "acpgate-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: temporary directory: %w", err)
	}
	places.Temp = temp
	r = p.Resolve(places)
	wrapped, err := l.wrap(r, argv)
	if err != nil {
		_ = os.RemoveAll(temp)
		return nil, err
	}
	return &Confined{Argv: wrapped, Policy: p.String(), Enforced: true, Temp: temp}, nil
}

// Command is Confine for os/exec: the command name with args under p,
// its environment env with the command's own TMPDIR. The caller starts
// the command and closes the Confined once it has ended. It is the one
// way to run something under a policy (MCP servers, the local run tool,
// hooks).
func (l *Launcher) Command(p Policy, workspace []string, env []string, name string, args ...string) (*exec.Cmd, *Confined, error) {
	c, err := l.Confine(p, workspace, append([]string{name}, args...))
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Environ(env)
	return cmd, c, nil
}

// encodeRules is how the rules reach the launcher: JSON in base64, one
// argument.
func encodeRules(r Rules) (string, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("sandbox: encoding rules: %w", err)
	}
	return base64.StdEncoding.EncodeToString(data), nil
}

func decodeRules(s string) (Rules, error) {
	var r Rules
	if len(s) > maxEncoded {
		return r, fmt.Errorf("sandbox: rules of %d bytes, at most %d", len(s), maxEncoded)
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return r, fmt.Errorf("sandbox: decoding rules: %w", err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("sandbox: decoding rules: %w", err)
	}
	return r, nil
}

// IsLaunch reports whether args (a process's arguments after its name)
// make it the launcher.
func IsLaunch(args []string) bool { return len(args) > 0 && args[0] == LaunchArg }

// LaunchIfAsked is for the main, or the TestMain, of a binary that is
// its own launcher (acpgate, the tests that confine commands): when the
// process's arguments make it the launcher it runs Main and exits with
// its status; otherwise it returns at once.
func LaunchIfAsked() {
	if IsLaunch(os.Args[1:]) {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
}

// Main is the launcher: args (after LaunchArg) are the encoded rules,
// "--" and the command line. It confines itself to the rules and
// executes the command in its place (same process, same process group);
// it returns only when that fails, with ExitLaunch, having said why on
// stderr.
func Main(args []string, stderr io.Writer) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(stderr, "acpgate sandbox: usage: "+LaunchArg+" RULES -- COMMAND [ARG...]")
		return ExitLaunch
	}
	r, err := decodeRules(args[0])
	if err == nil {
		err = launch(r, args[2:])
	}
	fmt.Fprintf(stderr, "acpgate sandbox: %v\n", err)
	return ExitLaunch
}

// lookPath finds name as exec.Command would, on the launcher's PATH
// (which is the command's).
func lookPath(name string, _ []string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	return path, nil
}
