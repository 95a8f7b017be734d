package fakeanthropic

import (
	"testing"

	"github.com/acpgate/acpgate/gateway/anthropic"
)

// Provider returns acpgate's Anthropic provider pointed at s with
// DefaultModel; the other settings come from cfg.
func (s *Server) Provider(t testing.TB, cfg anthropic.Config) *anthropic.Provider {
	t.Helper()
	cfg.BaseURL, cfg.Model = s.URL, DefaultModel
	p, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
