package mcpservers_test

import (
	"reflect"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"acpgate", []string{"acpgate"}},
		{"  npx  -y   server  ", []string{"npx", "-y", "server"}},
		{`node 'my server.js' --flag`, []string{"node", "my server.js", "--flag"}},
		{`cmd "a b" "c\"d" "e\\f" "g\h"`, []string{"cmd", "a b", `c"d`, `e\f`, `g\h`}},
		{`cmd 'it''s' 'a\b'`, []string{"cmd", "its", `a\b`}},
		{`cmd a\ b \'x`, []string{"cmd", "a b", "'x"}},
		{`cmd '' ""`, []string{"cmd", "", ""}},
		{`cmd pre"mid"'post'`, []string{"cmd", "premidpost"}},
		{"cmd\ttab\nnewline", []string{"cmd", "tab", "newline"}},
	}
	for _, tt := range tests {
		got, err := mcpservers.SplitCommand(tt.in)
		if err != nil {
			t.Errorf("mcpservers.SplitCommand(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("mcpservers.SplitCommand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "   ", `cmd 'open`, `cmd "open`, `cmd \`} {
		if got, err := mcpservers.SplitCommand(bad); err == nil {
			t.Errorf("mcpservers.SplitCommand(%q) = %q, want an error", bad, got)
		}
	}
}
