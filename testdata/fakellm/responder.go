package fakellm

// Responder answers a request by what it holds: ok false leaves it to the
// script. It is called from the request's handler, without the server's
// lock held.
type Responder func(req Request) (turn Turn, ok bool)

// SetResponder makes r answer each request first (nil: the script alone).
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = r
}
