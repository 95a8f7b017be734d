package main

import (
	"encoding/json"
	"fmt"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// modelEcho is a fake model (a Chat Completions server, fakellm) for a
// scenario whose tool argument must come from a tool's schema as a model
// reads it: asked, it calls tool `to` with {arg: <the parameters acpgate
// offered it for tool `from`>}, then ends its turn once it has the tool's
// result. It reads the schema from the request, as a real model would: what
// acpgate did to the schema on the way is what the scenario checks.
type modelEcho struct {
	from, to, arg string
}

// modelName is acpgate's --model with the fake model.
const modelName = "fake-model"

// prompt is the user's request.
func (m *modelEcho) prompt() string {
	return fmt.Sprintf("Call %s with the input schema of %s, exactly as you were given it, as its %q argument.", m.to, m.from, m.arg)
}

// start starts the fake model; the caller closes it.
func (m *modelEcho) start() *fakellm.Server {
	s := fakellm.Start()
	s.SetResponder(func(req fakellm.Request) (fakellm.Turn, bool) { return m.respond(req), true })
	return s
}

// respond answers one request of acpgate's.
func (m *modelEcho) respond(req fakellm.Request) fakellm.Turn {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		return fakellm.Turn{Text: "Done."}
	}
	for _, t := range req.Tools {
		if t.Name != bridgedName(m.from) {
			continue
		}
		args, err := json.Marshal(map[string]json.RawMessage{m.arg: t.Parameters})
		if err != nil || len(t.Parameters) == 0 {
			return fakellm.Turn{Text: fmt.Sprintf("The parameters of %s are not a JSON object: %s", t.Name, t.Parameters)}
		}
		return fakellm.Turn{ToolCalls: []fakellm.ToolCall{{Name: bridgedName(m.to), Arguments: string(args)}}}
	}
	return fakellm.Turn{Text: fmt.Sprintf("I was not offered %s.", bridgedName(m.from))}
}
