package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sort"
	"sync"
)

// maxFrame is the largest message passed to the SDK: its reader stops the
// whole connection on a longer line, so longer ones are refused here.
const maxFrame = 10<<20 - 1

// lockedWriter serialises whole-message writes to the client. The SDK
// writes each message with one Write; so does the input filter.
// It can also run a function once the response that creates a session has
// gone out, so that notifications about the session follow it.
// A failed write means the client is gone: broken is closed, and Serve
// shuts down as it does on stdin EOF.
type lockedWriter struct {
	mu         sync.Mutex
	w          io.Writer
	watchs     map[string]func() // session id -> run after its creating response
	broken     chan struct{}     // closed at the first failed write
	brokenOnce sync.Once
}

func newLockedWriter(w io.Writer) *lockedWriter {
	return &lockedWriter{w: w, broken: make(chan struct{})}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	if err != nil {
		l.brokenOnce.Do(func() { close(l.broken) })
	}
	var fire []func()
	for id, fn := range l.watchs {
		if bytes.Contains(p, []byte(`"result"`)) && bytes.Contains(p, []byte(`"sessionId":"`+id+`"`)) {
			fire = append(fire, fn)
			delete(l.watchs, id)
		}
	}
	l.mu.Unlock()
	for _, fn := range fire {
		go fn()
	}
	return n, err
}

// afterResponse runs fn (in a goroutine) once a response carrying session
// id has been written.
func (l *lockedWriter) afterResponse(id string, fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchs == nil {
		l.watchs = map[string]func(){}
	}
	l.watchs[id] = fn
}

// inputFilter sits between the client and the SDK's reader. It answers
// lines that are not JSON with a -32700 parse error and over-long lines with
// -32600 (the SDK would ignore the first and die on the second), and it
// rewrites the mcpServers of session/new, session/load and session/resume
// into the shapes the SDK decodes correctly (see normalizeServers). Not
// safe for concurrent use (the SDK has one reader).
type inputFilter struct {
	ready   chan struct{} // closed by start: nothing is read before
	r       *bufio.Reader
	out     io.Writer
	logger  *slog.Logger
	line    []byte
	pending []byte
}

// newInputFilter returns a filter that reads nothing until start is called
// (see start).
func newInputFilter(r io.Reader, out io.Writer, logger *slog.Logger) *inputFilter {
	return &inputFilter{ready: make(chan struct{}), r: bufio.NewReaderSize(r, 64<<10), out: out, logger: logger}
}

// start lets reading begin. The SDK's connection starts reading in its
// constructor, before the caller has the connection (or could set its
// logger): holding input back until then means no handler runs early.
func (f *inputFilter) start() { close(f.ready) }

// Read implements io.Reader.
func (f *inputFilter) Read(p []byte) (int, error) {
	<-f.ready
	for len(f.pending) == 0 {
		line, err := f.next()
		if len(line) > 0 {
			f.pending = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next returns the next line to hand on (newline included), or nil.
func (f *inputFilter) next() ([]byte, error) {
	f.line = f.line[:0]
	tooLong := false
	for {
		frag, err := f.r.ReadSlice('\n')
		if !tooLong {
			if len(f.line)+len(frag) > maxFrame {
				tooLong, f.line = true, f.line[:0]
			} else {
				f.line = append(f.line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			f.reply(nil, -32600, "Invalid Request: message larger than 10 MiB")
			if err != nil {
				return nil, err
			}
			return nil, nil
		}
		line := bytes.TrimSpace(f.line)
		if len(line) == 0 {
			return nil, err
		}
		return f.filter(line), err
	}
}

// filter checks and rewrites one message.
func (f *inputFilter) filter(line []byte) []byte {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		f.logger.Warn("client sent a line that is not JSON", "err", err)
		f.reply(nil, -32700, "Parse error: "+err.Error())
		return nil
	}
	switch msg.Method {
	case "session/new", "session/load", "session/resume":
		if fixed, ok := rewriteServers(line); ok {
			line = fixed
		}
	}
	return append(line, '\n')
}

// reply writes a JSON-RPC error response.
func (f *inputFilter) reply(id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	_, _ = f.out.Write(append(b, '\n'))
}

// rewriteServers normalises params.mcpServers of a message.
func rewriteServers(line []byte) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return nil, false
	}
	var servers []map[string]any
	if json.Unmarshal(params["mcpServers"], &servers) != nil {
		return nil, false
	}
	for _, s := range servers {
		normalizeServer(s)
	}
	params["mcpServers"], _ = json.Marshal(servers)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	return out, err == nil
}

// normalizeServer rewrites one mcpServers entry the way real clients send
// it into the shape acp-go-sdk decodes as intended: the SDK decodes a stdio
// entry without "env" or "args" as an HTTP server with an empty URL, and an
// http/sse entry without "headers" the same way. Entries with a command
// become stdio entries with "args" and "env" arrays; entries with a url get
// a "type" (http unless sse) and a "headers" array. Environment and header
// objects ({"K": "V"}) become name/value arrays. An entry with neither is
// left alone and rejected later.
func normalizeServer(s map[string]any) {
	typ, _ := s["type"].(string)
	_, hasCmd := s["command"]
	_, hasURL := s["url"]
	switch {
	case typ == "stdio" || (typ == "" && hasCmd):
		delete(s, "type")
		if _, ok := s["args"].([]any); !ok {
			s["args"] = []any{}
		}
		s["env"] = pairs(s["env"])
	case hasURL:
		switch typ {
		case "sse":
		default: // "", "http", "streamable-http", "streamableHttp"
			s["type"] = "http"
		}
		s["headers"] = pairs(s["headers"])
	}
}

// pairs turns {"K": "V"} or [{"name","value"}] or nothing into a
// name/value array.
func pairs(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, 0, len(v))
		for _, k := range keys {
			s, _ := v[k].(string)
			out = append(out, map[string]any{"name": k, "value": s})
		}
		return out
	}
	return []any{}
}
