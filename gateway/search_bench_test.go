package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/toolsearch"
)

// realTools loads the tool lists of four real tool servers (the snapshots
// the ranking test uses) and deals them out to servers servers of
// perServer tools each, named as a session's tools from servers are
// (ext__<server>__<tool>): realistic names, descriptions and schemas,
// servers*perServer tools in all.
func realTools(b *testing.B, servers, perServer int) []gateway.Tool {
	b.Helper()
	type def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var defs []def
	for _, s := range []string{"everything", "filesystem", "github", "memory"} {
		data, err := os.ReadFile(filepath.Join("toolsearch", "testdata", s+".json"))
		if err != nil {
			b.Fatal(err)
		}
		var list struct{ Tools []def }
		if err := json.Unmarshal(data, &list); err != nil {
			b.Fatal(err)
		}
		defs = append(defs, list.Tools...)
	}
	out := make([]gateway.Tool, 0, servers*perServer)
	for s := range servers {
		for i := range perServer {
			d := defs[(s*perServer+i)%len(defs)]
			t := namedTool(fmt.Sprintf("ext__srv%02d__%s_%d", s, d.Name, i))
			t.Description, t.InputSchema = d.Description, d.InputSchema
			out = append(out, t)
		}
	}
	return out
}

// definitionBytes is a Provider that plays a three-step turn (search,
// call a found tool through call_tool, answer) and adds up the size of the tool definitions
// each request carries, as JSON.
type definitionBytes struct {
	step, requests, bytes int
	found                 string
}

func (d *definitionBytes) Complete(_ context.Context, req gateway.ModelRequest, _ func(gateway.Delta)) (gateway.ModelResponse, error) {
	b, err := json.Marshal(req.Tools)
	if err != nil {
		return gateway.ModelResponse{}, err
	}
	d.requests++
	d.bytes += len(b)
	d.step++
	switch d.step {
	case 1:
		return calls(gateway.ToolCall{ID: "s", Name: gateway.SearchToolName, Arguments: json.RawMessage(`{"query":"create an issue in a repository"}`)}), nil
	case 2:
		return calls(gateway.ToolCall{ID: "c", Name: gateway.CallToolName, Arguments: json.RawMessage(`{"name":"` + d.found + `","arguments":{}}`)}), nil
	}
	return gateway.ModelResponse{Message: gateway.Message{Content: userInput("done")}, Stop: gateway.StopEndTurn}, nil
}

// BenchmarkToolDefinitionBytes: one three-request turn over 1000 tools
// from 20 servers, with tool search at its default threshold and without
// it; reports the bytes of tool definitions per model request.
func BenchmarkToolDefinitionBytes(b *testing.B) {
	tools := realTools(b, 20, 50)
	for _, mode := range []struct {
		name      string
		threshold int
	}{{"search", 0}, {"all", gateway.NoToolSearch}} {
		b.Run(mode.name, func(b *testing.B) {
			acc := gateway.ToolAccess{Tools: gateway.NewToolset([]gateway.Tool{namedTool("read_file")}, tools)}
			r := gateway.NewRunner(gateway.RunnerOptions{})
			var total, requests int
			for b.Loop() {
				model := &definitionBytes{found: "ext__srv00__create_issue_" + createIssueIndex(b, tools)}
				if _, err := r.Run(context.Background(), gateway.RunOptions{Model: model, Input: userInput("go"), ToolAccess: acc, SearchThreshold: mode.threshold}); err != nil {
					b.Fatal(err)
				}
				total += model.bytes
				requests += model.requests
			}
			b.ReportMetric(float64(total)/float64(requests), "defbytes/request")
		})
	}
}

// createIssueIndex is the suffix of server 0's create_issue tool.
func createIssueIndex(b *testing.B, tools []gateway.Tool) string {
	for _, t := range tools[:50] {
		var i int
		if _, err := fmt.Sscanf(t.Name, "ext__srv00__create_issue_%d", &i); err == nil {
			return fmt.Sprint(i)
		}
	}
	b.Fatal("no create_issue tool on server 0")
	return ""
}

// BenchmarkToolSearchIndex: building the index over 1000 tools (done once
// per turn, or when the session's tools change mid-turn).
func BenchmarkToolSearchIndex(b *testing.B) {
	docs := searchDocs(realTools(b, 20, 50))
	for b.Loop() {
		toolsearch.New(docs)
	}
}

// BenchmarkToolSearchQuery: one search_tools query over 1000 tools.
func BenchmarkToolSearchQuery(b *testing.B) {
	ix := toolsearch.New(searchDocs(realTools(b, 20, 50)))
	for b.Loop() {
		if hits := ix.Search("create an issue in a repository", 8); len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
}

func searchDocs(tools []gateway.Tool) []toolsearch.Doc {
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description, Schema: t.InputSchema}
	}
	return docs
}
