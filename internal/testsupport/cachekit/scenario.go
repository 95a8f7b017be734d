package cachekit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// Call is a tool call the scripted model makes.
type Call struct {
	Name string
	Args string // JSON object
}

// Answer is one scripted model answer: tool calls, or else text that ends
// the prompt's turn.
type Answer struct {
	Calls []Call
	Text  string
}

// Request is what an Endpoint recorded of one model request.
type Request struct {
	// Prompt is the request's prompt as a prefix cache sees it, byte for
	// byte as sent (for OpenAI: the "tools" array, then "messages").
	Prompt []byte
	// Tools are the names of the tools it offered, in order.
	Tools []string
	// CacheKey is the key it asked the provider to route its cache by
	// ("" if none).
	CacheKey string
	// Deferred are the tools it offered deferred (Anthropic's
	// defer_loading): the model can call one only once its search found
	// it.
	Deferred map[string]bool
	// ServerSearch says the request offers the provider's own tool search
	// over the deferred tools (Anthropic's tool search tool), which the
	// model uses within an answer.
	ServerSearch bool
	// Breakpoints are the offsets in Prompt where the request asks the
	// cache to store the prefix (Anthropic's cache_control); nil for a
	// provider that caches by itself.
	Breakpoints []int
}

// Endpoint is a fake model endpoint that answers requests as a Model
// says and records them.
type Endpoint interface {
	// Provider returns acpgate's provider for this endpoint.
	Provider(t testing.TB) gateway.Provider
	// Answer makes the endpoint answer each request with model's answer
	// to it.
	Answer(model func(Request) Answer)
	// Requests returns every request received so far, in order.
	Requests(t testing.TB) []Request
}

// Prompt is one user prompt of a session and what the model does about
// it: each answer but the last calls tools, the last is text.
type Prompt struct {
	Text    string
	Answers []Answer
}

// Scenario is a session: its tools, its prompts and how the model answers.
type Scenario struct {
	Name string
	// Native are the session's own tools (always offered); Extra its MCP
	// tools (behind tool search when too many).
	Native, Extra []gateway.Tool
	// SearchThreshold is gateway.RunOptions.SearchThreshold.
	SearchThreshold int
	// System is the system prompt.
	System  string
	Prompts []Prompt
}

// SessionKey is the session id the scenarios run under
// (gateway.RunOptions.Key).
const SessionKey = "cachekit-session-1"

// Run plays sc through a gateway.Runner with ep's provider, one prompt
// after the other on the growing history, and measures the requests ep
// recorded. The model follows the prompts' answers as a real one would
// with what each request offers it (see model); it fails t if a turn
// fails or a tool call does.
func Run(t testing.TB, ep Endpoint, sc Scenario) (Report, []Request) {
	t.Helper()
	r := gateway.NewRunner(gateway.RunnerOptions{System: sc.System})
	acc := gateway.ToolAccess{Tools: gateway.NewToolset(sc.Native, sc.Extra)}
	m := &model{known: map[string]bool{}}
	ep.Answer(m.answer)
	provider := ep.Provider(t)
	var history []gateway.Message
	for i, p := range sc.Prompts {
		m.todo = p.Answers
		res, err := r.Run(context.Background(), gateway.RunOptions{
			Key: SessionKey, Model: provider, History: history, ToolAccess: acc, SearchThreshold: sc.SearchThreshold,
			Input: []gateway.Content{{Type: gateway.ContentText, Text: p.Text}},
		})
		if err != nil {
			t.Fatalf("%s: prompt %d: %v", sc.Name, i+1, err)
		}
		if res.Stop != gateway.StopEndTurn || len(m.todo) > 0 {
			t.Fatalf("%s: prompt %d stopped with %s, %d answers left", sc.Name, i+1, res.Stop, len(m.todo))
		}
		for _, msg := range res.Messages {
			if msg.Result != nil && msg.Result.IsError {
				t.Fatalf("%s: prompt %d: the call %s failed: %s", sc.Name, i+1, msg.ToolCallID, msg.Result.ModelText())
			}
		}
		history = append(history, res.Messages...)
	}
	reqs := ep.Requests(t)
	prompts, tools, bps := make([][]byte, len(reqs)), make([]int, len(reqs)), make([][]int, len(reqs))
	for i, q := range reqs {
		prompts[i], tools[i], bps[i] = q.Prompt, len(q.Tools), q.Breakpoints
	}
	rep := Measure(prompts, tools)
	rep.Breakpoints = bps
	return rep, reqs
}

// model is the scripted model of Run. It plays a prompt's answers in
// order, as a model that can call only what it has been shown: a tool
// offered in the request it answers (a deferred one once a search found
// it), or (when the request offers gateway.CallToolName) a tool whose
// definition a search it made showed it. A call to any other tool is
// preceded by a search for it (by its name, which finds it first): an
// answer calling gateway.SearchToolName, which an Endpoint with a
// server-side search (Request.ServerSearch) turns into that search; a
// scripted search for a tool the model can call already is left out.
type model struct {
	todo  []Answer        // what is left of the prompt's answers
	known map[string]bool // the tools it searched for in this session
}

// answer is the model's answer to req. Called by the endpoint, one
// request at a time (the Runner waits for each answer).
func (m *model) answer(req Request) Answer {
	offered := map[string]bool{}
	for _, name := range req.Tools {
		offered[name] = true
	}
	proxy := offered[gateway.CallToolName]
	searchable := offered[gateway.SearchToolName] || req.ServerSearch
	canCall := func(name string) bool {
		if req.Deferred[name] {
			return m.known[name]
		}
		return offered[name] || proxy && m.known[name]
	}
	for len(m.todo) > 0 {
		a := m.todo[0]
		if len(a.Calls) == 0 {
			m.todo = m.todo[1:]
			return a
		}
		c := a.Calls[0] // the scenarios make one call at a time
		if c.Name == gateway.SearchToolName {
			var q struct{ Query string }
			_ = json.Unmarshal([]byte(c.Args), &q)
			if canCall(q.Query) || !searchable {
				m.todo = m.todo[1:] // it has the tool already
				continue
			}
			m.known[q.Query] = true
			m.todo = m.todo[1:]
			return a
		}
		if !canCall(c.Name) {
			m.known[c.Name] = true
			return search(c.Name)
		}
		m.todo = m.todo[1:]
		if !offered[c.Name] { // through call_tool
			c = Call{Name: gateway.CallToolName, Args: fmt.Sprintf(`{"name":%q,"arguments":%s}`, c.Name, c.Args)}
		}
		return Answer{Calls: []Call{c}}
	}
	return Answer{Text: "(the script is used up)"}
}

// fakeTool is an MCP-like tool that answers every call with a result of
// about resultBytes bytes naming the call.
func fakeTool(name, description string, schema json.RawMessage, resultBytes int) gateway.Tool {
	calls := 0
	return gateway.Tool{
		Name: name, Title: name, Description: description, InputSchema: schema, Kind: gateway.KindOther,
		Execute: func(_ context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			calls++ // the kit's scenarios call one tool at a time
			return gateway.TextResult(filler(fmt.Sprintf("%s call %d with %s:\n", name, calls, args), resultBytes)), nil
		},
	}
}

// filler is head followed by numbered lines of text up to about n bytes.
func filler(head string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%4d  result line %d of the call, as a tool would print a record or a line of a file\n", i, i)
	}
	return b.String()
}
