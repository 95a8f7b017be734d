package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// signInCards shows sign-ins as cards (a client without elicitation) in
// one session, and reads back the updates sent.
type signInCards struct {
	ur      *userRequests
	s       *liveSession
	out     *bytes.Buffer
	present func(ctx context.Context, server string, p oauth.Prompt) error
}

func newSignInCards(t *testing.T) *signInCards {
	t.Helper()
	var out bytes.Buffer
	conn := jsonrpc.New(strings.NewReader(""), &out, jsonrpc.Options{Handler: func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil }})
	conn.Start()
	<-conn.Done()
	logger := slog.New(slog.DiscardHandler)
	ur := &userRequests{peer: &peer{conn: clientCalls{conn: conn}, logger: logger}, logger: logger}
	s := &liveSession{id: "sess-1", ctx: context.Background()}
	s.markAnnounced()
	return &signInCards{ur: ur, s: s, out: &out, present: ur.presentSignIn(s)}
}

// show presents prompt id of server prot, as its sign-in's goroutine does.
func (c *signInCards) show(t *testing.T, id string) {
	t.Helper()
	if err := c.present(context.Background(), "prot", oauth.Prompt{ID: id, URL: "http://127.0.0.1/authorize?" + id}); err != nil {
		t.Fatal(err)
	}
}

// event delivers a status event of server prot, as the event queue does.
func (c *signInCards) event(st mcpclient.Status) {
	st.Name = "prot"
	c.ur.signInEvent(c.s, st)
}

// statuses returns the status each card was last updated to, by card id
// (pending for a card never updated).
func (c *signInCards) statuses(t *testing.T) map[string]string {
	t.Helper()
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(c.out.Bytes()))
	for sc.Scan() {
		var n struct {
			Params struct {
				Update struct {
					ToolCallID string `json:"toolCallId"`
					Status     string `json:"status"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			t.Fatalf("frame %s: %v", sc.Bytes(), err)
		}
		got[n.Params.Update.ToolCallID] = n.Params.Update.Status
	}
	return got
}

// TestSignInCardShownBeforeThePreviousEnded: when a sign-in ends and the
// next starts at once (the Manager starts one on its own after a declined
// /mcp login), the next card can be shown before the status event saying
// the first ended is delivered. That event still fails the first card, not
// the new one, and the new one ends with its own sign-in; whatever the
// order of the new card and the event naming its prompt.
func TestSignInCardShownBeforeThePreviousEnded(t *testing.T) {
	denied := errors.New("access_denied")
	later := errors.New("timed out")
	for _, namedFirst := range []bool{false, true} {
		c := newSignInCards(t)
		c.show(t, "p3")
		c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignIn: oauth.Prompt{ID: "p3"}})
		if namedFirst {
			c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignInErr: denied})
			c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignIn: oauth.Prompt{ID: "p4"}})
			c.show(t, "p4")
		} else {
			c.show(t, "p4") // before p3's end is delivered
			c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignInErr: denied})
			if got := c.statuses(t); got["mcp-signin-prot-p3"] != "failed" || got["mcp-signin-prot-p4"] != "pending" {
				t.Fatalf("cards after p3's end (p4 shown first): %v", got)
			}
			c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignIn: oauth.Prompt{ID: "p4"}})
		}
		if got := c.statuses(t); got["mcp-signin-prot-p3"] != "failed" || got["mcp-signin-prot-p4"] != "pending" {
			t.Fatalf("cards once p4 is under way (named first: %v): %v", namedFirst, got)
		}
		if text := c.out.String(); !strings.Contains(text, "access_denied") || strings.Contains(text, "timed out") {
			t.Fatalf("p3's card does not say why it failed: %s", text)
		}
		c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignInErr: later})
		if got := c.statuses(t); got["mcp-signin-prot-p4"] != "failed" || !strings.Contains(c.out.String(), "timed out") {
			t.Fatalf("p4's card after its end (named first: %v): %v", namedFirst, got)
		}
	}
}

// TestSignInCardReplacedAndCompleted: a sign-in replaced by a new one
// closes its card; the new one's card completes once the server is
// ready, and an event of a later sign-in's prompt leaves cards alone
// that no event named yet.
func TestSignInCardReplacedAndCompleted(t *testing.T) {
	c := newSignInCards(t)
	c.show(t, "p1")
	c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignIn: oauth.Prompt{ID: "p1"}})
	c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth, SignIn: oauth.Prompt{ID: "p2"}})
	c.show(t, "p2")
	if got := c.statuses(t); got["mcp-signin-prot-p1"] != "failed" || got["mcp-signin-prot-p2"] != "pending" {
		t.Fatalf("cards after p2 replaced p1: %v", got)
	}
	c.event(mcpclient.Status{State: mcpclient.StateNeedsAuth})
	c.event(mcpclient.Status{State: mcpclient.StateConnecting})
	if got := c.statuses(t); got["mcp-signin-prot-p2"] != "pending" {
		t.Fatalf("p2's card before the server is ready: %v", got)
	}
	c.event(mcpclient.Status{State: mcpclient.StateReady, Tools: 2})
	if got := c.statuses(t); got["mcp-signin-prot-p2"] != "completed" {
		t.Fatalf("p2's card once ready: %v", got)
	}
}
