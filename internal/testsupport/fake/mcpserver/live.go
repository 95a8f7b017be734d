package main

// The -live flag: resources that change (with subscriptions and
// notifications/resources/updated), prompts added at run time
// (prompts/list_changed) and argument completion (completion/complete).
// Documented in main.go under "Live resources and prompts (-live)".

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// counterURI is the resource that bump_counter changes.
const counterURI = "test://counter"

// live is the state of the -live features.
type live struct {
	a       *app
	counter atomic.Int64
	mu      sync.Mutex
	subs    map[string]bool // URIs some client subscribed to
	// listeners are the sessions that opened a subscriptions/listen
	// stream (2026-07-28, where resources are subscribed to in its
	// filter), with the URIs of their latest filter; mcp-go keeps no such
	// record for the server.
	listeners sync.Map // server.ClientSession -> []string
}

// listening records the session of a subscriptions/listen request (its
// raw message) and the resources its filter names ("listen <uri>").
func (l *live) listening(ctx context.Context, raw json.RawMessage) {
	var m struct {
		Params mcp.SubscriptionsListenParams `json:"params"`
	}
	_ = json.Unmarshal(raw, &m)
	for _, uri := range m.Params.Notifications.ResourceSubscriptions {
		l.a.rec.event("listen %s", uri)
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		l.listeners.Store(sess, m.Params.Notifications.ResourceSubscriptions)
	}
}

// notifyListeners sends notifications/resources/updated about uri on the
// listen streams whose filter names it (mcp-go leaves the fan-out to the
// server).
func (l *live) notifyListeners(uri string) {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationResourceUpdated,
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
	}}
	l.listeners.Range(func(k, v any) bool {
		if !slices.Contains(v.([]string), uri) {
			return true
		}
		select {
		case k.(server.ClientSession).NotificationChannel() <- n:
		default:
		}
		return true
	})
}

// liveOptions returns the server options and hooks of -live (none
// without it): resource subscriptions and list_changed, prompt
// list_changed, completions.
func (a *app) liveOptions(hooks *server.Hooks) []server.ServerOption {
	if !a.cfg.live {
		return nil
	}
	l := &live{a: a, subs: map[string]bool{}}
	a.live = l
	hooks.AddAfterSubscribe(func(_ context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		l.mu.Lock()
		l.subs[req.Params.URI] = true
		l.mu.Unlock()
		a.rec.event("subscribe %s", req.Params.URI)
	})
	hooks.AddAfterUnsubscribe(func(_ context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		l.mu.Lock()
		delete(l.subs, req.Params.URI)
		l.mu.Unlock()
		a.rec.event("unsubscribe %s", req.Params.URI)
	})
	hooks.AddBeforeSetLevel(func(_ context.Context, _ any, req *mcp.SetLevelRequest) {
		a.rec.event("setLevel %s", req.Params.Level)
	})
	hooks.AddBeforeComplete(func(_ context.Context, _ any, req *mcp.CompleteRequest) {
		a.rec.event("complete %s", req.Params.Argument.Name)
	})
	return []server.ServerOption{
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(l),
	}
}

// addLive registers the resources, prompts and tools of -live.
func (a *app) addLive() {
	l := a.live
	if l == nil {
		return
	}
	s := a.srv
	s.AddResource(mcp.NewResource(counterURI, "counter",
		mcp.WithResourceDescription("A counter that bump_counter increments."),
		mcp.WithMIMEType("text/plain"),
	), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{
			URI: counterURI, MIMEType: "text/plain", Text: fmt.Sprintf("counter %d", l.counter.Load()),
		}}, nil
	})
	s.AddTool(mcp.NewTool("bump_counter",
		mcp.WithDescription("Increments test://counter and notifies its subscribers."),
	), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := l.counter.Add(1)
		l.notifyListeners(counterURI)
		l.mu.Lock()
		subscribed := l.subs[counterURI]
		l.mu.Unlock()
		if subscribed {
			if err := a.notify(ctx, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": counterURI}); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
		}
		return text(fmt.Sprintf("counter %d", n)), nil
	})
	s.AddTool(mcp.NewTool("link",
		mcp.WithDescription("Returns a resource_link to test://items/{id}."),
		mcp.WithString("id", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := req.GetString("id", "")
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("see the link"),
			mcp.NewResourceLink("test://items/"+id, "item "+id, "An item.", "text/plain"),
		}}, nil
	})
	s.AddTool(mcp.NewTool("add_prompt",
		mcp.WithDescription("Registers prompt <name> (one user message \"prompt <name>\")."),
		mcp.WithString("name", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := req.GetString("name", "")
		s.AddPrompt(mcp.NewPrompt(name, mcp.WithPromptDescription("Added at run time.")),
			func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult("", []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("prompt "+name)),
				}), nil
			})
		return text("added prompt " + name), nil
	})
	s.AddPrompt(mcp.NewPrompt("tone",
		mcp.WithPromptDescription("Asks for answers in a tone."),
		mcp.WithArgument("style", mcp.RequiredArgument(), mcp.ArgumentDescription("The tone.")),
		mcp.WithArgument("topic", mcp.ArgumentDescription("What about.")),
	), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		style, topic := req.Params.Arguments["style"], req.Params.Arguments["topic"]
		return mcp.NewGetPromptResult("A tone", []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Answer in a "+style+" tone.")),
			mcp.NewPromptMessage(mcp.RoleAssistant, mcp.NewTextContent("Understood: "+style+".")),
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Topic: "+topic)),
		}), nil
	})
}

// CompletePromptArgument implements server.PromptCompletionProvider: greet's
// name completes to the names starting with the value (Alice, Bob); tone's
// style to "formal" alone.
func (l *live) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	var all []string
	switch prompt + "." + arg.Name {
	case "greet.name":
		all = []string{"Alice", "Bob"}
	case "tone.style":
		all = []string{"formal"}
	}
	out := []string{}
	for _, v := range all {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(arg.Value)) {
			out = append(out, v)
		}
	}
	return &mcp.Completion{Values: out, Total: len(out)}, nil
}
