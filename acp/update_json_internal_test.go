package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestUpdateJSON checks that each update and call encodes to the JSON
// value acp-go-sdk's MarshalJSON gives: every variant of the unions this
// file's types encode, each member filled, and variants left to the SDK.
func TestUpdateJSON(t *testing.T) {
	meta := map[string]any{"acpgate": map[string]any{"tool": "echo", "n": 3}}
	msgID := "m1"
	title := "Echo <&>"
	kind := acpsdk.ToolKindFetch
	status := acpsdk.ToolCallStatusFailed
	line := 7
	text := acpsdk.ContentBlock{Text: &acpsdk.ContentBlockText{Text: "hello \u2028 <b>\"x\"</b>", Meta: meta,
		Annotations: &acpsdk.Annotations{Audience: []acpsdk.Role{acpsdk.RoleUser}}}}
	uri := "file:///a.png"
	blocks := []acpsdk.ContentBlock{
		text,
		{Image: &acpsdk.ContentBlockImage{Data: "aGk=", MimeType: "image/png", Uri: &uri, Meta: meta}},
		{Audio: &acpsdk.ContentBlockAudio{Data: "aGk=", MimeType: "audio/wav"}},
		acpsdk.ResourceLinkBlock("r", "file:///r.txt"),
		{Resource: &acpsdk.ContentBlockResource{Resource: acpsdk.EmbeddedResourceResource{
			TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///t", Text: "t"}}}},
	}
	var contents []acpsdk.ToolCallContent
	for _, b := range blocks {
		c := acpsdk.ToolContent(b)
		c.Content.Meta = meta
		contents = append(contents, c)
	}
	contents = append(contents, acpsdk.ToolDiffContent("/a", "new", "old"), acpsdk.ToolTerminalRef("term-1"))
	raw := json.RawMessage(`{"z":1,"a":[true,null,"<x>"],"u":"\u00e9"}`)
	output := map[string]any{"content": []any{map[string]any{"type": "text", "text": "out"}}, "isError": false}
	locations := []acpsdk.ToolCallLocation{{Path: "/a", Line: &line}}

	updates := map[string]acpsdk.SessionUpdate{"empty tool_call": {ToolCall: &acpsdk.SessionUpdateToolCall{ToolCallId: "c0"}}}
	for i, b := range blocks {
		name := string(rune('a' + i))
		updates["user "+name] = acpsdk.SessionUpdate{UserMessageChunk: &acpsdk.SessionUpdateUserMessageChunk{Content: b, Meta: meta, MessageId: &msgID}}
		updates["agent "+name] = acpsdk.SessionUpdate{AgentMessageChunk: &acpsdk.SessionUpdateAgentMessageChunk{Content: b}}
		updates["thought "+name] = acpsdk.SessionUpdate{AgentThoughtChunk: &acpsdk.SessionUpdateAgentThoughtChunk{Content: b, MessageId: &msgID}}
	}
	updates["tool_call"] = acpsdk.SessionUpdate{ToolCall: &acpsdk.SessionUpdateToolCall{Meta: meta, Content: contents, Kind: kind,
		Locations: locations, RawInput: raw, RawOutput: output, Status: status, Title: title, ToolCallId: "c1"}}
	updates["tool_call_update"] = acpsdk.SessionUpdate{ToolCallUpdate: &acpsdk.SessionToolCallUpdate{Meta: meta, Content: contents, Kind: &kind,
		Locations: locations, RawInput: raw, RawOutput: output, Status: &status, Title: &title, ToolCallId: "c1"}}
	updates["tool_call_update, status only"] = acpsdk.UpdateToolCall("c2", acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress))
	updates["plan (the SDK's)"] = acpsdk.SessionUpdate{Plan: &acpsdk.SessionUpdatePlan{Entries: []acpsdk.PlanEntry{{Content: "x", Priority: "high", Status: "pending"}}}}
	updates["usage (the SDK's)"] = acpsdk.SessionUpdate{UsageUpdate: &acpsdk.SessionUsageUpdate{Size: 10, Used: 2}}

	same := func(t *testing.T, sdk any, ours any) {
		t.Helper()
		want, err := json.Marshal(sdk)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(ours)
		if err != nil {
			t.Fatal(err)
		}
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("differs from the SDK's:\n got %s\nwant %s", got, want)
		}
	}
	for name, u := range updates {
		t.Run(name, func(t *testing.T) {
			if _, ok := encodable(u).(updateJSON); !ok {
				t.Fatalf("encodable(%T) = %T", u, encodable(u))
			}
			same(t, u, encodable(u))
			same(t, sessionNotification{SessionID: "s", Update: u}, sessionNotification{SessionID: "s", Update: encodable(u)})
		})
	}
	t.Run("permission call", func(t *testing.T) {
		c := acpsdk.ToolCallUpdate{Meta: meta, Content: contents, Kind: &kind, Locations: locations, RawInput: raw, RawOutput: output,
			Status: &status, Title: &title, ToolCallId: "c3"}
		same(t, c, encodable(c))
		same(t, acpsdk.ToolCallUpdate{ToolCallId: "c4"}, encodable(acpsdk.ToolCallUpdate{ToolCallId: "c4"}))
	})
}

// TestUpdateJSONMirrors checks that each mirror struct has the members
// of the SDK's struct it stands for, with the same names and options, so
// that a new member of a newer SDK fails here instead of going missing.
func TestUpdateJSONMirrors(t *testing.T) {
	for _, m := range []struct{ sdk, mirror any }{
		{acpsdk.SessionUpdateUserMessageChunk{}, chunkJSON{}},
		{acpsdk.SessionUpdateAgentMessageChunk{}, chunkJSON{}},
		{acpsdk.SessionUpdateAgentThoughtChunk{}, chunkJSON{}},
		{acpsdk.SessionUpdateToolCall{}, toolCallJSON{}},
		{acpsdk.SessionToolCallUpdate{}, toolCallUpdateJSON{}},
		{acpsdk.ToolCallUpdate{}, permissionCallJSON{}},
		{acpsdk.ToolCallContentContent{}, toolContentContentJSON{}},
	} {
		want, got := tags(reflect.TypeOf(m.sdk)), tags(reflect.TypeOf(m.mirror))
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%T: members %v, the SDK's %T has %v", m.mirror, got, m.sdk, want)
		}
	}
	// The text block: the SDK sends its text and type only.
	want := tags(reflect.TypeOf(acpsdk.ContentBlockText{}))
	delete(want, "_meta,omitempty")
	delete(want, "annotations,omitempty")
	if got := tags(reflect.TypeOf(textBlockJSON{})); !reflect.DeepEqual(want, got) {
		t.Errorf("textBlockJSON: members %v, the SDK's text block (less _meta and annotations) %v", got, want)
	}
}

// tags is the set of a struct's JSON member tags.
func tags(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		out[t.Field(i).Tag.Get("json")] = true
	}
	return out
}
