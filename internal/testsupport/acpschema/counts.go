package acpschema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Counts says how many frames of an agent's a Checker checked. The zero
// value is ready (and counts nothing); a Counts is a plain value, not safe
// for concurrent use.
type Counts struct {
	// Frames checked against the schema, by kind, whether they passed or
	// not; Responses counts ErrorResponses too.
	Requests, Notifications, Responses int
	ErrorResponses                     int
	// Updates counts the session/update notifications by sessionUpdate.
	Updates map[string]int
	// Unstable counts the frames that only the unstable schema accepts, by
	// what they are: kind and method, and a session/update's sessionUpdate
	// ("notification session/update usage_update", "response session/fork").
	Unstable map[string]int
	// Skipped counts the frames of extension methods ("_…"): not checked.
	Skipped int
	// Invalid counts the frames refused (Agent returned an error).
	Invalid int
}

// Checked is the number of frames checked against the schema.
func (c Counts) Checked() int { return c.Requests + c.Notifications + c.Responses }

// Add adds o's counts to c's.
func (c *Counts) Add(o Counts) {
	c.Requests += o.Requests
	c.Notifications += o.Notifications
	c.Responses += o.Responses
	c.ErrorResponses += o.ErrorResponses
	c.Skipped += o.Skipped
	c.Invalid += o.Invalid
	c.Updates = addAll(c.Updates, o.Updates)
	c.Unstable = addAll(c.Unstable, o.Unstable)
}

// addAll adds the counts of o to m, which it returns (made if need be).
func addAll(m, o map[string]int) map[string]int {
	if len(o) > 0 && m == nil {
		m = map[string]int{}
	}
	for k, n := range o {
		m[k] += n
	}
	return m
}

// list is m as "k n, k n" in the order of the keys.
func list(m map[string]int) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}

// total is the sum of m's counts.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// String is the counts on one line: "N messages validated (…by kind…), …".
func (c Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d messages validated (%d requests, %d notifications", c.Checked(), c.Requests, c.Notifications)
	if len(c.Updates) > 0 {
		fmt.Fprintf(&b, " [session/update: %s]", list(c.Updates))
	}
	fmt.Fprintf(&b, ", %d responses [%d errors]); %d accepted only by the unstable schema", c.Responses, c.ErrorResponses, total(c.Unstable))
	if len(c.Unstable) > 0 {
		fmt.Fprintf(&b, " [%s]", list(c.Unstable))
	}
	fmt.Fprintf(&b, "; %d extension messages skipped; %d invalid", c.Skipped, c.Invalid)
	return b.String()
}

// clone is c with its own Updates.
func (c Counts) clone() Counts {
	c.Updates = maps.Clone(c.Updates)
	c.Unstable = maps.Clone(c.Unstable)
	return c
}

// add counts the outcome of one frame's check.
func (c *Counts) add(fe *FrameError) {
	if fe.Err != nil {
		c.Invalid++
	}
	if fe.skipped {
		c.Skipped++
		return
	}
	switch fe.Kind {
	case Request:
		c.Requests++
	case Notification:
		c.Notifications++
		if fe.Update != "" {
			c.Updates = addAll(c.Updates, map[string]int{fe.Update: 1})
		}
	case Response:
		c.Responses++
		if fe.errorResponse {
			c.ErrorResponses++
		}
	}
	if fe.Err == nil && fe.Schema == Unstable {
		what := strings.TrimSpace(fmt.Sprintf("%s %s %s", fe.Kind, fe.Method, fe.Update))
		c.Unstable = addAll(c.Unstable, map[string]int{what: 1})
	}
}
