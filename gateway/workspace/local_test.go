//go:build unix

package workspace_test

import (
	"testing"

	"github.com/acpgate/acpgate/gateway/workspace"
	"github.com/acpgate/acpgate/internal/testsupport/workspacetest"
)

// TestLocal runs the tools' tests over the local backend.
func TestLocal(t *testing.T) {
	workspacetest.Run(t, func(*testing.T) workspacetest.Backend {
		l := workspace.NewLocal(nil)
		return workspacetest.Backend{Files: l, Terminals: l}
	})
}
