package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// sawMessage records a client's notifications/cancelled as
// "notice cancelled <requestId>" (mcp-go's server acts on it before any
// hook or handler of ours could see it).
func (a *app) sawMessage(raw []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method != string(mcp.MethodNotificationCancelled) {
		return
	}
	a.rec.event("notice cancelled %s", m.Params.RequestID)
}

// watchInput returns r with every line passed to sawMessage before it is
// read from the result (stdio mode).
func (a *app) watchInput(r io.Reader) io.Reader {
	return takeLines(r, func(line []byte) bool {
		a.sawMessage(line)
		return false
	})
}

// watchPOST passes the body of every POST to sawMessage before h serves
// it (http and sse modes).
func (a *app) watchPOST(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "read body", http.StatusBadRequest)
				return
			}
			a.sawMessage(body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
}
