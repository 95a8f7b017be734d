// Package toolsearch ranks a session's tools against a query, for the
// search_tools tool the model gets when a session has more tools than it
// should see at once. Ranking is BM25 over each tool's name, title,
// description and parameter names, with a tool whose name matches the
// query exactly first.
package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Doc is what the index knows of one tool.
type Doc struct {
	// Name is the name the model calls; Title is the human title.
	Name, Title string
	// ShortName, if set, is another name that finds the tool first (its
	// name without the prefix that sets it apart from other sources'
	// tools); it is not indexed otherwise.
	ShortName string
	// Description is the tool's description.
	Description string
	// Schema is the JSON Schema of its arguments: the names and
	// descriptions of its properties are indexed.
	Schema json.RawMessage
}

// Hit is one result of Search.
type Hit struct {
	// Index is the position of the tool in the docs the Index was built from.
	Index int
	// Score is higher for a better match; an exact name match scores +Inf.
	Score float64
}

// Index is an immutable search index over a list of tools. Build it once
// per tool list; Search is safe for concurrent use.
type Index struct {
	docs   []Doc
	terms  []map[string]float64 // per doc: weighted term frequency
	length []float64            // per doc: weighted length
	df     map[string]int       // documents each term occurs in
	avgLen float64
	names  map[string]int // exact names (full and short) → doc
}

// Field weights: a word in a tool's name says more than one in its
// description.
const (
	weightName   = 3.0
	weightTitle  = 2.0
	weightDesc   = 1.0
	weightParams = 1.5
	bm25K1       = 1.2
	bm25B        = 0.75
)

// New indexes docs.
func New(docs []Doc) *Index {
	ix := &Index{docs: docs, df: map[string]int{}, names: map[string]int{}}
	total := 0.0
	for i, d := range docs {
		tf := map[string]float64{}
		add := func(text string, w float64) {
			for _, t := range Terms(text) {
				tf[t] += w
			}
		}
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDesc)
		add(schemaText(d.Schema), weightParams)
		n := 0.0
		for t, f := range tf {
			ix.df[t]++
			n += f
		}
		ix.terms = append(ix.terms, tf)
		ix.length = append(ix.length, n)
		total += n
		ix.names[strings.ToLower(d.Name)] = i
		if short := strings.ToLower(d.ShortName); short != "" {
			if _, taken := ix.names[short]; !taken {
				ix.names[short] = i
			}
		}
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// Search returns at most k tools matching query, best first: a tool whose
// name (or its ShortName) is the query, case aside, comes first, then the
// rest by BM25 score. Tools sharing no term with the query are not
// returned.
func (ix *Index) Search(query string, k int) []Hit {
	var hits []Hit
	exact, hasExact := ix.names[strings.ToLower(strings.TrimSpace(query))]
	if hasExact {
		hits = append(hits, Hit{Index: exact, Score: math.Inf(1)})
	}
	q := Terms(query)
	n := float64(len(ix.docs))
	for i, tf := range ix.terms {
		if hasExact && i == exact {
			continue
		}
		score := 0.0
		for _, t := range q {
			f := tf[t]
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*ix.length[i]/ix.avgLen))
		}
		if score > 0 {
			hits = append(hits, Hit{Index: i, Score: score})
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// schemaText returns the names and descriptions of a schema's top-level
// properties, as text to index.
func schemaText(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return ""
	}
	var b strings.Builder
	for name, p := range s.Properties {
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(p.Description)
		b.WriteByte(' ')
	}
	return b.String()
}

// Terms splits text into search terms: words split at non-letters and
// digits, at camelCase humps and at snake_case and kebab-case joins,
// lowercased, stop words dropped and common suffixes stripped, so that
// "listIssues", "list_issues" and "listing issues" share their terms.
func Terms(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if stopWords[w] || len(w) < 2 {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// words splits text at non-alphanumerics and at lower→upper case changes.
func words(text string) []string {
	var out []string
	start := -1
	prev := rune(0)
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		hump := start >= 0 && unicode.IsUpper(r) && unicode.IsLower(prev)
		if (!alnum || hump) && start >= 0 {
			out = append(out, text[start:i])
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// stem strips a few English suffixes and a final "e" (a light stemmer:
// enough for "issues"/"issue", "listing"/"list", "created"/"create",
// "matches"/"match", "entries"/"entry").
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		w = w[:len(w)-2]
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:len(w)-1]
	}
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "e")
	}
	return w
}

// stopWords carry no meaning for finding a tool.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "for": true, "in": true, "on": true,
	"and": true, "or": true, "with": true, "by": true, "is": true, "it": true, "this": true,
	"that": true, "from": true, "as": true, "be": true, "are": true, "at": true, "if": true,
	"its": true, "into": true, "can": true, "use": true, "using": true, "tool": true, "will": true,
	"me": true, "my": true, "i": true, "you": true, "your": true, "all": true, "any": true,
}
