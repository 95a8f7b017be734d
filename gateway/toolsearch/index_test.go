package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestTermsShareStems(t *testing.T) {
	same := [][]string{
		{"listIssues", "list_issues", "listing issue"},
		{"create", "created", "creating", "creates"},
		{"match", "matches"},
		{"entries", "entry"},
		{"file", "files"},
		{"search-code", "searching code"},
	}
	for _, group := range same {
		want := Terms(group[0])
		for _, w := range group[1:] {
			if got := Terms(w); !slices.Equal(got, want) {
				t.Errorf("Terms(%q) = %q, Terms(%q) = %q: want the same", w, got, group[0], want)
			}
		}
	}
	if got := Terms("the file of a user"); !slices.Equal(got, []string{"fil", "user"}) {
		t.Errorf("stop words kept: %q", got)
	}
}

func TestSearchRanks(t *testing.T) {
	docs := []Doc{
		{Name: "ext__github__list_issues", ShortName: "list_issues", Description: "List issues in a GitHub repository."},
		{Name: "ext__github__create_issue", ShortName: "create_issue", Description: "Create a new issue in a GitHub repository."},
		{Name: "ext__fs__read_file", ShortName: "read_file", Description: "Read the complete contents of a file.", Schema: json.RawMessage(`{"properties":{"path":{"description":"where the file is"}}}`)},
		{Name: "ext__fs__search_files", ShortName: "search_files", Description: "Recursively search for files matching a pattern."},
		{Name: "ext__memory__create_entities", ShortName: "create_entities", Description: "Create multiple new entities in the knowledge graph."},
	}
	ix := New(docs)
	cases := []struct {
		query string
		first int
	}{
		{"open a new bug report in a repo", 1},
		{"show the issues of a repository", 0},
		{"contents of a file at a path", 2},
		{"find files by pattern", 3},
		{"add entities to the knowledge graph", 4},
		{"read_file", 2},
		{"ext__github__create_issue", 1},
	}
	for _, c := range cases {
		hits := ix.Search(c.query, 3)
		if len(hits) == 0 || hits[0].Index != c.first {
			t.Errorf("Search(%q) = %v, want %s first", c.query, hits, docs[c.first].Name)
		}
	}
	if hits := ix.Search("READ_FILE", 3); !math.IsInf(hits[0].Score, 1) || hits[0].Index != 2 {
		t.Errorf("exact short name is not ranked as exact: %v", hits)
	}
	if hits := New([]Doc{{Name: "ext__fs__read_file"}}).Search("read_file", 1); len(hits) != 1 || math.IsInf(hits[0].Score, 1) {
		t.Errorf("a name's part found as exact without a ShortName: %v", hits)
	}
	if hits := ix.Search("zebra", 3); len(hits) != 0 {
		t.Errorf("unrelated query matched %v", hits)
	}
	if hits := ix.Search("file", 1); len(hits) != 1 {
		t.Errorf("k=1 returned %d hits", len(hits))
	}
}
