// Package watchdog keeps the promise of no orphan when the agent itself dies
// without stopping its MCP servers (SIGKILL, a crash, the OOM killer).
//
// The agent starts a small watchdog process at start-up (Start; the
// watchdog runs Run) and tells it, over a pipe, about every stdio server's
// process group and instance token while the server lives (Watchdog
// implements mcpclient.Guard). The watchdog does nothing until the pipe
// closes. A clean exit of the agent has stopped every server, so nothing is
// left to do; an agent that died leaves records behind, and the watchdog
// kills those groups and every process that carries a recorded token, then
// exits. It runs in its own process group, so a signal to the agent's group
// does not take it down first.
//
// On Windows the servers' job objects do this job (they are killed when the
// agent's handles close), and Start returns ErrUnsupported.
package watchdog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpgate/acpgate/mcpclient/proctree"
)

// ErrUnsupported is returned by Start where no watchdog is needed or
// possible.
var ErrUnsupported = errors.New("watchdog: not supported on this system")

// ParentEnv is the environment variable through which Start tells the
// watchdog process the agent's pid (see Parent).
const ParentEnv = "ACPGATE_WATCHDOG_PARENT"

// Parent returns the agent's pid as Start passed it in ParentEnv, or 0 when
// it is missing or when the watchdog's parent is no longer that process:
// the agent died before the watchdog looked, and the watchdog now belongs
// to a reaper whose children are none of its business. Run given 0 stops
// the recorded servers only.
func Parent() int {
	pid, err := strconv.Atoi(os.Getenv(ParentEnv))
	if err != nil || pid <= 1 || os.Getppid() != pid {
		return 0
	}
	return pid
}

// Env returns the part of env the watchdog process is given: its own
// variables (ACPGATE_WATCHDOG_*) and the Go runtime's settings, nothing
// else. The watchdog starts as a program of its own, readable through
// /proc by every process of the user until it protects itself, so the
// agent's secrets (API keys) must not be in its environment.
func Env(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "ACPGATE_WATCHDOG_"):
		case name == "GORACE", name == "GODEBUG", name == "GOTRACEBACK", name == "GOMAXPROCS", name == "GOGC", name == "GOMEMLIMIT":
		default:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Watchdog is the agent's handle on its watchdog process. Its methods are
// safe for concurrent use; Close is idempotent.
type Watchdog struct {
	cmd    *exec.Cmd
	exited chan struct{}

	mu     sync.Mutex
	w      io.WriteCloser
	err    error // first write error; later records are dropped
	closed bool
}

