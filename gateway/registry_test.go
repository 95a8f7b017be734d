package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

func namedTool(name string) gateway.Tool {
	return gateway.Tool{Name: name, Title: "title of " + name, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Execute: func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
			return gateway.TextResult(name), nil
		}}
}

func toolNames(ts []gateway.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestRegistrySessionIsolation(t *testing.T) {
	reg := gateway.NewRegistry(namedTool("native"))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("s%d", i)
			for j := 0; j < 50; j++ {
				reg.SetExtraTools(key, []gateway.Tool{namedTool(key + "_tool"), namedTool("native")})
				got := toolNames(reg.Tools(key))
				if !reflect.DeepEqual(got, []string{"native", key + "_tool"}) {
					t.Errorf("%s sees %v", key, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if _, ok := reg.Lookup("s1", "s2_tool"); ok {
		t.Error("session s1 can look up s2's tool")
	}
	if tl, ok := reg.Lookup("s1", "s1_tool"); !ok || tl.Name != "s1_tool" {
		t.Error("own tool not found")
	}
	reg.ClearExtraTools("s1")
	if got := toolNames(reg.Tools("s1")); !reflect.DeepEqual(got, []string{"native"}) {
		t.Errorf("after clear: %v", got)
	}
	if got := toolNames(reg.Tools("s2")); len(got) != 2 {
		t.Errorf("clearing s1 touched s2: %v", got)
	}
	if got := toolNames(reg.Filter("s2", "S2_")); !reflect.DeepEqual(got, []string{"s2_tool"}) {
		t.Errorf("filter: %v", got)
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	size := int64(3)
	h := gateway.History{
		{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "hi"}, {Type: gateway.ContentImage, Data: "aGk=", MIMEType: "image/png"}}},
		{Role: gateway.RoleAssistant, Thinking: "hmm", Content: []gateway.Content{{Type: gateway.ContentText, Text: "calling"}},
			ToolCalls: []gateway.ToolCall{{ID: "c1", Name: "mcp__s__echo", Arguments: json.RawMessage(`{"text":"x","n":[1,2.5]}`)}}},
		{Role: gateway.RoleTool, ToolCallID: "c1", ToolName: "mcp__s__echo", Result: &gateway.Result{
			Content:    []gateway.Content{{Type: gateway.ContentText, Text: "x"}, {Type: gateway.ContentResourceLink, URI: "file:///a", Name: "a", Size: &size}},
			Structured: json.RawMessage(`{"k":true}`), IsError: true, ForModel: "<<<framed>>>"}},
		{Role: gateway.RoleAssistant, Content: []gateway.Content{{Type: gateway.ContentText, Text: "done ✓"}}},
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back gateway.History
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, back) {
		t.Errorf("round trip changed the history:\n%#v\n%#v", h, back)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("re-encoding differs:\n%s\n%s", data, again)
	}
	if !strings.Contains(string(data), `"toolCallId":"c1"`) {
		t.Errorf("unexpected encoding %s", data)
	}
}
