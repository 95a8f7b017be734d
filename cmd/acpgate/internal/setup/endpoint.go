package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// The kinds of [EndpointError], for errors.Is.
var (
	// ErrKeyRefused: the endpoint answered 401 or 403.
	ErrKeyRefused = errors.New("the endpoint refused the API key")
	// ErrUnreachable: no answer (connection refused, no such host, a
	// timeout, TLS).
	ErrUnreachable = errors.New("the endpoint cannot be reached")
	// ErrWrongPath: the URL answered, but not with an OpenAI-compatible
	// model list (404, or another body).
	ErrWrongPath = errors.New("the URL is not an OpenAI-compatible endpoint")
	// ErrEndpoint: any other failure status.
	ErrEndpoint = errors.New("the endpoint failed")
)

// EndpointError is a failed check of an endpoint: its Kind is one of the
// errors above, and its message says what to check.
type EndpointError struct {
	// URL is what was requested.
	URL string
	// Kind is ErrKeyRefused, ErrUnreachable, ErrWrongPath or ErrEndpoint.
	Kind error
	// Status is the HTTP status (0: no answer).
	Status int
	// Detail is the server's error message, or what was wrong with the
	// body ("" if none).
	Detail string
	// Err is the transport's error, for ErrUnreachable.
	Err error
	// API is the API the endpoint was checked as: "" for
	// OpenAI-compatible, config.ProviderAnthropic for Anthropic's.
	API string
}

// Error says what failed and what to check.
func (e *EndpointError) Error() string {
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (%d %s)", e.Status, http.StatusText(e.Status))
	}
	detail := ""
	if e.Detail != "" {
		detail = ": " + e.Detail
	}
	switch e.Kind {
	case ErrKeyRefused:
		return fmt.Sprintf("GET %s: the endpoint refused the API key%s: check the key", e.URL, status)
	case ErrUnreachable:
		return fmt.Sprintf("GET %s: cannot reach the endpoint: %v: check the URL and that the server is running", e.URL, e.Err)
	case ErrWrongPath:
		if e.API == config.ProviderAnthropic {
			return fmt.Sprintf("GET %s: not an Anthropic model list%s%s: check the base URL (the API root, such as %s)", e.URL, status, detail, gateway.AnthropicBaseURL)
		}
		return fmt.Sprintf("GET %s: not an OpenAI-compatible model list%s%s: check the base URL (it usually ends in /v1)", e.URL, status, detail)
	}
	return fmt.Sprintf("GET %s: the endpoint failed%s%s", e.URL, status, detail)
}

// Unwrap returns the kind and the transport's error.
func (e *EndpointError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// maxListBytes bounds the model list read (OpenRouter's is about 1 MB).
const maxListBytes = 16 << 20

// check checks the endpoint at baseURL with key ("": none): GET
// baseURL+keyPath first when keyPath is set (only its 401 and 403, and no
// answer, count), then GET baseURL/models, whose model ids it returns in
// the endpoint's order. A failure is an *EndpointError. check is safe for
// concurrent use.
func check(ctx context.Context, client *http.Client, baseURL, key, keyPath string) ([]string, error) {
	auth := map[string]string{}
	if key != "" {
		auth["Authorization"] = "Bearer " + key
	}
	if keyPath != "" && key != "" {
		res, body, err := get(ctx, client, trimURL(baseURL)+keyPath, auth)
		if err != nil {
			return nil, err
		}
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
			return nil, &EndpointError{URL: res.Request.URL.String(), Kind: ErrKeyRefused, Status: res.StatusCode, Detail: serverMessage(body)}
		}
	}
	page, err := getModels(ctx, client, trimURL(baseURL)+"/models", auth, "")
	if err != nil {
		return nil, err
	}
	return page.ids, nil
}

// modelPage is one answer of a model list: the ids of its data list, in
// its order, and on Anthropic's API whether more follow, after which id.
type modelPage struct {
	ids     []string
	hasMore bool
	lastID  string
}

// getModels reads the model list (page) at u, sending headers. A failure
// is an *EndpointError whose API is api ("" for OpenAI-compatible).
func getModels(ctx context.Context, client *http.Client, u string, headers map[string]string, api string) (modelPage, error) {
	res, body, err := get(ctx, client, u, headers)
	if ee := (*EndpointError)(nil); errors.As(err, &ee) {
		ee.API = api
	}
	if err != nil {
		return modelPage{}, err
	}
	e := &EndpointError{URL: res.Request.URL.String(), Status: res.StatusCode, Detail: serverMessage(body), API: api}
	if err := e.classify(); err != nil {
		return modelPage{}, err
	}
	var list struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
		HasMore bool   `json:"has_more"`
		LastID  string `json:"last_id"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		e.Kind, e.Detail = ErrWrongPath, "the answer is not a JSON object with a \"data\" list"
		return modelPage{}, e
	}
	page := modelPage{ids: make([]string, 0, len(*list.Data)), hasMore: list.HasMore, lastID: list.LastID}
	for _, m := range *list.Data {
		if m.ID != "" {
			page.ids = append(page.ids, m.ID)
		}
	}
	return page, nil
}

// classify sets the kind of a failure status and returns e for one (nil
// for a 2xx answer).
func (e *EndpointError) classify() error {
	switch code := e.Status; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		e.Kind = ErrKeyRefused
	case code == http.StatusNotFound:
		e.Kind = ErrWrongPath
	case code < 200 || code > 299:
		e.Kind = ErrEndpoint
	default:
		return nil
	}
	return e
}

// get sends GET url with the headers and reads the body. No answer is an
// *EndpointError of kind ErrUnreachable; the end of ctx is ctx's error.
func get(ctx context.Context, client *http.Client, url string, headers map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, &EndpointError{URL: url, Kind: ErrWrongPath, Detail: err.Error()}
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err == nil {
		defer res.Body.Close()
		var body []byte
		if body, err = io.ReadAll(io.LimitReader(res.Body, maxListBytes)); err == nil {
			return res, body, nil
		}
	}
	if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, nil, ctx.Err()
	}
	return nil, nil, &EndpointError{URL: url, Kind: ErrUnreachable, Err: err}
}

// serverMessage is the error message of an OpenAI-style error body
// ({"error": {"message": ...}} or {"error": "..."}), at most 300 runes;
// "" for other bodies.
func serverMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return ""
	}
	var msg string
	if json.Unmarshal(e.Error, &msg) != nil {
		var o struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(e.Error, &o)
		msg = o.Message
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}

// probeTimeout bounds the probe of a local server.
const probeTimeout = 700 * time.Millisecond

// detect reports, by ID, which local providers answer GET /models within
// probeTimeout, probing them in parallel.
func detect(ctx context.Context, client *http.Client, providers []Provider) map[string]bool {
	running := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range providers {
		if !p.Local {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			if _, err := check(ctx, client, p.BaseURL, "", ""); err == nil {
				mu.Lock()
				running[p.ID] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return running
}
