// Package plan is the update_plan tool: the model keeps a task list, its
// plan, that the editor shows the user. Each call gives the whole list;
// the tool checks it and returns it as its result's structured content
// ({"entries": [...]}), which the session turns into the plan update it
// sends the client (see Entries). The tool changes nothing outside
// the conversation, so it needs no approval; it is a native tool, subject
// to the session's tool policy like any other.
package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acpgate/acpgate/gateway"
)

// ToolName is the tool's name, as the model and the tool policy see it.
const ToolName = "update_plan"

// Priority is how important an entry is.
type Priority string

// The priorities.
const (
	High   Priority = "high"
	Medium Priority = "medium"
	Low    Priority = "low"
)

// Status is where an entry is.
type Status string

// The statuses.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
)

// Entry is one task of a plan. Its JSON is a client's plan entry's.
type Entry struct {
	Content  string   `json:"content"`
	Priority Priority `json:"priority"`
	Status   Status   `json:"status"`
}

// The bounds of a plan.
const (
	MaxEntries      = 100
	MaxContentBytes = 1000
)

// ErrInvalid is wrapped by the errors of Parse: the arguments are not a
// plan.
var ErrInvalid = errors.New("invalid plan")

// plan is the tool's arguments and its result's structured content.
type plan struct {
	Entries []Entry `json:"entries"`
}

// Parse checks the arguments of an update_plan call and returns the
// plan's entries (an empty list clears the plan). An error wraps
// ErrInvalid and names the entry and field that is wrong.
func Parse(args json.RawMessage) ([]Entry, error) {
	var p struct {
		Entries *[]Entry `json:"entries"`
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: the arguments must be {\"entries\": [{\"content\", \"priority\", \"status\"}, ...]}: %v", ErrInvalid, err)
	}
	if p.Entries == nil {
		return nil, fmt.Errorf("%w: entries is missing (give the whole plan each time; [] clears it)", ErrInvalid)
	}
	entries := *p.Entries
	if len(entries) > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries; a plan has at most %d", ErrInvalid, len(entries), MaxEntries)
	}
	for i := range entries {
		e := &entries[i]
		e.Content = strings.TrimSpace(e.Content)
		switch {
		case e.Content == "":
			return nil, fmt.Errorf("%w: entries[%d].content is empty", ErrInvalid, i)
		case len(e.Content) > MaxContentBytes || !utf8.ValidString(e.Content):
			return nil, fmt.Errorf("%w: entries[%d].content must be UTF-8 text of at most %d bytes", ErrInvalid, i, MaxContentBytes)
		case e.Priority != High && e.Priority != Medium && e.Priority != Low:
			return nil, fmt.Errorf("%w: entries[%d].priority must be high, medium or low, not %q", ErrInvalid, i, e.Priority)
		case e.Status != Pending && e.Status != InProgress && e.Status != Completed:
			return nil, fmt.Errorf("%w: entries[%d].status must be pending, in_progress or completed, not %q", ErrInvalid, i, e.Status)
		}
	}
	return entries, nil
}

// Entries returns the plan an update_plan result carries; ok is false for
// any other result (a failed call included).
func Entries(res gateway.Result) (entries []Entry, ok bool) {
	var p plan
	if res.IsError || res.Structured == nil || json.Unmarshal(res.Structured, &p) != nil || p.Entries == nil {
		return nil, false
	}
	return p.Entries, true
}

// Tool returns the update_plan tool.
func Tool() gateway.Tool {
	return gateway.Tool{
		Name:  ToolName,
		Title: "Update plan",
		Description: "Show the user your plan for a task of several steps, as a task list in the editor. " +
			"Give the whole list each time (it replaces the previous one): call it once with every step pending, " +
			"then again whenever a step starts (in_progress; one at a time) or is done (completed). Not for simple one-step requests.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"entries":{"type":"array","maxItems":` + fmt.Sprint(MaxEntries) + `,` +
			`"description":"Every step of the plan, in order.","items":{"type":"object","properties":{` +
			`"content":{"type":"string","description":"What the step does, in a few words."},` +
			`"priority":{"type":"string","enum":["high","medium","low"]},` +
			`"status":{"type":"string","enum":["pending","in_progress","completed"]}},` +
			`"required":["content","priority","status"],"additionalProperties":false}}},` +
			`"required":["entries"],"additionalProperties":false}`),
		Kind:        gateway.KindOther,
		Annotations: gateway.Annotations{ReadOnly: true, Idempotent: true},
		Execute: func(_ context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			entries, err := Parse(args)
			if err != nil {
				return gateway.Result{}, err
			}
			structured, err := json.Marshal(plan{Entries: entries})
			if err != nil {
				return gateway.Result{}, fmt.Errorf("%s: %w", ToolName, err)
			}
			res := gateway.TextResult(summary(entries))
			res.Structured = structured
			return res, nil
		},
	}
}

// summary is what the model is told of a plan it gave.
func summary(entries []Entry) string {
	if len(entries) == 0 {
		return "Plan cleared."
	}
	n := map[Status]int{}
	for _, e := range entries {
		n[e.Status]++
	}
	return fmt.Sprintf("Plan updated: %d steps (%d completed, %d in progress, %d pending). The user sees it.",
		len(entries), n[Completed], n[InProgress], n[Pending])
}
