package acp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/inputs/skills"
)

// projectSkills makes a project with a skill of each name (its
// description "Skill <name> for <words>") and returns a sessionSkills
// over it with policy and limit.
func projectSkills(t *testing.T, policy config.SkillPolicy, limit int, names ...string) *sessionSkills {
	t.Helper()
	root := t.TempDir()
	for _, n := range names {
		dir := filepath.Join(root, ".agents", "skills", n)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		text := "---\nname: " + n + "\ndescription: Skill " + n + " for " + strings.ReplaceAll(n, "-", " ") + "\n---\nBody of " + n + ".\n"
		if err := os.WriteFile(filepath.Join(dir, skills.FileName), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return newSessionSkills(skillSource{
		dirs:   func() []skills.Dir { return skills.ProjectSkillDirs([]string{root}) },
		policy: func() (config.SkillPolicy, int) { return policy, limit },
	}, nil)
}

// run calls load_skill with args.
func run(t *testing.T, ss *sessionSkills, args string) (string, error) {
	t.Helper()
	res, err := ss.tool().Execute(context.Background(), json.RawMessage(args), nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), nil
}

// TestSkillsSectionBudget: within the limit the Skills section lists
// every allowed skill, in order, the same bytes each time; over it, only
// how many there are and how to search them, and load_skill's query finds
// them; a denied skill is neither listed, found nor loaded.
func TestSkillsSectionBudget(t *testing.T) {
	policy := config.SkillPolicy{Deny: []string{"secret-*"}}
	ss := projectSkills(t, policy, defaultMaxSkillsBytes, "pdf-forms", "git-release", "secret-keys")
	sec := ss.section(context.Background())
	if len(sec) != 1 || !strings.Contains(sec[0].Text, "\n- git-release (project): Skill git-release for git release\n- pdf-forms (project): ") || strings.Contains(sec[0].Text, "secret") {
		t.Fatalf("section %+v", sec)
	}
	if again := ss.section(context.Background()); again[0].Text != sec[0].Text {
		t.Error("the section changed with nothing changed")
	}

	small := projectSkills(t, policy, 40, "pdf-forms", "git-release", "secret-keys")
	text := small.section(context.Background())[0].Text
	if strings.Contains(text, "pdf-forms") || !strings.Contains(text, "This session has 2 skills, too many to list here: call load_skill with {\"query\": words}") {
		t.Errorf("over the limit: %s", text)
	}
	found, err := run(t, small, `{"query":"release"}`)
	if err != nil || !strings.HasPrefix(found, "Skills matching") || !strings.Contains(found, "- git-release (project)") || strings.Contains(found, "pdf-forms") {
		t.Errorf("search: %q, %v", found, err)
	}
	body, err := run(t, small, `{"name":"pdf-forms"}`)
	if err != nil || !strings.Contains(body, "# Skill pdf-forms (project)\n\nBody of pdf-forms.") {
		t.Errorf("load: %q, %v", body, err)
	}
	if !small.isLoaded("pdf-forms") || small.isLoaded("git-release") {
		t.Errorf("loaded %v", small.loadedIDs())
	}
	if _, err := run(t, small, `{"name":"secret-keys"}`); !errors.Is(err, errUnknownSkill) {
		t.Errorf("a denied skill loaded: %v", err)
	}
	if _, err := run(t, small, `{"name":"pdf-forms","file":"../../../etc/passwd"}`); !errors.Is(err, skills.ErrNotListed) {
		t.Errorf("a file not the skill's through load_skill: %v", err)
	}
}
