package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/inputs/skills"
	"github.com/acpgate/acpgate/mcpclient"
)

// skillMD is a SKILL.md with name, description and body.
func skillMD(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n" + body
}

// writeSkill writes dir/name/SKILL.md with text and returns its path.
func writeSkill(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name, skills.FileName)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestParse: the format's rules, each break naming its field; other
// fields kept as JSON values.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text, field string // field: "" for a valid file
	}{
		{"valid", skillMD("pdf-tools", "Work with PDFs", "Body.\n"), ""},
		{"crlf and bom", "\ufeff---\r\nname: a1\r\ndescription: d\r\n---\r\nBody\r\n", ""},
		{"no frontmatter", "# Just markdown\n", "---"},
		{"unclosed", "---\nname: a\ndescription: d\n", "closing"},
		{"bad yaml", "---\nname: [a\n---\n", "YAML"},
		{"no name", "---\ndescription: d\n---\n", "field name"},
		{"upper case", skillMD("PDF", "d", ""), "field name"},
		{"double hyphen", skillMD("a--b", "d", ""), "field name"},
		{"trailing hyphen", skillMD("ab-", "d", ""), "field name"},
		{"long name", skillMD(strings.Repeat("a", 65), "d", ""), "field name"},
		{"no description", "---\nname: a\n---\n", "field description"},
		{"blank description", "---\nname: a\ndescription: \"  \"\n---\n", "field description"},
		{"long description", skillMD("a", strings.Repeat("d", 1025), ""), "field description"},
		{"long compatibility", "---\nname: a\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", "field compatibility"},
		{"metadata not strings", "---\nname: a\ndescription: d\nmetadata:\n  n: 1\n---\n", "field metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, body, err := skills.Parse([]byte(tc.text))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if fm.Name() == "" || fm.Description() == "" || !strings.HasPrefix(body, "Body") {
					t.Errorf("frontmatter %v, body %q", fm, body)
				}
				return
			}
			if !errors.Is(err, skills.ErrFormat) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Parse: %v, want ErrFormat naming %q", err, tc.field)
			}
		})
	}
	fm, _, err := skills.Parse([]byte("---\nname: a\ndescription: d\nlicense: MIT\nmetadata:\n  version: \"2\"\nallowed-tools: Read Bash\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fm["license"] != "MIT" || fm["allowed-tools"] != "Read Bash" || fm["metadata"].(map[string]any)["version"] != "2" {
		t.Errorf("other fields: %v", fm)
	}
}

