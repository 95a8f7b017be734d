package toolsearch

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRankingOnRealServers indexes the tool lists of four real tool
// servers (server-everything, server-filesystem, server-memory and the
// GitHub server, snapshots of their tool lists in testdata) as one
// session's tools, named as tools from servers are (ext__<server>__<tool>,
// the tool's own name its ShortName), and checks that a paraphrase of each
// tool's description ranks that tool in the top 5 for at least 95 % of the
// queries in testdata/queries.tsv.
func TestRankingOnRealServers(t *testing.T) {
	var docs []Doc
	index := map[string]int{}
	for _, server := range []string{"everything", "filesystem", "github", "memory"} {
		data, err := os.ReadFile(filepath.Join("testdata", server+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			name := "ext__" + server + "__" + tl.Name
			index[name] = len(docs)
			docs = append(docs, Doc{Name: name, ShortName: tl.Name, Description: tl.Description, Schema: tl.InputSchema})
		}
	}
	ix := New(docs)
	f, err := os.Open(filepath.Join("testdata", "queries.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, good := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("bad line %q", line)
		}
		want, ok := index["ext__"+parts[0]+"__"+parts[1]]
		if !ok {
			t.Fatalf("no tool %s.%s", parts[0], parts[1])
		}
		total++
		hits := ix.Search(parts[2], 5)
		found := false
		for _, h := range hits {
			found = found || h.Index == want
		}
		if found {
			good++
			continue
		}
		var got []string
		for _, h := range hits {
			got = append(got, docs[h.Index].Name)
		}
		t.Logf("%q: %s not in the top 5 %v", parts[2], docs[want].Name, got)
	}
	if total < 60 {
		t.Fatalf("only %d queries", total)
	}
	if good*100 < total*95 {
		t.Errorf("%d of %d queries rank their tool in the top 5 (%.0f %%), want ≥ 95 %%", good, total, 100*float64(good)/float64(total))
	}
	t.Logf("%d of %d queries rank their tool in the top 5", good, total)
}
