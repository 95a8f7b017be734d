package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/http"
)

// This file is what every Provider says alike when its endpoint fails:
// the error answers whose meaning does not depend on the API, and an
// endpoint that cannot be reached. A provider explains the answers only
// its API has (a key refused, a context window exceeded, ...) itself and
// hands the rest to ExplainStatus.

// ExplainStatus explains an error answer of the model endpoint at baseURL
// (HTTP status code, the endpoint's message) to a request for model: a
// model not found, rate limiting, a server failure, or any other status.
// The error wraps ErrProvider.
func ExplainStatus(baseURL, model string, code int, msg string) error {
	switch {
	case code == http.StatusNotFound:
		return fmt.Errorf("%w: model %q not found at %s (404: %s); check the model name and the base URL", ErrProvider, model, baseURL, msg)
	case code == http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s is rate limiting requests (429: %s), still after retries; wait and try again", ErrProvider, baseURL, msg)
	case code >= 500:
		return fmt.Errorf("%w: %s failed (%d: %s), still after retries", ErrProvider, baseURL, code, msg)
	case code == http.StatusBadRequest || code == http.StatusUnsupportedMediaType || code == http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %w: %s answered %d: %s", ErrProvider, ErrRequestRefused, baseURL, code, msg)
	default:
		return fmt.Errorf("%w: %s answered %d: %s", ErrProvider, baseURL, code, msg)
	}
}

// ErrRequestRefused is wrapped, with ErrProvider, by a Provider's error
// when the endpoint refused a request as one it cannot take (400, 415,
// 422): for a request with images or audio, the Runner takes that as the
// endpoint refusing them (MediaGate).
var ErrRequestRefused = errors.New("the endpoint refused the request")

// ExplainFailure explains err, a request to the model endpoint at baseURL
// that got no error answer: a network error says the endpoint cannot be
// reached; anything else is wrapped as it is. The error wraps ErrProvider
// and err.
func ExplainFailure(baseURL string, err error) error {
	var netErr net.Error
	var opErr *net.OpError
	if errors.As(err, &opErr) || errors.As(err, &netErr) {
		return fmt.Errorf("%w: cannot reach the model provider at %s: %w; check the base URL and that the server is running", ErrProvider, baseURL, err)
	}
	return fmt.Errorf("%w: %w", ErrProvider, err)
}
