package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is the resources a prompt mentions: read for the model,
// framed as untrusted, subscribed so that a change is noted at the next
// turn.

// resourceContext prepares a prompt's input for the model: each block
// that mentions a resource of one of the session's servers (a
// resource_link, or an embedded resource, whose URI a server lists or a
// template of one matches) is replaced by the resource as its server
// reads it now, framed and capped like a tool result; the resource is
// subscribed to where the server allows. Blocks that belong to no server
// stay as they are. A note saying which mentioned resources changed since
// the last turn goes first.
func (tu *turns) resourceContext(ctx context.Context, s turnSession, input []gateway.Content) []gateway.Content {
	if tu.conf.model(ctx, s) == nil {
		return input // the turn only says how to configure a model
	}
	c := s.caller()
	var opts *bridge.Options
	out := make([]gateway.Content, 0, len(input)+1)
	if note := changedNote(s.takeChanged()); note != "" {
		out = append(out, gateway.Content{Type: gateway.ContentText, Text: note})
	}
	for _, b := range input {
		if b.Type != gateway.ContentResourceLink && b.Type != gateway.ContentResource || b.URI == "" {
			out = append(out, b)
			continue
		}
		server, ok := c.ResourceServer(b.URI)
		if !ok {
			out = append(out, b)
			continue
		}
		if opts == nil {
			opts = s.bridgeOptions(tu.conf)
		}
		res := bridge.ReadResource(ctx, c, opts, server, b.URI)
		out = append(out, gateway.Content{Type: gateway.ContentText, Text: "[The user mentioned this resource]\n" + res.ModelText()})
		if !res.IsError {
			s.subscribeMention(ctx, resourceKey{server, b.URI})
		}
	}
	return out
}

// changedNote tells the model which mentioned resources changed ("" for
// none). The URIs are the ones the user mentioned, not server text.
func changedNote(keys []resourceKey) string {
	if len(keys) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[Note from acpgate: these resources mentioned earlier have changed since; read them again with " + bridge.ReadResourceTool + " before relying on them:")
	for _, k := range keys {
		fmt.Fprintf(&b, "\n- %s (MCP server %s)", k.uri, k.server)
	}
	b.WriteString("]")
	return b.String()
}

// subscribeMention subscribes to a mentioned resource of one of the
// session's servers, once per session; on a shared server, once for all
// the sessions that mention it (see sharedSubs).
func (s *liveSession) subscribeMention(ctx context.Context, k resourceKey) {
	m := s.caller().manager(k.server)
	if !s.res.subscribe(k, m) {
		return
	}
	if err := s.subscribeOn(ctx, m, k, true); err != nil {
		s.res.forget(k)
		if !errors.Is(err, mcpclient.ErrUnsupported) {
			s.logger.Debug("resources/subscribe failed", "session", s.id, "server", k.server, "uri", k.uri, "err", err)
		}
	}
}
