package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// The skills extension (io.modelcontextprotocol/skills, SEP-2640): a
// server that declares it in its capabilities' extensions serves skills
// as resources (skill:// URIs, read with resources/read) and lists them
// with skills/list. acpgate declares the extension in its client
// capabilities (on both revisions: the initialize handshake and the
// 2026-07-28 _meta), lists a declaring server's skills with its
// resources (on connection, on notifications/resources/list_changed) and
// holds the entries in the catalog (Manager.Skills). It reads no skill
// file itself: a skill's files are read, with ReadResource, only when the
// skill is loaded, and checked against its entry by the caller
// (internal/inputs/skills), never here on connection or listing.

// SkillsExtension is the skills extension's identifier.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The method that lists a server's skills.
const methodSkillsList mcp.MCPMethod = "skills/list"

// Bounds on a server's listing of skills: entries over them are dropped
// with a warning.
const (
	// MaxSkills bounds the skills kept of one server.
	MaxSkills = 256
	// MaxSkillResources bounds the files of one skill's entry: a skill
	// with more is dropped.
	MaxSkillResources = 1024
	// maxSkillPages bounds the pages of one listing.
	maxSkillPages = 16
)

// SkillEntry is one entry of a server's skills/list: the URI of the
// skill's SKILL.md, its frontmatter as the server rendered it (a JSON
// object), and its files with their digests. mcp-go has no type for it.
type SkillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources are the skill's files, SKILL.md included; nil when the
	// server published none (a skill generated at read time).
	Resources []SkillResource `json:"resources,omitempty"`
}

// SkillResource is one file of a skill's entry.
type SkillResource struct {
	URI string `json:"uri"`
	// Digest is "sha256:" and the hex SHA-256 of the file's bytes.
	Digest string `json:"digest"`
	// Size is the file's length in bytes, when the server gives it.
	Size *int64 `json:"size,omitempty"`
}

// errSkillsList is what a malformed skills/list answer fails with.
var errSkillsList = errors.New("malformed skills/list result")

// offersSkills reports whether a server's capabilities declare the
// skills extension.
func offersSkills(caps mcp.ServerCapabilities) bool {
	_, ok := caps.Extensions[SkillsExtension]
	return ok
}

// listSkills lists c's skills, following cursors (at most maxSkillPages
// pages), keeping at most MaxSkills well-formed entries.
func (ls *lister) listSkills(ctx context.Context, c *conn) ([]SkillEntry, error) {
	var out []SkillEntry
	cursor := ""
	for page := 0; page < maxSkillPages; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var raw json.RawMessage
		var err error
		if c.modern() {
			body, header, merr := modernRequest(c, ls.env.opts, methodSkillsList, params)
			if merr != nil {
				return nil, merr
			}
			raw, err = ls.raw.rawRequest(ctx, c, "acpgate-skills-", string(methodSkillsList), body, header)
		} else {
			raw, err = ls.raw.rawRequest(ctx, c, "acpgate-skills-", string(methodSkillsList), params, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("skills/list: %w", err)
		}
		var res struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("%w: %v", errSkillsList, err)
		}
		for _, r := range res.Skills {
			e, err := decodeSkillEntry(r)
			if err != nil {
				ls.env.logger.Warn("skill entry dropped", "err", err)
				continue
			}
			if len(out) == MaxSkills {
				ls.env.logger.Warn("skills over the limit dropped", "limit", MaxSkills)
				return out, nil
			}
			out = append(out, e)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// decodeSkillEntry decodes and checks the shape of one entry: a uri, an
// object for frontmatter, files each with a uri and a sha256 digest.
func decodeSkillEntry(raw json.RawMessage) (SkillEntry, error) {
	var e SkillEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("%w: %v", errSkillsList, err)
	}
	var fm map[string]json.RawMessage
	switch {
	case e.URI == "":
		return e, fmt.Errorf("%w: an entry without a uri", errSkillsList)
	case json.Unmarshal(e.Frontmatter, &fm) != nil || fm == nil:
		return e, fmt.Errorf("%w: skill %q: frontmatter is not an object", errSkillsList, e.URI)
	case len(e.Resources) > MaxSkillResources:
		return e, fmt.Errorf("%w: skill %q: %d files, at most %d", errSkillsList, e.URI, len(e.Resources), MaxSkillResources)
	}
	for _, r := range e.Resources {
		if r.URI == "" || r.Size != nil && *r.Size < 0 {
			return e, fmt.Errorf("%w: skill %q: a file without a uri or with a negative size", errSkillsList, e.URI)
		}
	}
	return e, nil
}

// Skills returns the skills of ready servers that declare the skills
// extension, in spec order, as each listed them (see the comment at the
// top of skills.go).
func (m *Manager) Skills() []ServerResource[SkillEntry] {
	return collect(m, func(c *catalog) []SkillEntry { return c.skills })
}
