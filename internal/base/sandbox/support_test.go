package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// fakeSupport is a system that lacks what the test says.
func fakeSupport(files, network bool) Prober {
	return ProberFunc(func() Support {
		return Support{Mechanism: "fake", Files: files, Network: network, Why: "the fake kernel lacks it"}
	})
}

func TestConfineRefusesWhatCannotBeEnforced(t *testing.T) {
	off := false
	for _, c := range []struct {
		name           string
		files, network bool
		policy         Policy
		refused        bool
	}{
		{"no network rules, network none", true, false, Policy{Files: FilesReadOnly, Network: NetNone}, true},
		{"no network rules, network all", true, false, Policy{Files: FilesReadOnly}, false},
		{"no file rules", false, false, Policy{Files: FilesWorkspaceWrite}, true},
		{"no file rules, best effort", false, false, Policy{Files: FilesWorkspaceWrite, FailIfUnavailable: &off}, false},
		{"no file rules, off", false, false, Policy{}, false},
	} {
		l := &Launcher{Exe: "/bin/true", Prober: fakeSupport(c.files, c.network)}
		conf, err := l.Confine(c.policy, []string{t.TempDir()}, []string{"server"})
		if c.refused {
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "failIfUnavailable") {
				t.Errorf("%s: err = %v, want ErrUnavailable naming failIfUnavailable", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		best := c.policy.FailIfUnavailable != nil
		if best && (conf.Enforced || conf.Note == "" || conf.Argv[0] != "server") {
			t.Errorf("%s: %+v, want unconfined with a note", c.name, conf)
		}
		if !c.policy.Off() && !best && !conf.Enforced {
			t.Errorf("%s: not enforced: %+v", c.name, conf)
		}
		_ = conf.Close()
	}
}

func TestConfinedEnviron(t *testing.T) {
	c := &Confined{Temp: "/tmp/own"}
	got := strings.Join(c.Environ([]string{"A=1", "TMPDIR=/tmp"}), " ")
	if got != "A=1 TMPDIR=/tmp/own" {
		t.Errorf("Environ = %s", got)
	}
}
