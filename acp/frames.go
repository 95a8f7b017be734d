package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/acpgate/acpgate/acp/secrets"
	"github.com/acpgate/acpgate/mcpclient/lines"
	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is the wire: the writer every frame to the editor goes
// through (one frame per write, or one frame in pieces, redacted, with a
// hook after a response) and the input filter that checks each frame
// before the SDK reads it.

// maxFrame is the largest message passed to the SDK: its reader stops the
// whole connection on a longer line, so longer ones are refused here.
const maxFrame = 10<<20 - 1

// lockedWriter serialises whole-message writes to the client. The SDK
// writes each message with one Write; so does the input filter; a large
// update is written in pieces under one lock (writeStream). Every resolved
// secret is redacted from each frame: responses, updates, errors, cards.
// It can also run a function once the response that creates a session has
// gone out, so that notifications about the session follow it.
// A failed write means the client is gone: broken is closed, and Serve
// shuts down as it does on stdin EOF.
type lockedWriter struct {
	mu         sync.Mutex
	w          io.Writer
	redactor   *secrets.Redactor   // nil: nothing to redact
	stream     *secrets.JSONWriter // writeStream's redaction, reused; guarded by mu
	watchs     map[string]func()   // session id -> run after its creating response
	broken     chan struct{}       // closed at the first failed write
	brokenOnce sync.Once
	// scoping counts the elicitations on their way out: while one is,
	// frames go through scopeFrame.
	scoping atomic.Int32
	// unanswered holds the client's requests handed to the SDK whose
	// responses have not been written yet (see expect and drain).
	unanswered pendingSet
}

// newLockedWriter returns a writer to w redacting r's values (r nil:
// none).
func newLockedWriter(w io.Writer, r *secrets.Redactor) *lockedWriter {
	return &lockedWriter{w: w, redactor: r, broken: make(chan struct{})}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	frame := wireName(p)
	if l.scoping.Load() > 0 {
		frame = scopeFrame(frame)
	}
	if l.redactor != nil {
		frame = l.redactor.RedactJSON(frame) // string values only: never the structure
	}
	l.mu.Lock()
	n, err := l.w.Write(frame)
	if err == nil && n < len(frame) {
		err = io.ErrShortWrite
	}
	if err == nil {
		n = len(p)
	} else {
		n = 0
		l.brokenOnce.Do(func() { close(l.broken) })
	}
	if err == nil && l.unanswered.waiting() {
		if id, ok := responseID(p); ok {
			l.unanswered.remove(id)
		}
	}
	var fire func()
	if len(l.watchs) > 0 && err == nil {
		if id, ok := createdSession(p); ok {
			fire = l.watchs[id]
			delete(l.watchs, id)
		}
	}
	l.mu.Unlock()
	if fire != nil {
		go fire()
	}
	return n, err
}