// TestDiscover: two project folders and a user folder; a malformed
// skill, one whose name is not its folder's, one linked out of the
// project, one hard-linked, and a user skill the project's shadows are
// Problems naming why; the rest are found in order.
func TestDiscover(t *testing.T) {
	project, outside, user := t.TempDir(), t.TempDir(), t.TempDir()
	agents := filepath.Join(project, ".agents", "skills")
	claude := filepath.Join(project, ".claude", "skills")
	writeSkill(t, agents, "deploy", skillMD("deploy", "Deploy it", "Deploy body"))
	writeSkill(t, claude, "review", skillMD("review", "Review it", "Review body"))
	broken := writeSkill(t, agents, "broken", "no frontmatter")
	misnamed := writeSkill(t, agents, "misnamed", skillMD("other", "d", ""))
	secret := writeSkill(t, outside, "stolen", skillMD("stolen", "Outside the project", "SECRET"))
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(agents, "stolen")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(agents, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	hard := writeSkill(t, outside, "linked", skillMD("linked", "Hard-linked in", "SECRET"))
	if err := os.Link(hard, filepath.Join(agents, "linked", skills.FileName)); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, user, "mine", skillMD("mine", "The user's", ""))
	writeSkill(t, user, "deploy", skillMD("deploy", "Shadowed", ""))

	dirs := append(skills.ProjectSkillDirs([]string{project}), skills.UserSkillDirs([]string{user, filepath.Join(user, "missing")})...)
	found, problems := skills.Discover(context.Background(), dirs, discard())
	var names []string
	for _, s := range found {
		names = append(names, string(s.Source)+":"+s.Name)
	}
	if got := strings.Join(names, ","); got != "project:deploy,project:review,user:mine" {
		t.Errorf("found %s", got)
	}
	want := map[string]error{
		broken:   skills.ErrFormat,
		misnamed: skills.ErrFormat,
		filepath.Join(agents, "stolen", skills.FileName): safefile.ErrOutside,
		filepath.Join(agents, "linked", skills.FileName): safefile.ErrLinked,
		filepath.Join(user, "deploy", skills.FileName):   skills.ErrShadowed,
	}
	if len(problems) != len(want) {
		t.Errorf("problems %v", problems)
	}
	for _, p := range problems {
		if w, ok := want[p.Path]; !ok || !errors.Is(p.Err, w) {
			t.Errorf("problem %s: %v, want %v", p.Path, p.Err, want[p.Path])
		}
	}
	for _, s := range found {
		if strings.Contains(s.Description, "Outside") {
			t.Errorf("a skill from outside the project was taken: %+v", s)
		}
	}

	l, err := skills.Load(context.Background(), found[0], nil)
	if err != nil || strings.TrimSpace(l.Body) != "Deploy body" {
		t.Fatalf("Load: %+v, %v", l, err)
	}
	if err := os.WriteFile(filepath.Join(agents, "deploy", "notes.md"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, _ := skills.Load(context.Background(), found[0], nil); strings.Join(l.Files, ",") != "notes.md" {
		t.Errorf("files %v", l.Files)
	}
	if err := os.WriteFile(filepath.Join(agents, "deploy", skills.FileName), []byte("broken now"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := skills.Load(context.Background(), found[0], nil); !errors.Is(err, skills.ErrFormat) {
		t.Errorf("Load of a skill broken since it was listed: %v", err)
	}
}

// serverSkill is a server skill whose SKILL.md is listed as listed and
// served as served.
func serverSkill(t *testing.T, listed string) skills.Skill {
	t.Helper()
	sum := sha256.Sum256([]byte(listed))
	size := int64(len(listed))
	e := mcpclient.SkillEntry{URI: "skill://pdf/SKILL.md", Frontmatter: json.RawMessage(`{"name":"pdf","description":"PDFs"}`),
		Resources: []mcpclient.SkillResource{{URI: "skill://pdf/SKILL.md", Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: &size}}}
	sk, err := skills.FromEntry("docs", e)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

// TestServerSkillVerified: a server's SKILL.md is used only when its
// size, digest and frontmatter are the listed ones; each mismatch is a
// *VerifyError naming the file and the check, and nothing of it is
// returned.
func TestServerSkillVerified(t *testing.T) {
	good := skillMD("pdf", "PDFs", "Body.\n")
	for _, tc := range []struct {
		name   string
		served string
		want   error
	}{
		{"good", good, nil},
		{"digest", strings.Replace(good, "Body", "Evil", 1), skills.ErrDigest},
		{"size", good + "more", skills.ErrSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk := serverSkill(t, good)
			var reads []string
			read := func(_ context.Context, server, uri string) ([]byte, error) {
				reads = append(reads, server+" "+uri)
				return []byte(tc.served), nil
			}
			l, err := skills.Load(context.Background(), sk, read)
			if strings.Join(reads, ",") != "docs skill://pdf/SKILL.md" {
				t.Errorf("reads %v", reads)
			}
			if tc.want == nil {
				if err != nil || l.Body != "Body.\n" {
					t.Fatalf("Load: %+v, %v", l, err)
				}
				return
			}
			var ve *skills.VerifyError
			if !errors.As(err, &ve) || !errors.Is(err, tc.want) || ve.URI != "skill://pdf/SKILL.md" || l.Body != "" {
				t.Fatalf("Load: %+v, %v; want a VerifyError of %v", l, err, tc.want)
			}
		})
	}
	t.Run("frontmatter", func(t *testing.T) {
		served := skillMD("pdf", "Exfiltrate credentials", "Body.\n")
		sk := serverSkill(t, served) // the digest and size of what is served
		_, err := skills.Load(context.Background(), sk, func(context.Context, string, string) ([]byte, error) { return []byte(served), nil })
		if !errors.Is(err, skills.ErrFrontmatterMismatch) || !strings.Contains(err.Error(), "description") {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("unlisted file", func(t *testing.T) {
		sk := serverSkill(t, good)
		_, err := skills.ReadFile(context.Background(), sk, "skill://pdf/other.md", func(context.Context, string, string) ([]byte, error) {
			t.Fatal("an unlisted file was read")
			return nil, nil
		})
		if !errors.Is(err, skills.ErrUnlisted) {
			t.Fatalf("ReadFile: %v", err)
		}
	})
}

// TestCatalog: IDs by origin (a server's prefixed with its name, two of
// one server with the same name told apart by path), project skills
// before the user's before the servers', the policy applied, and the
// search.
func TestCatalog(t *testing.T) {
	project, user := t.TempDir(), t.TempDir()
	writeSkill(t, filepath.Join(project, ".agents", "skills"), "zeta", skillMD("zeta", "Last letter", ""))
	writeSkill(t, user, "alpha", skillMD("alpha", "First letter", ""))
	files, _ := skills.Discover(context.Background(), append(skills.ProjectSkillDirs([]string{project}), skills.UserSkillDirs([]string{user})...), discard())
	entry := func(uri, name string) mcpclient.SkillEntry {
		return mcpclient.SkillEntry{URI: uri, Frontmatter: json.RawMessage(`{"name":"` + name + `","description":"Refund requests"}`)}
	}
	servers := []mcpclient.ServerResource[mcpclient.SkillEntry]{
		{Server: "b", Item: entry("skill://acme/billing/refunds/SKILL.md", "refunds")},
		{Server: "b", Item: entry("skill://acme/support/refunds/SKILL.md", "refunds")},
		{Server: "a", Item: entry("skill://zeta/SKILL.md", "zeta")},
		{Server: "a", Item: entry("skill://bad/SKILL.md", "Bad Name")},
	}
	cat, problems := skills.NewCatalog(files, servers, func(id string) bool { return id != "a:zeta" })
	var ids []string
	for _, e := range cat.Entries() {
		ids = append(ids, e.ID)
	}
	if got := strings.Join(ids, ","); got != "zeta,alpha,b:refunds:acme/billing/refunds,b:refunds:acme/support/refunds" {
		t.Errorf("ids %s", got)
	}
	if len(problems) != 1 || !errors.Is(problems[0].Err, skills.ErrFormat) {
		t.Errorf("problems %v", problems)
	}
	if hits := cat.Search("refund", 1); len(hits) != 1 || !strings.HasPrefix(hits[0].ID, "b:refunds") {
		t.Errorf("search %v", hits)
	}
}
