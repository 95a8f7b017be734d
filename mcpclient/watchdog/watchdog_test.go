//go:build linux

package watchdog_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient/proctree"
	"github.com/acpgate/acpgate/mcpclient/watchdog"
)

const helperEnv = "ACPGATE_WATCHDOG_TEST_HELPER"

// TestMain turns the test binary into the watchdog when it is started as
// one (Start re-runs it with helperEnv set).
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		opts, err := watchdog.EnvOptions()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := watchdog.Run(os.Stdin, watchdog.Parent(), opts); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// victim starts a server-like tree: a process group whose leader has a
// child in the group and a child that left it (setsid), all carrying
// token. It returns the leader's pid (= the group) and every pid.
func victim(t *testing.T, token string) (int, []int) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command("/bin/sh", "-c", `setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! >>"$0"; sleep 600 & echo $! >>"$0"; wait`, pidfile)
	cmd.Env = append(os.Environ(), proctree.EnvName+"="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	var pids []int
	testbin.WaitFor(t, "children started", func() bool {
		b, _ := os.ReadFile(pidfile)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			pids = append(pids, pid)
		}
		return len(pids) == 2
	})
	all := append([]int{cmd.Process.Pid}, pids...)
	t.Cleanup(func() {
		for _, pid := range all {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return cmd.Process.Pid, all
}

func startWatchdog(t *testing.T) *watchdog.Watchdog {
	t.Helper()
	t.Setenv(helperEnv, "1")
	// A race-enabled binary sleeps a second at exit unless told not to;
	// Close waits for the watchdog's exit.
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	d, err := watchdog.Start([]string{os.Args[0]}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRecordedServersDieWithTheAgent(t *testing.T) {
	token := proctree.NewToken()
	pgid, pids := victim(t, token)
	d := startWatchdog(t)
	d.Watch(pgid, token)
	// The agent dies: its end of the pipe closes with the record still in.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		testbin.WaitFor(t, fmt.Sprintf("pid %d gone", pid), func() bool { return !testbin.Alive(pid) })
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestUnwatchedServersAreLeftAlone: a server unwatched before the agent
// ends is not touched, as long as it is no child of the agent's.
func TestUnwatchedServersAreLeftAlone(t *testing.T) {
	token := proctree.NewToken()
	pidfile := filepath.Join(t.TempDir(), "pid")
	// A double fork: the process is re-parented away from this test.
	cmd := exec.Command("/bin/sh", "-c", `(setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! >"$0")`, pidfile)
	cmd.Env = append(os.Environ(), proctree.EnvName+"="+token)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var pid int
	testbin.WaitFor(t, "the process started", func() bool {
		b, _ := os.ReadFile(pidfile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	d := startWatchdog(t)
	d.Watch(pid, token)
	d.Unwatch(pid)
	if err := d.Close(); err != nil { // returns once the watchdog exited
		t.Fatal(err)
	}
	if !testbin.Alive(pid) {
		t.Errorf("pid %d was killed although its server was unwatched", pid)
	}
}

// waitSnapshotOf waits until the snapshot log at path shows a pass that
// noted pid.
func waitSnapshotOf(t *testing.T, path string, pid int) {
	t.Helper()
	testbin.WaitFor(t, fmt.Sprintf("a snapshot noting pid %d", pid), func() bool {
		snaps, err := watchdog.ReadSnapshotLog(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range snaps {
			if slices.Contains(s.Pids, pid) {
				return true
			}
		}
		return false
	})
}

// TestAgentChildrenDieWithTheAgent: a child of the agent that no record
// names (one it adopted) is killed, with its descendants, when the agent
// ends. The agent ends only once the watchdog has noted the child: the
// test waits for that snapshot in the watchdog's snapshot log.
func TestAgentChildrenDieWithTheAgent(t *testing.T) {
	_, pids := victim(t, "") // pids[0], a child of this test: the "agent"
	log := filepath.Join(t.TempDir(), "snapshots")
	t.Setenv(watchdog.SnapshotLogEnv, log)
	d := startWatchdog(t)
	waitSnapshotOf(t, log, pids[0])
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		testbin.WaitFor(t, fmt.Sprintf("pid %d gone", pid), func() bool { return !testbin.Alive(pid) })
	}
}

// TestForeignParentIsNeverSwept: a watchdog whose agent died before it
// looked belongs to a reaper (init, a CI runner, a subreaper); the
// children of that process are none of its business. Run is given a pid
// that is not its parent (this test process, whose children are the
// victims) and must leave them running — after at least one snapshot
// pass ran while they existed, which noted none of them.
func TestForeignParentIsNeverSwept(t *testing.T) {
	_, pids := victim(t, "")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	snaps := make(chan watchdog.Snapshot, 1)
	done := make(chan error, 1)
	go func() {
		_, err := watchdog.Run(r, os.Getpid(), &watchdog.Options{OnSnapshot: func(s watchdog.Snapshot) {
			select {
			case snaps <- s:
			default: // the test reads the first only
			}
		}})
		done <- err
	}()
	var first watchdog.Snapshot
	select {
	case first = <-snaps:
	case <-time.After(30 * time.Second):
		t.Fatal("no snapshot pass")
	}
	if first.Seq != 1 || len(first.Pids) != 0 {
		t.Errorf("first snapshot %+v, want pass 1 noting nothing (the pid given is not the watchdog's parent)", first)
	}
	_ = w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !testbin.Alive(pid) {
			t.Errorf("pid %d, a child of a process that is not the watchdog's parent, was killed", pid)
		}
	}
}

// TestSnapshotLog: a snapshot log holds only whole lines; a line being
// written is left out, and no file is no snapshot.
func TestSnapshotLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snapshots")
	if snaps, err := watchdog.ReadSnapshotLog(path); err != nil || snaps != nil {
		t.Fatalf("no file: %v, %v", snaps, err)
	}
	if err := os.WriteFile(path, []byte("snapshot 1\nsnapshot 2 10 20\nsnapshot 3 1"), 0o600); err != nil {
		t.Fatal(err)
	}
	snaps, err := watchdog.ReadSnapshotLog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []watchdog.Snapshot{{Seq: 1}, {Seq: 2, Pids: []int{10, 20}}}
	if !reflect.DeepEqual(snaps, want) {
		t.Errorf("snapshots %+v, want %+v", snaps, want)
	}
}

func TestParentIsTheAgentOnly(t *testing.T) {
	t.Setenv(watchdog.ParentEnv, strconv.Itoa(os.Getppid()))
	if got := watchdog.Parent(); got != os.Getppid() && os.Getppid() > 1 {
		t.Errorf("Parent() = %d, want the parent %d", got, os.Getppid())
	}
	t.Setenv(watchdog.ParentEnv, strconv.Itoa(os.Getpid()))
	if got := watchdog.Parent(); got != 0 {
		t.Errorf("Parent() = %d for a pid that is not the parent, want 0", got)
	}
	t.Setenv(watchdog.ParentEnv, "1")
	if got := watchdog.Parent(); got != 0 {
		t.Errorf("Parent() = %d for init, want 0", got)
	}
}

// TestEnvKeepsNoSecret: the watchdog's environment is its own variables
// and the Go runtime's, never the agent's keys or anything else.
func TestEnvKeepsNoSecret(t *testing.T) {
	env := []string{"OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2", "HOME=/root", "PATH=/bin", "GITHUB_TOKEN=ghp",
		watchdog.SnapshotLogEnv + "=/tmp/x", "GORACE=atexit_sleep_ms=0", "GOTRACEBACK=all", "ACPGATE_WATCHDOG=x", "NOEQUALS"}
	got := watchdog.Env(env)
	want := []string{watchdog.SnapshotLogEnv + "=/tmp/x", "GORACE=atexit_sleep_ms=0", "GOTRACEBACK=all"}
	if !slices.Equal(got, want) {
		t.Fatalf("Env = %q, want %q", got, want)
	}
}
