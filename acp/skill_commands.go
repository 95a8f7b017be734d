package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/inputs/skills"
)

// This file is the skills as slash commands: /<skill> [arguments] loads a
// skill into the turn, /skills lists them, and what /context says of
// them.

// skillCall is a skill command the user typed.
type skillCall struct {
	id   string
	rest string // the text after the command word
}

// skillCommands are the skills advertised as commands: each skill whose
// ID no command of the registry has.
func (co *commands) skillCommands(s commandSession) []acpsdk.AvailableCommand {
	cat, _ := s.skills().catalog(context.Background())
	var out []acpsdk.AvailableCommand
	for _, e := range cat.Entries() {
		if co.builtin(e.ID) {
			continue
		}
		desc := strings.Join(strings.Fields(e.Description), " ")
		if len(desc) > maxSkillDescriptionBytes {
			desc = strings.ToValidUTF8(desc[:maxSkillDescriptionBytes], "") + "…"
		}
		out = append(out, acpsdk.AvailableCommand{Name: e.ID, Description: fmt.Sprintf("Skill (%s): %s", sourceLabel(e.Skill), desc),
			Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "optional: what to do with it"}}})
	}
	return out
}

// builtin reports whether the registry has a command called name.
func (co *commands) builtin(name string) bool {
	for _, c := range co.slashes {
		if c.name == name {
			return true
		}
	}
	return false
}

// skillCommand recognises /<skill> at the start of the prompt's text, for
// a skill of the session (waiting for servers still connecting when the
// word names none yet).
func (co *commands) skillCommand(ctx context.Context, s commandSession, input []gateway.Content) (skillCall, bool) {
	if len(input) == 0 || input[0].Type != gateway.ContentText {
		return skillCall{}, false
	}
	text := strings.TrimSpace(input[0].Text)
	if !strings.HasPrefix(text, "/") {
		return skillCall{}, false
	}
	word, rest := cutWord(text[1:])
	if word == "" || co.builtin(word) {
		return skillCall{}, false
	}
	find := func() bool {
		cat, _ := s.skills().catalog(ctx)
		_, ok := cat.Find(word)
		return ok
	}
	if find() {
		return skillCall{id: word, rest: strings.TrimSpace(rest)}, true
	}
	if !strings.Contains(word, ":") {
		return skillCall{}, false // a file skill is there or not: no server to wait for
	}
	s.waitServers(ctx, co.peer, find)
	if find() {
		return skillCall{id: word, rest: strings.TrimSpace(rest)}, true
	}
	return skillCall{}, false
}

// runSkill runs a skill command: the skill is loaded (a server's
// verified) and becomes the user's turn, with the text after the command;
// without a model, its instructions are shown.
func (co *commands) runSkill(ctx context.Context, s turnSession, t *turnLog, sc skillCall) gateway.StopReason {
	say := func(text string) { t.sink(gateway.Event{Kind: gateway.EventText, Text: text}) }
	ss := s.asCommands().skills()
	e, l, err := ss.load(ctx, sc.id)
	switch {
	case ctx.Err() != nil:
		return gateway.StopCancelled
	case err != nil:
		say(fmt.Sprintf("/%s: the skill was not loaded: %v", sc.id, err))
		return gateway.StopEndTurn
	}
	text := ss.skillText(e, l)
	if co.conf.model(ctx, s) == nil {
		say(fmt.Sprintf("/%s: skill loaded (no model is configured, so here are its instructions):\n\n%s", sc.id, text))
		return gateway.StopEndTurn
	}
	ask := "Follow this skill."
	if sc.rest != "" {
		ask = "Follow this skill for this request of the user's: " + sc.rest
	}
	input := []gateway.Content{{Type: gateway.ContentText, Text: "The user loaded the skill " + sc.id + " with /" + sc.id + ". " + ask + "\n\n" + text}}
	return co.turns.modelTurn(ctx, s, t, input, nil)
}

// skillsReport is /skills: each skill with its source, where it is and
// whether it is loaded; then the skills not taken, with why.
func skillsReport(ctx context.Context, ss *sessionSkills) string {
	cat, problems := ss.catalog(ctx)
	var b strings.Builder
	if cat.Len() == 0 {
		b.WriteString("This session has no skills (see docs/skills.md for where acpgate looks).")
	} else {
		fmt.Fprintf(&b, "**Skills** (%d):", cat.Len())
	}
	for _, e := range cat.Entries() {
		state := "available"
		if ss.isLoaded(e.ID) {
			state = "loaded"
		}
		fmt.Fprintf(&b, "\n- `/%s` (%s, %s): %s — %s", e.ID, e.Source, state, strings.Join(strings.Fields(e.Description), " "), e.Origin())
	}
	writeProblems(&b, problems)
	return b.String()
}

// writeProblems adds the skills not taken to a report.
func writeProblems(b *strings.Builder, problems []skills.Problem) {
	if len(problems) == 0 {
		return
	}
	b.WriteString("\n\n**Skills not taken**:")
	for _, p := range problems {
		fmt.Fprintf(b, "\n- %s: %v", p.Path, p.Err)
	}
}

// skillsContext is what /context says of the session's skills: how many,
// which are loaded, and those not taken.
func skillsContext(ctx context.Context, ss *sessionSkills) string {
	cat, problems := ss.catalog(ctx)
	if cat.Len() == 0 && len(problems) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**Skills**: %d available", cat.Len())
	if loaded := ss.loadedIDs(); len(loaded) > 0 {
		fmt.Fprintf(&b, "; loaded: %s", strings.Join(loaded, ", "))
	} else {
		b.WriteString("; none loaded")
	}
	writeProblems(&b, problems)
	b.WriteString("\n")
	return b.String()
}
