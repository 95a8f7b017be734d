package mcpclient_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// A stdio server that speaks 2026-07-28 is used on 2026-07-28 (alone or
// besides 2025-11-25, and however slowly it answers the probe); one that
// refuses server/discover stays on 2025-11-25. Calls work either way.
func TestProtocolChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"2026-07-28", []string{"-protocol", "2026-07-28"}, "2026-07-28"},
		{"both", []string{"-protocol", "both"}, "2026-07-28"},
		{"2025-11-25", []string{"-protocol", "2025-11-25"}, "2025-11-25"},
		// It pings at once but answers server/discover late: the probe is
		// cut short, initialize is refused, and the retry waits.
		{"2026-07-28 slow discover", []string{"-protocol", "2026-07-28", "-init-delay", "300ms"}, "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := fastOpts(t)
			m := start(t, opts, stdio("s", tc.args...))
			mustReady(t, m, "s")
			if st, _ := m.Status("s"); st.ProtocolVersion != tc.want {
				t.Errorf("protocol %q, want %q", st.ProtocolVersion, tc.want)
			}
			if got := text(t, call(t, m, "s", "echo", map[string]any{"text": "hi"})); got != "hi" {
				t.Errorf("echo %q", got)
			}
		})
	}
}

// A server's instructions reach its Status, from its initialize result
// on 2025-11-25 and from its server/discover result on 2026-07-28.
func TestInstructions(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			opts, _ := fastOpts(t)
			m := start(t, opts, stdio("s", "-protocol", protocol, "-instructions", "Use echo to repeat text."))
			mustReady(t, m, "s")
			if st, _ := m.Status("s"); st.ProtocolVersion != protocol || st.Instructions != "Use echo to repeat text." {
				t.Errorf("protocol %q, instructions %q", st.ProtocolVersion, st.Instructions)
			}
		})
	}
}

// A server that ignores unknown methods (it answers a ping, but never
// server/discover) is not waited for: the ping behind the probe shows it,
// and it is initialized on its own revision.
func TestServerIgnoringDiscover(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	spec := mcpclient.ServerSpec{
		Name: "old", Command: os.Args[0], Env: map[string]string{"MCPCLIENT_TEST_OLD_SERVER": "1", "OLD_SERVER_IGNORE_UNKNOWN": "1"},
		// Far longer than mcp-go's own 5 s probe timeout would cost.
		ConnectTimeout: time.Minute,
	}
	m := start(t, opts, spec)
	if st, _ := m.Status("old"); st.State != mcpclient.StateReady || st.ProtocolVersion != "2024-11-05" {
		t.Fatalf("%+v", st)
	}
}

// A 2026-07-28 call's input_required result is answered through the
// Elicitor, attributed to the call, and the call is retried with the
// answer.
func TestInputRequired(t *testing.T) {
	t.Parallel()
	h := &handlers{ElicitFunc: func(context.Context, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, stdio("s", "-protocol", "2026-07-28"))
	got := text(t, call(t, m, "s", "ask", map[string]any{"message": "Who?"}))
	if !strings.HasPrefix(got, "answer ") || !strings.Contains(got, `"name":"Ann"`) || !strings.Contains(got, `"action":"accept"`) {
		t.Errorf("the server got %s", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.elicits) != 1 || h.elicits[0].Tool != "ask" || h.elicits[0].Server != "s" || h.elicits[0].Message != "Who?" {
		t.Errorf("elicitations %+v", h.elicits)
	}
}

// A tools/list ttlMs is honoured: the list is listed again when it
// expires, so a change the server does not announce is seen.
func TestToolsTTL(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, stdio("s", "-protocol", "2026-07-28", "-tools-ttl", "300ms"))
	call(t, m, "s", "add_tool", map[string]any{"name": "late"})
	events.wait(t, "the late tool after the list expired", func(mcpclient.Event) bool { return hasTool(m, "s", "late") })
}

// On 2026-07-28 list_changed notifications still arrive (asked for with
// subscriptions/listen).
func TestModernListChanged(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, stdio("s", "-protocol", "2026-07-28"))
	call(t, m, "s", "add_tool", map[string]any{"name": "late"})
	events.wait(t, "tools changed", func(e mcpclient.Event) bool {
		return e.Kind == mcpclient.EventToolsChanged && hasTool(m, "s", "late")
	})
}

