package mcpclient_test

import (
	"strings"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
)

// TestSkillsListed: a server declaring the skills extension is asked
// skills/list once it is ready; the entries are the catalog's
// (Manager.Skills), with their files, digests and sizes; and no skill file
// is read on connection or listing. A server without the extension is
// not asked.
func TestSkillsListed(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	plainRec, plainLines := recordFile(t)
	m := start(t, opts, stdio("docs", "-skills", "-record", rec), stdio("plain", "-record", plainRec))
	skills := m.Skills()
	if len(skills) != 3 {
		t.Fatalf("skills %+v", skills)
	}
	good := skills[0]
	if good.Server != "docs" || good.Item.URI != "skill://good/SKILL.md" || string(good.Item.Frontmatter) != `{"description":"A skill whose files are what the listing says","name":"good"}` ||
		len(good.Item.Resources) != 2 || !strings.HasPrefix(good.Item.Resources[0].Digest, "sha256:") || good.Item.Resources[1].Size == nil || *good.Item.Resources[1].Size != int64(len("Notes of the good skill.\n")) {
		t.Errorf("the good skill's entry: %+v", good)
	}
	all := strings.Join(lines(), "\n")
	if !strings.Contains(all, "skills/list") || strings.Contains(all, "read skill://") {
		t.Errorf("the server saw:\n%s", all)
	}
	if strings.Contains(strings.Join(plainLines(), "\n"), "skills/list") {
		t.Error("a server without the extension was asked skills/list")
	}
}

// TestSkillsListedAgain: a list_changed notification of the server's
// resources or prompts (here prompts/list_changed, after the test
// server's add_prompt) has its skills listed again.
func TestSkillsListedAgain(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	events := newEventLog()
	opts.OnEvent = events.add
	rec, lines := recordFile(t)
	m := start(t, opts, stdio("docs", "-skills", "-live", "-record", rec))
	count := func() int { return strings.Count(strings.Join(lines(), "\n"), "skills/list") }
	if count() != 1 {
		t.Fatalf("skills/list %d times at start", count())
	}
	from := len(events.snapshot())
	if _, err := m.CallTool(t.Context(), "docs", "add_prompt", map[string]any{"name": "fresh"}); err != nil {
		t.Fatal(err)
	}
	events.waitFrom(t, from, "the catalog listed again", func(e mcpclient.Event) bool { return e.Kind == mcpclient.EventResourcesChanged })
	if count() != 2 {
		t.Errorf("skills/list %d times after list_changed:\n%s", count(), strings.Join(lines(), "\n"))
	}
	if len(m.Skills()) != 3 {
		t.Errorf("skills after the relisting: %+v", m.Skills())
	}
}
