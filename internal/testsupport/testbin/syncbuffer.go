package testbin

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer for a writer in one goroutine (a child
// process's stderr, a logger) and a reader in another (the test). Its zero
// value is an empty buffer; all methods are safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer; it never fails.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns a copy of everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