// A streamable HTTP server that speaks 2026-07-28 is used on 2026-07-28
// too, one that does not stays on 2025-11-25 (with its GET stream), and a
// legacy SSE server is not offered the new revision. Either way calls
// work, and list_changed notifications arrive (subscriptions/listen, or
// the GET stream).
func TestProtocolChoiceHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode string
		args       []string
		want       string
	}{
		{"http 2026-07-28", "http", []string{"-protocol", "2026-07-28"}, "2026-07-28"},
		{"http both", "http", []string{"-protocol", "both"}, "2026-07-28"},
		{"http 2025-11-25", "http", []string{"-protocol", "2025-11-25"}, "2025-11-25"},
		// It answers server/discover with {}: mcp-go's transport takes
		// that for a 2026-07-28 start (no GET stream); acpgate connects
		// again on 2025-11-25, so list_changed still arrives.
		{"http empty discover", "http", []string{"-protocol", "2025-11-25", "-discover-empty"}, "2025-11-25"},
		{"sse both", "sse", []string{"-protocol", "both"}, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := fastOpts(t)
			events := newEventLog()
			opts.OnEvent = events.add
			tr := mcpclient.TransportHTTP
			if tc.mode == "sse" {
				tr = mcpclient.TransportSSE
			}
			m := start(t, opts, mcpclient.ServerSpec{Name: "s", Transport: tr, URL: netServer(t, tc.mode, tc.args...)})
			mustReady(t, m, "s")
			if st, _ := m.Status("s"); st.ProtocolVersion != tc.want {
				t.Errorf("protocol %q, want %q", st.ProtocolVersion, tc.want)
			}
			if got := text(t, call(t, m, "s", "echo", map[string]any{"text": "hi"})); got != "hi" {
				t.Errorf("echo %q", got)
			}
			call(t, m, "s", "add_tool", map[string]any{"name": "late"})
			events.wait(t, "tools changed", func(e mcpclient.Event) bool {
				return e.Kind == mcpclient.EventToolsChanged && hasTool(m, "s", "late")
			})
		})
	}
}

// Over streamable HTTP on 2026-07-28, an input_required result is
// answered through the Elicitor like on stdio.
func TestInputRequiredHTTP(t *testing.T) {
	t.Parallel()
	h := &handlers{ElicitFunc: func(context.Context, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportHTTP, URL: netServer(t, "http", "-protocol", "2026-07-28")})
	if st, _ := m.Status("s"); st.ProtocolVersion != "2026-07-28" {
		t.Fatalf("protocol %q", st.ProtocolVersion)
	}
	got := text(t, call(t, m, "s", "ask", map[string]any{"message": "Who?"}))
	if !strings.Contains(got, `"name":"Ann"`) {
		t.Errorf("the server got %s", got)
	}
}

// On 2026-07-28 (no resources/subscribe) a subscription is part of the
// subscriptions/listen filter: Subscribe returns once the server
// acknowledged it, and the resource's updates arrive; over stdio and
// streamable HTTP.
func TestModernSubscriptions(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			opts, _ := fastOpts(t)
			events := newEventLog()
			opts.OnEvent = events.add
			spec := stdio("s", "-live", "-protocol", "2026-07-28")
			if mode == "http" {
				spec = mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportHTTP, URL: netServer(t, "http", "-live", "-protocol", "2026-07-28")}
			}
			m := start(t, opts, spec)
			mustReady(t, m, "s")
			if st, _ := m.Status("s"); st.ProtocolVersion != "2026-07-28" {
				t.Fatalf("protocol %q", st.ProtocolVersion)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := m.Subscribe(ctx, "s", "test://counter"); err != nil {
				t.Fatalf("Subscribe: %v", err)
			}
			call(t, m, "s", "bump_counter", nil)
			e := events.wait(t, "resource updated", func(e mcpclient.Event) bool { return e.Kind == mcpclient.EventResourceUpdated })
			if e.Server != "s" || e.URI != "test://counter" {
				t.Fatalf("event %+v", e)
			}
			if err := m.Unsubscribe(ctx, "s", "test://counter"); err != nil {
				t.Fatalf("Unsubscribe: %v", err)
			}
		})
	}
}

// A subscription whose listen stream the server refuses fails at once
// (not at the call timeout, which would hold up the turn that mentioned
// the resource), and the server stays ready.
func TestModernSubscriptionRefused(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	spec := stdio("s", "-live", "-protocol", "2026-07-28", "-refuse-listen")
	spec.CallTimeout = time.Minute
	m := start(t, opts, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := m.Subscribe(ctx, "s", "test://counter")
	if err == nil || errors.Is(err, mcpclient.ErrCallTimeout) || ctx.Err() != nil {
		t.Fatalf("Subscribe: %v, want the refusal", err)
	}
	mustReady(t, m, "s")
}
