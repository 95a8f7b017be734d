package fakellm

import (
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
)

// Provider returns acpgate's OpenAI-compatible provider pointed at s with
// DefaultModel; the other settings come from cfg.
func (s *Server) Provider(t testing.TB, cfg openaicompat.Config) gateway.Provider {
	t.Helper()
	cfg.BaseURL, cfg.Model = s.URL, DefaultModel
	p, err := openaicompat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
