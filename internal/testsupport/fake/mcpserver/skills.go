package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// -skills: the skills extension (io.modelcontextprotocol/skills,
// SEP-2640), which mcp-go's server does not implement. The server declares
// it in its capabilities, serves three skills' files as resources (each
// resources/read of a skill:// URI records "read <uri>"), and a filter on
// stdin answers skills/list (recording "skills/list") before mcp-go sees
// it:
//
//	skill://good/SKILL.md, skill://good/notes.md
//	    The skill good, listed with the right digests and sizes.
//	skill://tampered/SKILL.md
//	    Listed with the digest and size of another text than it serves.
//	skill://huge/SKILL.md
//	    Listed (and served) at 300 KiB: more than a client reads.
//
// Over stdio only.

const skillsID = "io.modelcontextprotocol/skills"

// The texts of the -skills skills.
const (
	goodSkill     = "---\nname: good\ndescription: A skill whose files are what the listing says\n---\n\nGood skill body: say GOOD-SKILL-LOADED.\n"
	goodNotes     = "Notes of the good skill.\n"
	tamperedSkill = "---\nname: tampered\ndescription: A skill whose served body is not the listed one\n---\n\nEvil body...\n"
	tamperedAsked = "---\nname: tampered\ndescription: A skill whose served body is not the listed one\n---\n\nHonest body.\n"
)

// hugeSkill is the -skills skill over a client's bound on a SKILL.md.
var hugeSkill = "---\nname: huge\ndescription: A skill too large to load\n---\n\n" + strings.Repeat("x", 300<<10) + "\n"

// skillFlags registers -skills.
func skillFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.skills, "skills", false, "the skills extension: skills/list and three skills' files as resources (stdio)")
}

// skillOptions are the server options of -skills.
func (a *app) skillOptions() []server.ServerOption {
	if !a.cfg.skills {
		return nil
	}
	return []server.ServerOption{server.WithExtensions(map[string]any{skillsID: map[string]any{}})}
}

// skillFiles are the files -skills serves, by URI.
func skillFiles() map[string]string {
	return map[string]string{
		"skill://good/SKILL.md":     goodSkill,
		"skill://good/notes.md":     goodNotes,
		"skill://tampered/SKILL.md": tamperedSkill,
		"skill://huge/SKILL.md":     hugeSkill,
	}
}

// addSkills adds the -skills files as resources.
func (a *app) addSkills() {
	if !a.cfg.skills {
		return
	}
	for uri, text := range skillFiles() {
		a.srv.AddResource(mcp.NewResource(uri, uri, mcp.WithMIMEType("text/markdown")),
			func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				a.rec.event("read %s", uri)
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}, nil
			})
	}
}

// skillEntry is a skills/list entry of the skill at uri whose listed files
// are files (URI → the text whose digest and size are listed).
func skillEntry(name, desc, uri string, files [][2]string) map[string]any {
	var res []map[string]any
	for _, f := range files {
		sum := sha256.Sum256([]byte(f[1]))
		res = append(res, map[string]any{"uri": f[0], "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(f[1])})
	}
	return map[string]any{"uri": uri, "frontmatter": map[string]any{"name": name, "description": desc}, "resources": res}
}

// skillsList is the -skills skills/list result.
func skillsList() map[string]any {
	return map[string]any{"skills": []any{
		skillEntry("good", "A skill whose files are what the listing says", "skill://good/SKILL.md",
			[][2]string{{"skill://good/SKILL.md", goodSkill}, {"skill://good/notes.md", goodNotes}}),
		skillEntry("tampered", "A skill whose served body is not the listed one", "skill://tampered/SKILL.md",
			[][2]string{{"skill://tampered/SKILL.md", tamperedAsked}}),
		skillEntry("huge", "A skill too large to load", "skill://huge/SKILL.md",
			[][2]string{{"skill://huge/SKILL.md", hugeSkill}}),
	}}
}

// skillsInput returns r with skills/list requests taken out and answered
// on stdout (-skills), or r itself.
func (a *app) skillsInput(r io.Reader) io.Reader {
	if !a.cfg.skills {
		return r
	}
	return takeLines(r, a.answerSkills)
}

// answerSkills answers line if it is a skills/list request, and reports
// whether it was.
func (a *app) answerSkills(line []byte) bool {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &req) != nil || req.Method != "skills/list" || len(req.ID) == 0 {
		return false
	}
	a.rec.event("skills/list")
	_ = a.out.writeJSON(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": skillsList()})
	return true
}
