package mcpclient

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// TestSupersededSignInEnd: the end of a sign-in that a newer one
// replaced, arriving after the newer one's prompt is in the status,
// changes nothing (no event, the new prompt stays); the newer one's end
// clears it with its error.
func TestSupersededSignInEnd(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var prompts []string // the prompt of each status event, in order
	var superseded bool  // an event carried the old sign-in's end
	m, err := New([]ServerSpec{{Name: "s", Transport: TransportHTTP, URL: "http://127.0.0.1:1/mcp"}}, &Options{OnEvent: func(e Event) {
		mu.Lock()
		prompts = append(prompts, e.Status.SignIn.ID)
		superseded = superseded || errors.Is(e.Status.SignInErr, errSuperseded)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	s, err := m.fleet.server("s")
	if err != nil {
		t.Fatal(err)
	}
	s.setPrompt(oauth.Prompt{ID: "old", URL: "http://127.0.0.1:1/a"})
	s.setPrompt(oauth.Prompt{ID: "new", URL: "http://127.0.0.1:1/b"})
	s.endPrompt("old", errSuperseded)
	if st := s.status(); st.SignIn.ID != "new" || st.SignInErr != nil {
		t.Fatalf("after the old sign-in's end: prompt %q, err %v", st.SignIn.ID, st.SignInErr)
	}
	s.endPrompt("", errors.New("never presented"))
	if st := s.status(); st.SignIn.ID != "new" {
		t.Fatalf("a sign-in that presented nothing cleared the prompt: %+v", st.SignIn)
	}
	denied := errors.New("access_denied")
	s.endPrompt("new", denied)
	if st := s.status(); st.SignIn.ID != "" || !errors.Is(st.SignInErr, denied) {
		t.Fatalf("after the new sign-in's end: prompt %q, err %v", st.SignIn.ID, st.SignInErr)
	}
	// The events, once delivered: old, new, then the end of new (and
	// the close's); none of them the old one's end.
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(prompts, ","); !strings.HasPrefix(got, "old,new,") || superseded {
		t.Errorf("status events named the prompts %q (the old end among them: %v), want old, new, then none", got, superseded)
	}
}
