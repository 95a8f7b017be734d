//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The Landlock ABIs the rules need: truncation (3) for file rules, TCP
// (4) for network rules.
const (
	filesABI   = 3
	networkABI = 4
)

// probe asks the kernel which Landlock ABI it offers.
func probe() Support {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		why := "Landlock is not available in this kernel"
		if errors.Is(err, syscall.EOPNOTSUPP) {
			why = "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot parameter)"
		}
		return Support{Why: fmt.Sprintf("%s (%v)", why, err)}
	}
	return withSeccomp(supportFor(abi), seccompSupport())
}

// withSeccomp is s where the socket filter cannot be installed (why not
// ""): network rules are then not enforced, since Landlock alone would
// let UDP, MPTCP and other families through.
func withSeccomp(s Support, why string) Support {
	if !s.Network {
		return s
	}
	if why == "" {
		s.Mechanism += " with a seccomp socket filter"
		return s
	}
	s.Network = false
	s.Why = "network rules need a seccomp filter besides Landlock: " + why
	return s
}

// supportFor is what Landlock ABI abi enforces.
func supportFor(abi int) Support {
	s := Support{Mechanism: fmt.Sprintf("landlock ABI %d", abi), Files: abi >= filesABI, Network: abi >= networkABI}
	switch {
	case !s.Files:
		s.Why = fmt.Sprintf("Landlock ABI %d is too old for file rules (acpgate needs %d, Linux 6.2)", abi, filesABI)
	case !s.Network:
		s.Why = fmt.Sprintf("Landlock ABI %d has no network rules (they need %d, Linux 6.7)", abi, networkABI)
	}
	return s
}

// wrap is the Linux launcher: the agent's own executable, re-executed
// with LaunchArg, confines itself and then executes argv.
func (l *Launcher) wrap(r Rules, argv []string) ([]string, error) {
	if l.Exe == "" {
		return nil, fmt.Errorf("%w: no launcher executable", ErrUnavailable)
	}
	enc, err := encodeRules(r)
	if err != nil {
		return nil, err
	}
	return append([]string{l.Exe, LaunchArg, enc, "--"}, argv...), nil
}

// restrictAndExec confines the calling thread to r with Landlock and
// executes argv in its place. Only the thread that executes is confined
// (Landlock's domain and no_new_privs are per thread; execve keeps the
// calling thread's), so no other thread of the launcher needs to be, and
// the program it becomes, and everything that program starts, is. It
// returns only on failure.
func restrictAndExec(r Rules, argv []string, env []string) error {
	s := probe()
	if err := s.Enforceable(r); err != nil {
		return err
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return err
	}
	rules, err := landlockRules(r)
	if err != nil {
		return err
	}
	cfg := landlock.V7
	switch r.Network {
	case NetNone:
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	case NetPorts:
		cfg.HandledAccessNet = ll.AccessNetConnectTCP
		for _, port := range r.Connect {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	default:
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return fmt.Errorf("%w: the kernel enforces nothing of the policy", ErrUnavailable)
	}
	runtime.LockOSThread() // never unlocked: this thread executes argv
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	_ = unix.Close(fd)
	if r.Network != NetAll {
		if err := installSocketFilter(r.Network); err != nil {
			return err
		}
	}
	return fmt.Errorf("exec %s: %w", path, syscall.Exec(path, argv, env))
}

// landlockRules turns r into go-landlock's rules: the readable and
// writable trees around the hidden paths (see beneathExcept), and the
// devices.
func landlockRules(r Rules) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	for _, set := range []struct {
		roots []string
		write bool
	}{{r.Read, false}, {r.Write, true}} {
		var dirs, files []string
		for _, root := range set.roots {
			trees, ok := beneathExcept(root, r.Hide)
			if !ok {
				return nil, fmt.Errorf("sandbox: more than %d entries lie on the way to the hidden paths under %s", maxWalk, root)
			}
			for _, t := range trees {
				if t.dir {
					dirs = append(dirs, t.path)
				} else {
					files = append(files, t.path)
				}
			}
		}
		if set.write {
			rules = append(rules, landlock.RWDirs(dirs...).WithRefer().IgnoreIfMissing(), landlock.RWFiles(files...).IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.RODirs(dirs...).IgnoreIfMissing(), landlock.ROFiles(files...).IgnoreIfMissing())
		}
	}
	rules = append(rules, landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing())
	return rules, nil
}

// launch is Main's platform part.
func launch(r Rules, argv []string) error {
	return restrictAndExec(r, argv, os.Environ())
}
