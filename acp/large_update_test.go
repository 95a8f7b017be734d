package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// awkwardText is a text of n bytes (n > 3 × spliceChunk) with what JSON
// escapes or replaces, and multi-byte and invalid UTF-8 sequences, around
// the places where it is cut into pieces.
func awkwardText(n int) string {
	var b strings.Builder
	pad := func(to int) { b.WriteString(strings.Repeat("x", to-b.Len())) }
	pad(spliceChunk - 2)
	b.WriteString("€") // a 3-byte rune across the first cut
	b.WriteString(`<a href="x">&</a> \ / ` + "\u2028\u2029\t\x01\x7f")
	pad(2*spliceChunk - 1)
	b.WriteString("\xff\x80\x80\x80\x80\x80😀\xe2\x82") // invalid bytes, then a rune, then a cut-short one
	pad(3*spliceChunk - 3)
	b.WriteString("😀") // a 4-byte rune across the third cut
	pad(n)
	return b.String()
}

// largeContent is content with large strings in every field a tool call
// shows, and small ones.
func largeContent() []gateway.Content {
	old := strings.Repeat("old line\n", spliceMin/8)
	return []gateway.Content{
		{Type: gateway.ContentText, Text: "small"},
		{Type: gateway.ContentText, Text: awkwardText(4*spliceChunk + 17)},
		{Type: gateway.ContentImage, Data: strings.Repeat("iVBORw0KGgo=", spliceMin/10), MIMEType: "image/png"},
		{Type: gateway.ContentDiff, Path: "/w/a.go", OldText: &old, Text: awkwardText(3*spliceChunk + 10)},
		{Type: gateway.ContentResource, URI: "test://r", Text: awkwardText(5 * spliceChunk)},
		{Type: gateway.ContentTerminal, TerminalID: "term-1", Text: awkwardText(5 * spliceChunk)},
	}
}

// finishedUpdate is the update of a finished call showing content.
func finishedUpdate(content []gateway.Content) acpsdk.SessionUpdate {
	return acpsdk.UpdateToolCall("call-1", acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithUpdateContent(toolContent(content)), acpsdk.WithUpdateRawOutput(map[string]any{"isError": false}))
}

// sdkFrame is the frame pe.update writes for update u of session sid: the
// SDK's encoding of the update, sent by the connection.
func sdkFrame(t *testing.T, sid string, u acpsdk.SessionUpdate) []byte {
	t.Helper()
	var out bytes.Buffer
	conn := jsonrpc.New(strings.NewReader(""), &out, jsonrpc.Options{Handler: func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil }})
	conn.Start()
	<-conn.Done()
	if err := (clientCalls{conn: conn}).SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: acpsdk.SessionId(sid), Update: u}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// splicedFrame is the frame updateSpliced writes for content in session
// sid, through a writer redacting r's values (r nil: none).
func splicedFrame(t *testing.T, sid string, content []gateway.Content, r *secrets.Redactor) []byte {
	t.Helper()
	var out bytes.Buffer
	pe := &peer{out: newLockedWriter(&out, r), logger: slog.New(slog.DiscardHandler)}
	sp := newSplicer()
	held := sp.content(content)
	if len(sp.texts) == 0 {
		t.Fatal("nothing was held")
	}
	pe.updateSpliced(&liveSession{id: sid, ctx: context.Background()}, toolUpdate{update: finishedUpdate(held)}, sp)
	return out.Bytes()
}

// TestSplicedUpdateIsTheSDKs: an update whose large strings are written in
// pieces is, byte for byte, the frame the SDK writes for it; the content
// it was given is left as it was.
func TestSplicedUpdateIsTheSDKs(t *testing.T) {
	content := largeContent()
	before := mustJSON(t, content)
	want := sdkFrame(t, "sess-1", finishedUpdate(content))
	got := splicedFrame(t, "sess-1", content, nil)
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("frames differ at byte %d of %d/%d:\n got …%.80q\nwant …%.80q", i, len(got), len(want), got[max(0, i-20):], want[max(0, i-20):])
	}
	if mustJSON(t, content) != before {
		t.Error("the content was changed")
	}
}

// TestSplicedUpdateRedacted: a secret anywhere in a large update, across
// the cut between two pieces too, is redacted as in a frame written
// whole.
func TestSplicedUpdateRedacted(t *testing.T) {
	const secret = `tok"en-0123456789`
	content := largeContent()
	text := []byte(content[1].Text)
	for _, at := range []int{10, spliceChunk - 5, 2*spliceChunk - 1, len(text) - len(secret)} {
		copy(text[at:], secret)
	}
	content[1].Text = string(text)
	r := secrets.NewRedactor()
	r.Add(secret)
	want := r.RedactBytes(sdkFrame(t, "sess-1", finishedUpdate(content)))
	got := splicedFrame(t, "sess-1", content, r)
	if !bytes.Equal(got, want) || bytes.Contains(got, []byte("0123456789")) {
		t.Errorf("redacted frames differ (%d and %d bytes, secret left: %v)", len(got), len(want), bytes.Contains(got, []byte("0123456789")))
	}
	if n := bytes.Count(got, []byte(secrets.Redacted)); n != 4 {
		t.Errorf("%d redactions, want 4", n)
	}
}

// TestSplicedJSON: the stored record built with held strings is what
// encoding/json makes of the update.
func TestSplicedJSON(t *testing.T) {
	content := largeContent()
	want, err := json.Marshal(finishedUpdate(content))
	if err != nil {
		t.Fatal(err)
	}
	sp := newSplicer()
	got, err := sp.json(finishedUpdate(sp.content(content)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("records differ (%d and %d bytes)", len(got), len(want))
	}
}

// TestSplicedUpdateClosedSession: as for any update, nothing is sent
// for a session that is closing.
func TestSplicedUpdateClosedSession(t *testing.T) {
	var out bytes.Buffer
	pe := &peer{out: newLockedWriter(&out, nil), logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sp := newSplicer()
	pe.updateSpliced(&liveSession{id: "s", ctx: ctx}, toolUpdate{update: finishedUpdate(sp.content(largeContent()))}, sp)
	if out.Len() != 0 {
		t.Errorf("sent %d bytes", out.Len())
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