// writeStream writes one frame in pieces: write writes them, in order, to
// the writer it is given, and nothing else is written to the client
// meanwhile. The frame is redacted as a whole (a value split across two
// pieces is caught), so it must be one message and must not be a
// response that creates a session or an elicitation/create (whose
// frames this writer rewrites).
func (l *lockedWriter) writeStream(write func(io.Writer) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.w
	if l.redactor != nil {
		if l.stream == nil {
			l.stream = l.redactor.JSONWriter(l.w)
		}
		w = l.stream
	}
	err := write(w)
	if l.stream != nil {
		if ferr := l.stream.Flush(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		l.brokenOnce.Do(func() { close(l.broken) })
	}
	return err
}

// createdSession decodes a frame written to the client and returns the
// session id of a successful response that carries one (session/new's).
func createdSession(frame []byte) (string, bool) {
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result *struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal(frame, &resp) != nil || resp.ID == nil || resp.Method != "" || resp.Result == nil || resp.Result.SessionID == "" {
		return "", false
	}
	return resp.Result.SessionID, true
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
// lines that are not JSON with a -32700 parse error, over-long lines and
// messages that are not valid JSON-RPC 2.0 requests with -32600 (the SDK
// would ignore most of them, leave a request unanswered, and die on an
// over-long line), and it checks the mcpServers of session/new,
// session/load, session/resume and session/fork, answering bad ones with
// -32602 and rewriting good ones into the shapes the SDK decodes
// correctly (see filter and normalizeServers); it renames the methods the
// SDK cannot serve as the schema has them (see extensionFor). Not safe
// for concurrent use (the SDK has one reader).
type inputFilter struct {
	ready   chan struct{} // closed by start: nothing is read before
	r       *lines.Reader
	out     io.Writer
	logger  *slog.Logger
	line    []byte
	pending []byte
	// expect, when set, is told the id of each request handed to the SDK
	// (lockedWriter.expect), before the SDK can read it.
	expect func(id json.RawMessage)
	// acpServers: initialize has advertised mcpCapabilities.acp, so
	// mcpServers may list acp servers.
	acpServers bool
}

// newInputFilter returns a filter that reads nothing until start is called
// (see start).
func newInputFilter(r io.Reader, out io.Writer, logger *slog.Logger) *inputFilter {
	return &inputFilter{ready: make(chan struct{}), r: lines.NewReader(r, 64<<10), out: out, logger: logger}
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
	line, n, err := f.r.Line(f.line, maxFrame)
	f.line = line
	if n > maxFrame {
		if id, ok := responseID(line); ok && (kindOf(id) == "string" || kindOf(id) == "number") {
			// An answer to one of our requests (a tunnelled MCP result,
			// say): the request fails now instead of at its timeout.
			f.logger.Warn("client answered with a message larger than 10 MiB; the request fails", "id", string(id))
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": internalError("the client's answer is larger than 10 MiB")})
			return append(b, '\n'), err
		}
		id, _ := leadingID(line)
		f.reply(id, &acpsdk.RequestError{Code: codeInvalidRequest, Message: "Invalid Request: message larger than 10 MiB"})
		return nil, err
	}
	if line = bytes.TrimSpace(line); len(line) == 0 {
		return nil, err
	}
	return f.filter(line), err
}

// filter checks one message and returns the line to hand on to the SDK,
// or nil when the message is answered (or dropped) here. A request that is
// not a valid JSON-RPC 2.0 request is answered with -32600, bad
// mcpServers with -32602, both naming the offending member; a message
// without a usable id is answered with a null id, as JSON-RPC requires for
// invalid requests. A valid notification the SDK must not see is logged
// and dropped, never answered. Responses are never answered: at worst
// their error member is repaired (see repairError).
func (f *inputFilter) filter(line []byte) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		if !json.Valid(line) {
			f.logger.Warn("client sent a line that is not JSON", "err", err)
			id, _ := leadingID(line) // JSON up to its id (nested too deep after it, say)
			f.reply(id, &acpsdk.RequestError{Code: codeParseError, Message: "Parse error: " + err.Error()})
			return nil
		}
		problem := "a message must be a JSON object, got " + kindOf(line)
		if kindOf(line) == "array" {
			problem += " (batches are not supported)"
		}
		f.reject(envelope{kind: kindRequest}, invalidRequest("", "%s", problem))
		return nil
	}
	env, ierr := checkEnvelope(fields)
	if ierr != nil {
		f.reject(env, ierr)
		return nil
	}
	switch {
	case env.kind == kindResponse:
		if raw, ok := fields["error"]; ok {
			if fixed, repaired := repairError(raw); repaired {
				f.logger.Warn("client answered with a malformed error; passed on as an internal error", "id", string(env.id), "kind", kindOf(raw))
				fields["error"] = fixed
			}
		}
		return canonical(fields, "jsonrpc", "id", "result", "error")
	case env.kind == kindNotification && needsID(env.method):
		f.logger.Warn("client sent a request without an id; ignored (it would get no answer)", "method", env.method)
		return nil
	case env.method == acpsdk.AgentMethodInitialize:
		f.acpServers = mcpCapabilities().Acp
	case env.method == acpsdk.AgentMethodSessionNew, env.method == acpsdk.AgentMethodSessionLoad, env.method == acpsdk.AgentMethodSessionResume,
		env.method == acpsdk.AgentMethodSessionFork:
		params, ierr := normalizeServers(fields["params"], f.acpServers)
		if ierr != nil {
			f.reject(env, ierr)
			return nil
		}
		if params != nil {
			fields["params"] = params
		}
	case env.method == acpsdk.AgentMethodSessionPrompt:
		if ierr := checkPrompt(fields["params"]); ierr != nil {
			f.reject(env, ierr)
			return nil
		}
	}
	if ierr := checkParamTypes(env.method, fields["params"]); ierr != nil {
		f.reject(env, ierr)
		return nil
	}
	if env.kind == kindRequest && f.expect != nil {
		f.expect(env.id)
	}
	if ext, ok := extensionFor(env.method, env.kind == kindNotification); ok {
		fields["method"], _ = json.Marshal(ext)
	}
	return canonical(fields, "jsonrpc", "id", "method", "params")
}

