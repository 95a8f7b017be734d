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
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrUnsupported is returned by Start where no watchdog is needed or
// possible.
var ErrUnsupported = errors.New("watchdog: not supported on this system")

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

// Run is the watchdog process's body: it reads records from r until EOF
// (the agent closed the pipe or died), then stops every server still
// recorded: SIGKILL to its group and to every process carrying its token,
// repeated until none is left or the bound has passed. It returns the
// records it had to stop, for the log.
func Run(r io.Reader) ([]string, error) {
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
	recs := make([]record, 0, len(live))
	var stopped []string
	for pgid, token := range live {
		recs = append(recs, record{pgid, token})
		stopped = append(stopped, fmt.Sprintf("group %d (%s)", pgid, token))
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return stopped, stopAll(recs, 3*time.Second)
}
