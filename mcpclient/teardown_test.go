package mcpclient_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// groupMembers returns the live (non-zombie) processes in process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(f) > 2 && string(f[2]) == strconv.Itoa(pgid) && f[0][0] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

func TestCloseLeavesNoProcess(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec func(rec string) mcpclient.ServerSpec
	}{
		{"polite", func(rec string) mcpclient.ServerSpec {
			return stdio("polite", "-record", rec, "-grandchild")
		}},
		{"stubborn", func(rec string) mcpclient.ServerSpec {
			return stdio("stubborn", "-record", rec, "-grandchild", "-ignore-sigterm", "-ignore-stdin-eof")
		}},
		{"setsid-grandchild", func(rec string) mcpclient.ServerSpec {
			// The grandchild leaves the process group, as a daemonising
			// wrapper's child does: only a walk of the tree finds it.
			return stdio("setsid", "-record", rec, "-grandchild", "-grandchild-setsid", "-ignore-sigterm", "-ignore-stdin-eof")
		}},
		{"daemonised", func(rec string) mcpclient.ServerSpec {
			// A double fork: the subshell exits, so the setsid'd process is
			// re-parented away from the server's tree; only its instance
			// token ties it to the server.
			return mcpclient.ServerSpec{Name: "daemon", Command: "/bin/sh",
				Args: []string{"-c", `(setsid "$0" -grandchild-mode </dev/null >/dev/null 2>&1 & echo "grandchild $!" >>"$1"); exec "$0" -record "$1" -ignore-sigterm -ignore-stdin-eof`, serverBin, rec}}
		}},
		{"forking", func(rec string) mcpclient.ServerSpec {
			// A loop in the group that ignores SIGTERM and keeps starting
			// processes that leave the group, until it is killed: some
			// start between a walk of the tree and the SIGKILL after it.
			return mcpclient.ServerSpec{Name: "forking", Command: "/bin/sh",
				Args: []string{"-c", `(trap "" TERM; while :; do setsid sleep 600 </dev/null >/dev/null 2>&1 & echo "grandchild $!" >>"$1"; sleep 0.002; done) & exec "$0" -record "$1" -ignore-sigterm -ignore-stdin-eof`, serverBin, rec}}
		}},
		{"sh-wrapper", func(rec string) mcpclient.ServerSpec {
			// sh forks (the trailing command stops it from exec'ing), so the
			// server is a grandchild and its child a great-grandchild.
			return mcpclient.ServerSpec{Name: "wrapped", Command: "/bin/sh",
				Args: []string{"-c", `"$0" -record "$1" -grandchild -ignore-sigterm -ignore-stdin-eof; echo done`, serverBin, rec}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := fastOpts(t)
			rec, lines := recordFile(t)
			m, err := mcpclient.New([]mcpclient.ServerSpec{tc.spec(rec)}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			mustReady(t, m, m.Statuses()[0].Name)
			testbin.WaitFor(t, "grandchild recorded", func() bool { return hasLine(lines(), "grandchild ") })
			pids := append(recordedPIDs(t, lines(), "started"), recordedPIDs(t, lines(), "grandchild")...)
			pgid, err := syscallGetpgid(pids[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, pid := range pids {
				if !testbin.Alive(pid) {
					t.Fatalf("pid %d not running before Close", pid)
				}
			}
			if err := m.Close(context.Background()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			// Every process recorded up to now, those started during Close
			// included.
			pids = append(recordedPIDs(t, lines(), "started"), recordedPIDs(t, lines(), "grandchild")...)
			for _, pid := range pids {
				if testbin.Alive(pid) {
					t.Errorf("pid %d still alive after Close", pid)
				}
			}
			if left := groupMembers(pgid); len(left) > 0 {
				t.Errorf("process group %d still has %v", pgid, left)
			}
		})
	}
}

func TestCrashKillsOrphans(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, stdio("s", "-record", rec, "-grandchild", "-ignore-sigterm"))
	testbin.WaitFor(t, "grandchild recorded", func() bool { return hasLine(lines(), "grandchild ") })
	first := recordedPIDs(t, lines(), "grandchild")[0]
	if _, err := m.CallTool(context.Background(), "s", "crash", nil); !errors.Is(err, mcpclient.ErrServerExited) {
		t.Fatalf("crash: %v", err)
	}
	events.wait(t, "restarted", func(e mcpclient.Event) bool {
		return e.Status.State == mcpclient.StateReady && len(recordedPIDs(t, lines(), "started")) == 2
	})
	if testbin.Alive(first) {
		t.Errorf("grandchild %d of the crashed server survived the restart", first)
	}
}
