package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// TestCallTitle: the telling argument (a command, else a query, else a
// path, else a URL, by its name) follows the tool's title, one line of
// display text, cut; calls without one keep the title.
func TestCallTitle(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	for _, c := range []struct{ args, want string }{
		{`{"path":"/src/main.go"}`, "Read /src/main.go"},
		{`{"file_path":"/a","pattern":"TODO"}`, `Read "TODO"`},
		{`{"filePath":"/a","url":"https://x"}`, "Read /a"},
		{`{"command":"go test\n ./...","path":"/a"}`, "Read `go test ./...`"},
		{`{"url":"https://example.com"}`, "Read https://example.com"},
		{`{"q":"bidi\u202e\u0007 text"}`, `Read "bidi text"`},
		{`{"path":""}`, "Read"},
		{`{"path":3}`, "Read"},
		{`{"text":"hello"}`, "Read"},
		{`[1]`, "Read"},
		{`not json`, "Read"},
		{`{"path":"` + string(long) + `"}`, "Read " + string(long[:120]) + "…"},
	} {
		if got := gateway.CallTitle("Read", json.RawMessage(c.args)); got != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
}

// TestPreviewAndTitleOfCalls: a call is announced with its own title and
// the tool's preview, before it is approved; a denied call gets no
// preview; a call whose preview fails fails with its error, unasked and
// not run.
func TestPreviewAndTitleOfCalls(t *testing.T) {
	tl := namedTool("write")
	tl.Title = "Write file"
	previews := 0
	tl.Preview = func(_ context.Context, args json.RawMessage) ([]gateway.Content, error) {
		previews++
		if strings.Contains(string(args), "refused") {
			return nil, errors.New("write: path refused")
		}
		return []gateway.Content{{Type: gateway.ContentDiff, Path: "/w/a", Text: string(args)}}, nil
	}
	acc := tools(tl)
	var seen gateway.CallInfo
	acc.Approver = func(_ context.Context, call gateway.CallInfo, _ gateway.Tool) (gateway.Decision, error) {
		seen = call
		return gateway.Allow, nil
	}
	acc.Policy = func(gateway.Tool) bool { return true }
	r := gateway.NewRunner(gateway.RunnerOptions{})
	var ev events
	if _, err := r.Execute(context.Background(), "s", acc, "write", json.RawMessage(`{"path":"/w/a"}`), ev.sink); err != nil {
		t.Fatal(err)
	}
	started := ev.kinds(gateway.EventToolCallStarted)[0].Call
	for _, c := range []*gateway.CallInfo{started, &seen} {
		if c.Title != "Write file /w/a" || len(c.Content) != 1 || c.Content[0].Type != gateway.ContentDiff || c.Content[0].Text != `{"path":"/w/a"}` {
			t.Errorf("call %+v", c)
		}
	}
	acc.Policy = func(gateway.Tool) bool { return false }
	_, _ = r.Execute(context.Background(), "s", acc, "write", json.RawMessage(`{"path":"/w/a"}`), nil)
	if previews != 1 {
		t.Errorf("%d previews, want 1 (none for a denied call)", previews)
	}
	acc.Policy = func(gateway.Tool) bool { return true }
	seen = gateway.CallInfo{}
	res, err := r.Execute(context.Background(), "s", acc, "write", json.RawMessage(`{"path":"/refused"}`), nil)
	if err != nil || !res.IsError || res.ModelText() != "write: path refused" || seen.ID != "" {
		t.Errorf("a refused preview: %+v %v, approver saw %+v", res, err, seen)
	}
}
