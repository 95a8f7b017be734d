// Package scripted is the HTTP side the scripted model fakes
// (internal/testsupport/fake/fakellm, internal/testsupport/fake/fakeanthropic) share: a server on
// 127.0.0.1 whose handlers Close waits for, a script of turns taken in
// order, the wait of a turn that holds its answer, and the bodies they
// write (JSON, server-sent events, text cut into streamed pieces).
//
// What a fake records of its requests and the shape of its answers stay
// the fake's own.
package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Server serves one fake's handler on 127.0.0.1 and holds its script of
// turns T. The zero value is not usable; use Start. Its methods are safe
// for concurrent use.
type Server[T any] struct {
	// URL is the server's root, as http://127.0.0.1:PORT.
	URL string

	srv       *http.Server
	done      chan struct{} // closed by Close: every Wait ends
	closeOnce sync.Once
	inflight  sync.WaitGroup

	mu     sync.Mutex
	script []T
	next   int
	closed bool // set by Close: no handler starts any more
}

// Start serves handler on a free port of 127.0.0.1 with script as the
// first turns. It panics if it cannot listen (name, the fake's, says who
// could not). Call Close when done.
func Start[T any](name string, handler http.HandlerFunc, script []T) *Server[T] {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("%s: listen: %v", name, err))
	}
	s := &Server[T]{URL: "http://" + ln.Addr().String(), done: make(chan struct{}), script: append([]T(nil), script...)}
	s.srv = &http.Server{Handler: s.track(handler), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// track runs h for each request unless the server is closed, counted so
// that Close can wait for it.
func (s *Server[T]) track(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Add under mu, never after Close marked the server closed: a
		// WaitGroup's Add must not race with its Wait.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()
		h(w, r)
	}
}

// Close shuts the server down: it ends every Wait, closes the listener
// and the connections and waits for the handlers to return. It may be
// called more than once.
func (s *Server[T]) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		_ = s.srv.Close()
		s.inflight.Wait()
	})
}

// Push appends turns to the script.
func (s *Server[T]) Push(turns ...T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Remaining returns how many turns have not been taken.
func (s *Server[T]) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// Next takes the script's next turn (ok false: it is exhausted).
func (s *Server[T]) Next() (turn T, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.script) {
		return turn, false
	}
	s.next++
	return s.script[s.next-1], true
}

// Wait blocks until ch is closed (true), or r's request ends or the
// server closes (false).
func (s *Server[T]) Wait(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

// ReadRequest reads r's body and decodes it with decode, which returns
// the request as far as it could decode it and, if it could not decode
// all of it, why (decErr). ok is false when the body could not be read:
// the client is gone and nothing is to be answered.
func ReadRequest[R any](r *http.Request, decode func(body []byte, h http.Header) (R, error)) (req R, body []byte, decErr error, ok bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return req, nil, nil, false
	}
	req, decErr = decode(body, r.Header.Clone())
	return req, body, decErr, true
}

// Begin starts the answer to r with a turn's own settings: started, when
// not nil, is closed; hold, when not nil, is waited for (Wait), and the
// connection dropped without an answer when r or the server ends first;
// then header's values are set on the response.
func (s *Server[T]) Begin(w http.ResponseWriter, r *http.Request, started chan struct{}, hold <-chan struct{}, header http.Header) {
	if started != nil {
		close(started)
	}
	if hold != nil && !s.Wait(r, hold) {
		panic(http.ErrAbortHandler) // drop the connection without answering
	}
	for k, v := range header {
		w.Header()[http.CanonicalHeaderKey(k)] = v
	}
}

// WriteJSON writes v as the JSON body of a response with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// StartEvents starts a 200 response of server-sent events and returns
// the controller to flush each event with.
func StartEvents(w http.ResponseWriter) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return http.NewResponseController(w)
}

// Split cuts s into pieces of at most size bytes on rune boundaries (a
// piece holds at least one rune). Split of "" is nil.
func Split(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		for n < size && n < len(s) {
			_, l := utf8.DecodeRuneInString(s[n:])
			if n+l > size {
				break
			}
			n += l
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
