package skills

import (
	"cmp"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/gateway/toolsearch"
	"github.com/acpgate/acpgate/mcpclient"
)

// This file is a session's catalog of skills: its file skills and its
// servers' skills, each under the name the model and the user call it
// by, in a stable order, searchable.

// Catalog is a session's skills, in the order the model sees them:
// project skills, user skills, then each server's (in the order of the
// servers given), each group by name. Build one with NewCatalog; a value
// that is never modified, safe for concurrent use.
type Catalog struct {
	entries []Entry
	index   *toolsearch.Index
}

// Entry is one skill of a catalog under its ID: the name the model
// passes to load_skill and the user types after "/". A file skill's ID is
// its name; a server skill's is the server's name, ":" and its name (and,
// when two skills of one server share a name, ":" and the path in its
// URI), so that no server's skill can stand in for another origin's.
type Entry struct {
	ID string
	Skill
}

// NewCatalog returns the catalog of files (Discover's, in order) and of
// servers' entries (mcpclient.Manager.Skills), keeping those allowed
// reports true for (by ID; nil keeps all). A server entry that does not
// check (FromEntry) is a Problem.
func NewCatalog(files []Skill, servers []mcpclient.ServerResource[mcpclient.SkillEntry], allowed func(id string) bool) (*Catalog, []Problem) {
	var all []Entry
	var problems []Problem
	for _, sk := range files {
		all = append(all, Entry{ID: sk.Name, Skill: sk})
	}
	slices.SortStableFunc(all, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(sourceRank(a.Source), sourceRank(b.Source)), cmp.Compare(a.ID, b.ID))
	})
	var fromServers []Entry
	names := map[string]int{} // server + name -> count
	order := map[string]int{} // server -> its place among the servers given
	for _, e := range servers {
		if _, ok := order[e.Server]; !ok {
			order[e.Server] = len(order)
		}
		sk, err := FromEntry(e.Server, e.Item)
		if err != nil {
			problems = append(problems, Problem{Path: "MCP server " + e.Server, Err: err})
			continue
		}
		fromServers = append(fromServers, Entry{ID: e.Server + ":" + sk.Name, Skill: sk})
		names[e.Server+":"+sk.Name]++
	}
	for i, e := range fromServers {
		if names[e.ID] > 1 {
			fromServers[i].ID += ":" + skillPath(e.Entry.URI)
		}
	}
	slices.SortStableFunc(fromServers, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(order[a.Server], order[b.Server]), cmp.Compare(a.ID, b.ID))
	})
	all = append(all, fromServers...)
	c := &Catalog{}
	for _, e := range all {
		if allowed == nil || allowed(e.ID) {
			c.entries = append(c.entries, e)
		}
	}
	docs := make([]toolsearch.Doc, len(c.entries))
	for i, e := range c.entries {
		docs[i] = toolsearch.Doc{Name: e.ID, ShortName: e.Name, Description: e.Description}
	}
	c.index = toolsearch.New(docs)
	return c, problems
}

// sourceRank orders sources: project, user, server.
func sourceRank(s Source) int {
	return slices.Index([]Source{SourceProject, SourceUser, SourceServer}, s)
}

// skillPath is a skill URI's path without its scheme and /SKILL.md.
func skillPath(uri string) string {
	if i := strings.Index(uri, "://"); i >= 0 {
		uri = uri[i+3:]
	}
	return strings.TrimSuffix(uri, "/"+FileName)
}

// Entries are the catalog's skills, in order (do not modify).
func (c *Catalog) Entries() []Entry {
	if c == nil {
		return nil
	}
	return c.entries
}

// Len is how many skills the catalog has.
func (c *Catalog) Len() int { return len(c.Entries()) }

// Find returns the skill called id.
func (c *Catalog) Find(id string) (Entry, bool) {
	for _, e := range c.Entries() {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// Search returns at most k skills ranked against query (BM25 over IDs,
// names and descriptions; an exact ID or name first).
func (c *Catalog) Search(query string, k int) []Entry {
	if c.Len() == 0 {
		return nil
	}
	var out []Entry
	for _, h := range c.index.Search(query, k) {
		out = append(out, c.entries[h.Index])
	}
	return out
}
