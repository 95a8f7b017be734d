package secrets

// Held returns how many bytes of the input s holds back (not yet
// represented in what it returned).
func (s *StreamRedactor) Held() int { return len(s.pending) - s.covered }