// Start starts argv as the watchdog process (typically the agent's own
// executable with an argument that makes it call Run) in a process group
// of its own, with a pipe on its stdin and its stderr going to stderr
// (nil: nowhere).
func Start(argv []string, stderr io.Writer) (*Watchdog, error) {
	if len(argv) == 0 {
		return nil, errors.New("watchdog: empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(Env(os.Environ()), ParentEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stderr = stderr
	if err := configure(cmd); err != nil {
		return nil, err
	}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("watchdog: start %s: %w", argv[0], err)
	}
	d := &Watchdog{cmd: cmd, w: w, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// Watch implements mcpclient.Guard: it records a server's group and token.
func (d *Watchdog) Watch(pgid int, token string) {
	d.send(fmt.Sprintf("watch %d %s\n", pgid, token))
}

// Unwatch implements mcpclient.Guard: it forgets a stopped server.
func (d *Watchdog) Unwatch(pgid int) { d.send(fmt.Sprintf("unwatch %d\n", pgid)) }

// send writes one record. A pipe write of a short line does not block
// while the watchdog reads.
func (d *Watchdog) send(rec string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.err != nil {
		return
	}
	_, d.err = io.WriteString(d.w, rec)
}

// Pid returns the watchdog process's pid.
func (d *Watchdog) Pid() int { return d.cmd.Process.Pid }

// Err returns the first error writing to the watchdog (it died), if any.
func (d *Watchdog) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Close closes the pipe, so the watchdog stops whatever is still recorded
// and exits, and waits up to five seconds for it.
func (d *Watchdog) Close() error {
	d.mu.Lock()
	first := !d.closed
	d.closed = true
	d.mu.Unlock()
	if first {
		_ = d.w.Close()
	}
	select {
	case <-d.exited:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("watchdog: did not exit within 5s of its pipe closing")
	}
}

// record is one watched server.
type record struct {
	pgid  int
	token string
}

// SnapshotInterval is how often Run notes the children of the agent.
const SnapshotInterval = 250 * time.Millisecond

// Options configure Run. A nil *Options is the zero value: no hook.
type Options struct {
	// OnSnapshot, when set, is called after each snapshot pass, on Run's
	// snapshot goroutine (one call at a time, none after Run returns); it
	// should not block, as the next pass waits for it.
	OnSnapshot func(Snapshot)
}

// Snapshot is one completed snapshot pass of Run and the children of the
// agent it noted: Run kills those of the last pass that looked which still
// run at EOF.
type Snapshot struct {
	// Seq numbers the passes from 1.
	Seq int
	// Pids are the children of the agent noted in this pass, ascending;
	// none when the pass did not look (the parent given to Run is 0, 1
	// or not the watchdog's parent, or it died during the pass).
	Pids []int
}

// SnapshotLogEnv is the environment variable that, in the watchdog
// process's environment (Start passes the agent's on), names a file to
// which the Options of EnvOptions append a line per snapshot pass: a
// snapshot a test (or a person diagnosing) can wait on, from another
// process (see ReadSnapshotLog). Unset, nothing is written.
const SnapshotLogEnv = "ACPGATE_WATCHDOG_SNAPSHOTS"

// EnvOptions returns the Options the watchdog process's environment asks
// for (see SnapshotLogEnv). Its error says why the snapshot log cannot be
// written; the Options returned with it are still usable (without it).
func EnvOptions() (*Options, error) {
	path := os.Getenv(SnapshotLogEnv)
	if path == "" {
		return &Options{}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return &Options{}, fmt.Errorf("watchdog: snapshot log: %w", err)
	}
	// The file stays open for the life of the watchdog process.
	return &Options{OnSnapshot: func(s Snapshot) {
		var b strings.Builder
		fmt.Fprintf(&b, "snapshot %d", s.Seq)
		for _, pid := range s.Pids {
			fmt.Fprintf(&b, " %d", pid)
		}
		b.WriteByte('\n')
		_, _ = f.WriteString(b.String()) // one write: a whole line
	}}, nil
}

// ReadSnapshotLog returns the snapshots logged so far in the file at path
// (see SnapshotLogEnv), in order; a line still being written is left out.
// A file not yet created holds none.
func ReadSnapshotLog(path string) ([]Snapshot, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil, nil
	}
	var out []Snapshot
	for _, line := range strings.Split(string(b[:i]), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "snapshot" {
			return out, fmt.Errorf("watchdog: snapshot log: bad line %q", line)
		}
		s := Snapshot{}
		if s.Seq, err = strconv.Atoi(f[1]); err != nil {
			return out, fmt.Errorf("watchdog: snapshot log: bad line %q", line)
		}
		for _, p := range f[2:] {
			pid, err := strconv.Atoi(p)
			if err != nil {
				return out, fmt.Errorf("watchdog: snapshot log: bad line %q", line)
			}
			s.Pids = append(s.Pids, pid)
		}
		out = append(out, s)
	}
	return out, nil
}

// Run is the watchdog process's body: it reads records from r until EOF
// (the agent closed the pipe or died), then stops every server still
// recorded: SIGKILL to its group and to every process carrying its token,
// repeated until none is left or the bound has passed. While it waits it
// notes the children of parent (the agent, see Parent) every
// SnapshotInterval, as long as parent is the watchdog's own parent; those
// still running at EOF are killed with their descendants too: they are what
// the agent, a child subreaper, adopted — descendants of servers that left
// their group and dropped their token — or what it was running. A parent of
// 0 or 1, or one that is not the watchdog's parent, is never looked at: the
// children of a reaper that inherited the watchdog belong to others. Each
// pass, looking or not, is reported to opts.OnSnapshot (opts may be nil).
// It returns what it had to stop, for the log.
func Run(r io.Reader, parent int, opts *Options) ([]string, error) {
	snap := newSnapshots(parent)
	if opts != nil {
		snap.hook = opts.OnSnapshot
	}
	go snap.loop()
	live := readRecords(r)
	strays := snap.stop()
	var stopped []string
	recs := make([]record, 0, len(live))
	for pgid, token := range live {
		recs = append(recs, record{pgid, token})
		stopped = append(stopped, fmt.Sprintf("group %d (%s)", pgid, token))
	}
	var err error
	if len(recs) > 0 {
		err = stopAll(recs, 3*time.Second)
	}
	if pids := strays.running(); len(pids) > 0 {
		stopped = append(stopped, fmt.Sprintf("adopted processes %v", pids))
		if !proctree.KillTrees(pids, strays, 3*time.Second) {
			err = errors.Join(err, errors.New("watchdog: adopted processes survived SIGKILL"))
		}
	}
	return stopped, err
}

// readRecords reads watch/unwatch records until EOF and returns the
// servers still watched: process group -> token.
func readRecords(r io.Reader) map[int]string {
	live := map[int]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(f[1])
		if err != nil || pgid <= 1 {
			continue
		}
		switch {
		case f[0] == "watch" && len(f) == 3:
			live[pgid] = f[2]
		case f[0] == "unwatch":
			delete(live, pgid)
		}
	}
	return live
}

// snapshots notes the children of one process periodically: pid -> start
// time. Safe for concurrent use.
type snapshots struct {
	parent int
	self   int
	done   chan struct{}
	ended  chan struct{}
	hook   func(Snapshot) // nil, or called after each pass by loop

	mu   sync.Mutex
	seen startTimes
}

// startTimes maps pids to their start times (see proctree.Proc.Start).
type startTimes map[int]uint64

func newSnapshots(parent int) *snapshots {
	return &snapshots{parent: parent, self: os.Getpid(), done: make(chan struct{}), ended: make(chan struct{}), seen: startTimes{}}
}

func (s *snapshots) loop() {
	defer close(s.ended)
	t := time.NewTicker(SnapshotInterval)
	defer t.Stop()
	for seq := 1; ; seq++ {
		pids := s.take()
		if s.hook != nil {
			s.hook(Snapshot{Seq: seq, Pids: pids})
		}
		select {
		case <-s.done:
			return
		case <-t.C:
		}
	}
}

// take notes the parent's children now (only the current ones: a child
// that died is forgotten) and returns their pids, ascending; nil when it
// did not look.
func (s *snapshots) take() []int {
	if s.parent <= 1 || os.Getppid() != s.parent {
		return nil
	}
	kids, err := proctree.ChildrenOf(s.parent)
	// The parent may have died while its children were read, and its pid
	// been reused: only a read that began and ended under it counts.
	if err != nil || os.Getppid() != s.parent {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := make(startTimes, len(kids))
	pids := make([]int, 0, len(kids))
	for _, pid := range kids {
		if pid == s.self {
			continue
		}
		if start, ok := s.seen[pid]; ok {
			now[pid] = start
		} else {
			now[pid] = proctree.StartOf(pid)
		}
		pids = append(pids, pid)
	}
	s.seen = now
	slices.Sort(pids)
	return pids
}

// stop ends the loop and returns what was noted.
func (s *snapshots) stop() startTimes {
	close(s.done)
	<-s.ended
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// running returns the noted pids that still run as the same process.
func (st startTimes) running() []int {
	var out []int
	for pid, start := range st {
		if p, ok := proctree.Lookup(pid); ok && !p.Zombie && p.Start == start {
			out = append(out, pid)
		}
	}
	return out
}
