package acp_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
)

// command returns the advertised command name from the latest
// available_commands_update of ups (nil if none).
func command(ups []acpsdk.SessionUpdate, name string) *acpsdk.AvailableCommand {
	for i := len(ups) - 1; i >= 0; i-- {
		if u := ups[i].AvailableCommandsUpdate; u != nil {
			for _, c := range u.AvailableCommands {
				if c.Name == name {
					return &c
				}
			}
			return nil
		}
	}
	return nil
}

func hint(c *acpsdk.AvailableCommand) string {
	if c == nil || c.Input == nil || c.Input.Unstructured == nil {
		return ""
	}
	return c.Input.Unstructured.Hint
}

// A server's prompts are advertised as /<server>.<prompt> with their
// arguments as the hint, and a prompt added later is advertised then.
func TestPromptCommandsAdvertised(t *testing.T) {
	h := newHarness(t, acp.Options{}, allowing())
	sid := h.newSession(stdioServer("s", "-live")).SessionId
	h.fc.rec.waitFor(t, 0, sid, "the prompts as commands", func(u acpsdk.SessionUpdate) bool {
		return command([]acpsdk.SessionUpdate{u}, "s.greet") != nil
	})
	ups := h.fc.rec.since(0, sid)
	if c := command(ups, "s.greet"); hint(c) != "name=…" || !strings.Contains(c.Description, "Greets someone by name.") {
		t.Fatalf("s.greet: %+v (hint %q)", c, hint(c))
	}
	if c := command(ups, "s.tone"); hint(c) != "style=… [topic=…]" {
		t.Fatalf("s.tone hint %q", hint(c))
	}
	if command(ups, "mcp") == nil {
		t.Fatal("the built-in commands are gone")
	}
	from := h.fc.rec.len()
	h.prompt(sid, `/call mcp__s__add_prompt {"name":"fresh"}`)
	h.fc.rec.waitFor(t, from, sid, "the new prompt advertised", func(u acpsdk.SessionUpdate) bool {
		return command([]acpsdk.SessionUpdate{u}, "s.fresh") != nil
	})
}

// Without a model, a prompt command shows the prompt's messages; a
// missing required argument with several completions is an error naming
// it and showing them; bad arguments say how to call it.
func TestPromptCommandWithoutModel(t *testing.T) {
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession(stdioServer("s", "-live")).SessionId
	for _, tc := range []struct{ in, want string }{
		{"/s.greet name=Ada", "Hello, Ada!"},
		{`/s.greet name="Ada Lovelace"`, "Hello, Ada Lovelace!"},
		{"/s.greet Grace Hopper", "Hello, Grace Hopper!"}, // the one argument takes the whole text
		{"/s.greet", "/s.greet needs the argument name. Usage: /s.greet name=…\nSuggestions for name: Alice, Bob"},
		{"/s.tone color=red", `has no argument "color"`},
		{`/s.tone style="open`, "unterminated quoted value"},
		{"/s.plain", "This is a plain prompt."},
	} {
		_, ups := h.prompt(sid, tc.in)
		if got := agentText(ups); !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want it to contain %q", tc.in, got, tc.want)
		}
	}
}

// With a model, a prompt's messages are the user's turn: the last user
// message is the input, the earlier ones the conversation before it; a
// required argument with exactly one completion is filled.
func TestPromptCommandWithModel(t *testing.T) {
	m := scripted(says("fine"))
	h := newHarness(t, acp.Options{Provider: m}, nil)
	sid := h.newSession(stdioServer("s", "-live")).SessionId
	_, ups := h.prompt(sid, "/s.tone topic=weather")
	if !strings.Contains(agentText(ups), "fine") {
		t.Fatalf("the model's answer is not shown: %q", agentText(ups))
	}
	msgs := m.requests()[0].Messages
	var got []string
	for _, msg := range msgs {
		got = append(got, string(msg.Role)+": "+gateway.PlainText(msg.Content))
	}
	want := []string{"user: Answer in a formal tone.", "assistant: Understood: formal.", "user: Topic: weather"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("model messages:\n%q\nwant\n%q", got, want)
	}
	// The prompt's messages stay in the conversation.
	h.prompt(sid, "more")
	if n := len(m.requests()[1].Messages); n != 5 {
		t.Fatalf("second turn has %d messages, want 5 (prompt 3, answer, new input)", n)
	}
}

// A shared server's prompts are advertised in every session, and a prompt
// it adds later is advertised again in each of them.
func TestSharedServerPromptsAdvertised(t *testing.T) {
	t.Parallel()
	cfg := configOf(t, `{"mcpServers": {"sh": {"command": `+mustJSON(serverBin)+`, "args": ["-live"], "shared": true}}}`)
	h := newHarness(t, acp.Options{Config: cfg}, allowing())
	one := h.newSession().SessionId
	two := h.newSession().SessionId
	for _, sid := range []acpsdk.SessionId{one, two} {
		h.fc.rec.waitFor(t, 0, sid, "the shared prompt advertised", func(u acpsdk.SessionUpdate) bool {
			return command([]acpsdk.SessionUpdate{u}, "sh.greet") != nil
		})
	}
	from := h.fc.rec.len()
	h.setMode(one, "auto")
	h.prompt(one, `/call mcp__sh__add_prompt {"name":"fresh"}`)
	h.fc.rec.waitFor(t, from, two, "the shared server's new prompt advertised in the other session", func(u acpsdk.SessionUpdate) bool {
		return command([]acpsdk.SessionUpdate{u}, "sh.fresh") != nil
	})
}
