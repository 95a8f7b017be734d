package acp

import (
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/session"
	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is usage_update: the context window used, the session's
// cost and, in _meta.acpgate.usage, the response's tokens.

// usageUpdate is the usage_update after a model response with usage u:
// the tokens the conversation takes out of the model's context window (its
// input, the prompt cache's reads and writes included, and the answer) and,
// when the model's pricing is configured, the session's cost so far in its
// currency (saved with the session). ok is false when the window is not
// known (the update needs a size; acpgate does not guess one). Input
// tokens served from the provider's prompt cache are priced at the
// model's cached input price.
func (tu *turns) usageUpdate(s turnSession, u gateway.Usage) (update acpsdk.SessionUsageUpdate, ok bool) {
	window, cost, costs := s.chargeUsage(tu.conf, u)
	if cost != nil {
		if err := s.updateMeta(func(m *session.Meta) { m.Extra[extraCost] = costs }); err != nil {
			tu.logger.Warn("saving the session's cost", "session", s.sessionID(), "err", err)
		}
	}
	if window <= 0 {
		return update, false
	}
	used := u.Input() + u.OutputTokens
	return acpsdk.SessionUsageUpdate{Used: used, Size: window, Cost: cost, Meta: usageMeta(u)}, true
}

// usageMeta is the _meta of a usage_update: the response's tokens, named
// as the fields of ACP's Usage (inputTokens are those neither read from
// nor written to the cache).
func usageMeta(u gateway.Usage) map[string]any {
	return map[string]any{"acpgate": map[string]any{"usage": map[string]any{
		"inputTokens": u.InputTokens, "outputTokens": u.OutputTokens,
		"cachedReadTokens": u.CacheReadTokens, "cachedWriteTokens": u.CacheWriteTokens,
	}}}
}

// costMeta copies a session's costs for its metadata.
func costMeta(m map[string]float64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