// canonical re-encodes a checked message with only the given members,
// spelled exactly, followed by a newline. The SDK matches member names
// case-insensitively (encoding/json), so a stray "Params" or "ERROR" would
// otherwise reach it unchecked.
func canonical(fields map[string]json.RawMessage, members ...string) []byte {
	out := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		if v, ok := fields[m]; ok {
			out[m] = v
		}
	}
	b, err := json.Marshal(out)
	if err != nil { // cannot happen: every value was decoded as JSON
		return nil
	}
	return append(b, '\n')
}

// reject logs an invalid message and answers it unless it is a valid
// notification with bad params (notifications are never answered).
func (f *inputFilter) reject(env envelope, err *inputError) {
	f.logger.Warn("client message rejected", "method", env.method, "id", string(env.id), "code", err.Code, "path", err.Path, "problem", err.Problem)
	if env.kind == kindNotification && err.Code == codeInvalidParams {
		return
	}
	f.reply(env.id, err.rpcError())
}

// reply writes a JSON-RPC error response; a nil id is written as null.
func (f *inputFilter) reply(id json.RawMessage, e *acpsdk.RequestError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	_, _ = f.out.Write(append(b, '\n'))
}

// expect records that the client's request id is on its way to the SDK,
// which will answer it (drain waits for that).
func (l *lockedWriter) expect(id json.RawMessage) { l.unanswered.add(id) }

// drain waits until every request expect recorded has been answered, or
// ctx ends; it returns how many are still unanswered.
func (l *lockedWriter) drain(ctx context.Context) int { return l.unanswered.wait(ctx) }

// pendingSet counts request ids (compacted JSON) until they are removed.
// Safe for concurrent use.
type pendingSet struct {
	mu      sync.Mutex
	ids     map[string]int
	n       int
	changed chan struct{} // closed at the next removal; nil when no one waits
	open    atomic.Int64  // n, read without the lock: writes look for responses only while some are due
}

// idKey is the canonical form of a JSON-RPC id.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

func (p *pendingSet) add(id json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]int{}
	}
	p.ids[idKey(id)]++
	p.n++
	p.open.Store(int64(p.n))
}

// waiting reports whether responses are worth looking for: some request
// is unanswered.
func (p *pendingSet) waiting() bool { return p.open.Load() > 0 }

func (p *pendingSet) remove(id json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := idKey(id)
	if p.ids[k] == 0 {
		return // a response to a request the filter answered itself
	}
	if p.ids[k]--; p.ids[k] == 0 {
		delete(p.ids, k)
	}
	p.n--
	p.open.Store(int64(p.n))
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// wait blocks until the set is empty or ctx ends; it returns the ids left.
func (p *pendingSet) wait(ctx context.Context) int {
	for {
		p.mu.Lock()
		n := p.n
		if n == 0 {
			p.mu.Unlock()
			return 0
		}
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return n
		}
	}
}

// leadingID returns the id of a message that is cut short or not JSON as
// a whole (over 10 MiB, nested too deep) when its id is a string or a
// number among the members before its params (or result, error): those
// are all that is read.
func leadingID(line []byte) (json.RawMessage, bool) {
	id, _ := leadingMembers(line, "params", "result", "error")
	if k := kindOf(id); id != nil && (k == "string" || k == "number") {
		return id, true
	}
	return nil, false
}

// responseID returns the id of a frame the SDK writes when it is a
// response (an id and no method). The SDK writes "jsonrpc", "id" and then
// "method" or "result"/"error", in that order, so only the frame's first
// members are read, however large its result: the first bytes of a
// frame are enough (the input filter reads a client's over-long answer
// so, when the client writes its id first too).
func responseID(frame []byte) (json.RawMessage, bool) {
	id, at := leadingMembers(frame, "method", "result", "error")
	return id, id != nil && (at == "result" || at == "error")
}

// leadingMembers reads the top-level members of the JSON object frame
// starts with, in order, each whole, until one named in stop (at: its
// name; its value is not read), the object's end or the first member
// that does not decode (at: ""). It returns the id member if one came
// before.
func leadingMembers(frame []byte, stop ...string) (id json.RawMessage, at string) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return id, ""
		}
		if slices.Contains(stop, key) {
			return id, key
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return id, ""
		}
		if key == "id" {
			id = v
		}
	}
	return id, ""
}
