package gateway_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// TestExplainStatus: each shared status says what to check, naming the
// endpoint (and the model when it was not found); all wrap ErrProvider.
func TestExplainStatus(t *testing.T) {
	for code, want := range map[int]string{
		404: `model "m" not found at http://x (404: gone); check the model name`,
		429: "http://x is rate limiting requests (429: gone), still after retries",
		503: "http://x failed (503: gone), still after retries",
		418: "http://x answered 418: gone",
	} {
		err := gateway.ExplainStatus("http://x", "m", code, "gone")
		if !errors.Is(err, gateway.ErrProvider) || !strings.Contains(err.Error(), want) {
			t.Errorf("%d: %v, want %q", code, err, want)
		}
	}
}

// TestExplainFailure: a network error says the endpoint cannot be
// reached; another error is kept as it is; both stay inspectable.
func TestExplainFailure(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	err := gateway.ExplainFailure("http://x", netErr)
	if !errors.Is(err, gateway.ErrProvider) || !errors.Is(err, netErr) || !strings.Contains(err.Error(), "cannot reach the model provider at http://x") {
		t.Errorf("network error: %v", err)
	}
	other := errors.New("odd")
	err = gateway.ExplainFailure("http://x", other)
	if !errors.Is(err, gateway.ErrProvider) || !errors.Is(err, other) || strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("other error: %v", err)
	}
}
