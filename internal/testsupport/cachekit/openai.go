package cachekit

import (
	"fmt"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// openAI is the Endpoint of the OpenAI-compatible provider: fakellm.
type openAI struct {
	srv   *fakellm.Server
	calls int // numbers the tool calls (the kit's model answers one request at a time)
}

// OpenAI returns an Endpoint that is a fakellm server driven by acpgate's
// OpenAI-compatible provider (streaming, as acpgate uses it, and sending
// prompt_cache_key as to OpenAI's API), closed when t ends.
func OpenAI(t testing.TB) Endpoint {
	srv := fakellm.Start()
	t.Cleanup(srv.Close)
	return &openAI{srv: srv}
}

func (o *openAI) Provider(t testing.TB) gateway.Provider {
	return o.srv.Provider(t, openaicompat.Config{MaxRetries: openaicompat.NoRetries, CacheKey: openaicompat.CacheKeyAlways})
}

func (o *openAI) Answer(model func(Request) Answer) {
	o.srv.SetResponder(func(r fakellm.Request) (fakellm.Turn, bool) {
		a := model(request(r))
		turn := fakellm.Turn{Text: a.Text}
		for _, c := range a.Calls {
			o.calls++
			turn.ToolCalls = append(turn.ToolCalls, fakellm.ToolCall{ID: fmt.Sprintf("call_%d", o.calls), Name: c.Name, Arguments: c.Args})
		}
		return turn, true
	})
}

func (o *openAI) Requests(t testing.TB) []Request {
	var out []Request
	for i, r := range o.srv.Requests() {
		if r.DecodeError != "" {
			t.Fatalf("request %d: %s", i+1, r.DecodeError)
		}
		out = append(out, request(r))
	}
	return out
}

// request is what the kit needs of a fakellm request.
func request(r fakellm.Request) Request {
	q := Request{Prompt: r.CachePrefix(), CacheKey: r.PromptCacheKey}
	for _, tl := range r.Tools {
		q.Tools = append(q.Tools, tl.Name)
	}
	return q
}
