//go:build unix

package skills_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/inputs/skills"
)

// TestDiscoverNeverBlocks: a named pipe as a SKILL.md, and one as a
// project's whole .agents/skills folder, are Problems at once (a reader
// of either would wait for a writer forever), and the other skills are
// found.
func TestDiscoverNeverBlocks(t *testing.T) {
	project := t.TempDir()
	agents := filepath.Join(project, ".agents", "skills")
	writeSkill(t, agents, "ok", skillMD("ok", "Fine", ""))
	if err := os.MkdirAll(filepath.Join(agents, "pipe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(agents, "pipe", skills.FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(project, ".claude", "skills"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var found []skills.Skill
	var problems []skills.Problem
	go func() {
		defer close(done)
		found, problems = skills.Discover(context.Background(), skills.ProjectSkillDirs([]string{project}), discard())
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Discover blocked on a named pipe")
	}
	if len(found) != 1 || found[0].Name != "ok" {
		t.Errorf("found %+v", found)
	}
	if len(problems) != 2 || !errors.Is(problems[0].Err, safefile.ErrNotRegular) || !errors.Is(problems[1].Err, safefile.ErrNotDir) {
		t.Errorf("problems %v", problems)
	}
}
