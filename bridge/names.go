// Package bridge turns the MCP tools of a session's mcpclient.Manager into
// gateway tools: names the model can call, schemas passed through, results
// converted and framed as untrusted content, and the session's tool view
// (Sync, a gateway.ToolView) derived from its servers' events as servers
// come, change and go.
package bridge

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest tool name providers accept.
const MaxNameLen = 64

// hashLen is the length of the hash suffix of shortened or disambiguated
// names ("_" plus 8 hex digits).
const hashLen = 9

// sanitize replaces every character outside [A-Za-z0-9_-] by '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// hash is a short stable digest of (server, tool, n).
func hash(server, tool string, n int) string {
	h := sha256.New()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	for ; n > 0; n-- {
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:hashLen-1]
}

// withHash returns base cut so that base + "_" + hash fits MaxNameLen.
func withHash(base, server, tool string, n int) string {
	if len(base) > MaxNameLen-hashLen {
		base = base[:MaxNameLen-hashLen]
	}
	return base + "_" + hash(server, tool, n)
}

// Name returns the bridged name of tool of server, "mcp__<server>__<tool>",
// sanitized and at most MaxNameLen characters (a long name is cut and gets a
// stable hash suffix). Different pairs may map to the same Name; a Namer
// resolves that.
func Name(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) > MaxNameLen {
		return withHash(name, server, tool, 0)
	}
	return name
}

// Namer hands out unique bridged names, first come first served: the first
// pair to want a name gets it; a later pair whose name is taken gets the
// name with a hash suffix of its own. Feeding pairs in the same order gives
// the same names. Not safe for concurrent use.
type Namer struct{ used map[string]bool }

// NewNamer returns a Namer with no names taken.
func NewNamer() *Namer { return &Namer{used: map[string]bool{}} }

// Name returns a unique bridged name for (server, tool).
func (n *Namer) Name(server, tool string) string {
	name := Name(server, tool)
	for i := 0; n.used[name]; i++ {
		name = withHash(Name(server, tool), server, tool, i+1)
	}
	n.used[name] = true
	return name
}
