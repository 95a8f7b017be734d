package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// serverState is one MCP server as acpgate reports it in the _meta of a
// session/new or session/load response and of the session_info_updates
// that follow ({"acpgate": {"mcpServers": [...]}}; docs/acp-methods.md).
type serverState struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	Error     string `json:"error,omitempty"`
	Warning   string `json:"warning,omitempty"`
}

// stateConnecting is the state of a server that has not answered yet.
const stateConnecting = "connecting"

// parseServers reads the servers' states from an agent's _meta; ok is
// false when the meta has none (an agent other than acpgate).
func parseServers(meta any) (list []serverState, ok bool) {
	if meta == nil {
		return nil, false
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, false
	}
	var m struct {
		Acpgate *struct {
			McpServers *[]serverState `json:"mcpServers"`
		} `json:"acpgate"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Acpgate == nil || m.Acpgate.McpServers == nil {
		return nil, false
	}
	return *m.Acpgate.McpServers, true
}

// serverWatch keeps the latest servers' states the agent reported and
// wakes waiters when they change. Safe for concurrent use.
type serverWatch struct {
	mu      sync.Mutex
	list    []serverState
	known   bool
	changed chan struct{} // closed and replaced on each report
}

func newServerWatch() *serverWatch {
	return &serverWatch{changed: make(chan struct{})}
}

// report records the states in meta, if it has any. A response's meta
// (initial) is older than any session_info_update handled already, which
// may have overtaken it: it is kept only when nothing was reported.
func (w *serverWatch) report(meta any, initial bool) {
	list, ok := parseServers(meta)
	if !ok {
		return
	}
	w.mu.Lock()
	if initial && w.known {
		w.mu.Unlock()
		return
	}
	w.list, w.known = list, true
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// snapshot returns the latest states, whether any were reported, and a
// channel closed at the next report.
func (w *serverWatch) snapshot() ([]serverState, bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.list, w.known, w.changed
}

// settled reports whether no server in list is still connecting.
func settled(list []serverState) bool {
	for _, s := range list {
		if s.State == stateConnecting {
			return false
		}
	}
	return true
}

// wait waits until no reported server is connecting, at most limit (or
// until ctx ends), and returns the states then. It returns at once when
// the agent reports no states.
func (w *serverWatch) wait(ctx context.Context, limit time.Duration) ([]serverState, bool) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		list, known, changed := w.snapshot()
		if !known || settled(list) || limit <= 0 {
			return list, known
		}
		select {
		case <-changed:
		case <-timer.C:
			return list, known
		case <-ctx.Done():
			return list, known
		}
	}
}

// describe is one line per server: "MCP server demo (stdio): ready, 27
// tools", with its error or warning.
func describe(list []serverState) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		line := fmt.Sprintf("MCP server %s (%s): %s, %d tools", s.Name, s.Transport, s.State, s.Tools)
		if s.Error != "" {
			line += " — " + s.Error
		} else if s.Warning != "" {
			line += " — " + s.Warning
		}
		out = append(out, strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' ' // the text is the servers': no escapes reach the terminal
			}
			return r
		}, line))
	}
	return out
}
