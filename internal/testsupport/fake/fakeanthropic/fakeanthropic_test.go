package fakeanthropic_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	fake "github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	res, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res, m
}

// TestWholeMessageAndRecording: a request without "stream" gets the
// whole message; requests are recorded with their breakpoints; a body
// that does not decode is a 400 that consumes no turn; an exhausted
// script is a 500 the SDK does not retry.
func TestWholeMessageAndRecording(t *testing.T) {
	t.Parallel()
	srv := fake.Start(fake.Turn{Blocks: []fake.Block{fake.Thinking("hm", "sig"), fake.ToolUse("", "t", `{"a":1}`)}})
	defer srv.Close()
	if res, _ := post(t, srv.URL, `{"model":"m"}`); res.StatusCode != 400 || srv.Remaining() != 1 {
		t.Fatalf("no max_tokens: %d, %d turns left", res.StatusCode, srv.Remaining())
	}
	res, m := post(t, srv.URL, `{"model":"m","max_tokens":10,"system":"s","tools":[{"name":"t","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]}`)
	if res.StatusCode != 200 || m["stop_reason"] != "tool_use" {
		t.Fatalf("%d %v", res.StatusCode, m)
	}
	content, _ := json.Marshal(m["content"])
	if !strings.Contains(string(content), `"signature":"sig"`) || !strings.Contains(string(content), `"id":"toolu_2_1"`) {
		t.Errorf("content %s", content)
	}
	req := srv.Requests()[1]
	if got := req.Breakpoints(); !slices.Equal(got, []string{"tools[0]", "messages[1].content[0]"}) {
		t.Errorf("breakpoints %v", got)
	}
	if req.Messages[0].Text() != "hi" || len(req.System) != 1 {
		t.Errorf("request %+v", req)
	}
	if res, _ := post(t, srv.URL, `{"model":"m","max_tokens":10,"messages":[]}`); res.StatusCode != 500 || res.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("exhausted: %d %v", res.StatusCode, res.Header)
	}
}
