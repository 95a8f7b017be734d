package mcpclient_test

import (
	"strings"
	"testing"
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
