package fakellm

// This file is the server's context window: requests are counted, those
// longer than the window refused as OpenAI refuses them, and a responder
// may answer requests by what they hold.

// BytesPerToken is how the server counts a request: its body's bytes
// divided by this (no tokenizer: a count anyone can predict).
const BytesPerToken = 4

// Tokens is the size the server counts for a request body.
func Tokens(body []byte) int { return len(body) / BytesPerToken }

// Responder answers a request by what it holds: ok false leaves it to the
// script. It is called from the request's handler, without the server's
// lock held.
type Responder func(req Request) (turn Turn, ok bool)

// Stats counts the chat completion requests the server received.
type Stats struct {
	Requests int // all of them
	Refused  int // those refused as longer than the window
	// MaxTokens is the largest size of a request that was not refused;
	// Tokens the sizes of those requests summed.
	MaxTokens int
	Tokens    int
}

// windowState is the window, the responder and the counts; guarded by the
// server's mu.
type windowState struct {
	window  int // 0: none
	respond Responder
	forget  bool // requests are counted, not kept
	stats   Stats
}

// SetWindow makes the server refuse requests of more than tokens tokens
// ([Tokens]) with OpenAI's error: HTTP 400 {"error": {"message": "This
// model's maximum context length is …", "type": "invalid_request_error",
// "code": "context_length_exceeded"}}, consuming no turn. It also makes
// the usage of a turn without its own Usage report the request's size as
// prompt_tokens. 0 turns the window off.
func (s *Server) SetWindow(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.win.window = tokens
}

// SetResponder makes r answer each request first (nil: the script alone).
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.win.respond = r
}

// ForgetRequests stops keeping the requests received (long runs): they
// are still counted in Stats, and no longer returned by Requests.
func (s *Server) ForgetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.win.forget = true
}

// Stats returns the counts of the requests received.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.win.stats
}

// record keeps and counts req, refusing it if it is longer than the
// window. It returns the request's number, the window and the responder.
func (s *Server) record(req *Request) (n, window int, respond Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.win.stats
	st.Requests++
	window = s.win.window
	if req.DecodeError == "" && window > 0 && req.Tokens > window {
		req.Refused = true
		st.Refused++
	} else if req.DecodeError == "" {
		st.MaxTokens = max(st.MaxTokens, req.Tokens)
		st.Tokens += req.Tokens
	}
	if !s.win.forget {
		s.requests = append(s.requests, *req)
	}
	return st.Requests, window, s.win.respond
}
