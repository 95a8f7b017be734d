package workspace_test

import (
	"slices"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/workspace"
)

// TestToolSet: the backends given decide the tools; their kinds and
// permission rules: read never asks, write and edit ask, run_command asks
// even in auto mode.
func TestToolSet(t *testing.T) {
	l := workspace.NewLocal(nil)
	names := func(tools []gateway.Tool) []string {
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name)
		}
		return out
	}
	for _, c := range []struct {
		opts workspace.Options
		want []string
	}{
		{workspace.Options{}, nil},
		{workspace.Options{Files: l, ReadOnly: true}, []string{"read_file"}},
		{workspace.Options{Terminals: l}, []string{"run_command"}},
		{workspace.Options{Files: l, Terminals: l}, []string{"read_file", "write_file", "edit_file", "run_command"}},
	} {
		if got := names(workspace.Tools(c.opts)); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.opts, got, c.want)
		}
	}
	want := map[string]struct {
		kind             gateway.ToolKind
		ask, askInAuto   bool
		preview, visible bool
	}{
		"read_file":   {gateway.KindRead, false, false, false, true},
		"write_file":  {gateway.KindEdit, true, false, true, true},
		"edit_file":   {gateway.KindEdit, true, false, true, true},
		"run_command": {gateway.KindExecute, true, true, false, true},
	}
	for _, tl := range workspace.Tools(workspace.Options{Files: l, Terminals: l, Cwd: "/w", Meta: map[string]any{"workspace": "local"}}) {
		w := want[tl.Name]
		if tl.Kind != w.kind || tl.AskApproval != w.ask || tl.AskInAuto != w.askInAuto || (tl.Preview != nil) != w.preview || tl.Meta["workspace"] != "local" {
			t.Errorf("%s: kind %s ask %v askInAuto %v preview %v meta %v", tl.Name, tl.Kind, tl.AskApproval, tl.AskInAuto, tl.Preview != nil, tl.Meta)
		}
	}
}
