package doccheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// A problem is a link that leads nowhere.
type problem struct {
	File   string // the Markdown file holding the link, slash-separated
	Line   int    // its line, from 1
	Target string // the link's target as written
	Reason string // what is wrong with it
}

func (p problem) String() string {
	return fmt.Sprintf("%s:%d: (%s): %s", p.File, p.Line, p.Target, p.Reason)
}

// slug is the anchor GitHub gives a heading whose text is heading: the
// text as rendered (link syntax, code-span backticks and '*' emphasis
// removed), lowercased, every character that is not a letter, a mark, a
// digit, a connector such as '_', a space or a hyphen dropped, and each
// space turned into a hyphen. Repeated headings are told apart by
// anchors, not here.
func slug(heading string) string {
	text := strings.ToLower(renderedText(heading))
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	// inlineLink is [text](target) with an optional "title"; its text may
	// hold code spans but no brackets.
	inlineLink = regexp.MustCompile(`\[([^\[\]]*)\]\(\s*([^)\s]*)(?:\s+"[^"]*")?\s*\)`)
	// markup is the emphasis and code-span characters a heading's text
	// loses when rendered (underscores are kept: GitHub keeps them in
	// code, and headings here use no underscore emphasis).
	markup = regexp.MustCompile("[*`]")
)

// renderedText is a heading's Markdown as the text it renders to, closely
// enough for slug: links become their text, and the backticks of code
// spans and the asterisks of emphasis go.
func renderedText(md string) string {
	md = inlineLink.ReplaceAllString(md, "$1")
	return markup.ReplaceAllString(md, "")
}

// heading returns the text of an ATX heading line ("## Title"), and
// whether the line is one.
func heading(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || !strings.HasPrefix(trimmed, "#") {
		return "", false
	}
	level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
	rest := trimmed[level:]
	if level > 6 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	// A closing sequence of #s (after a space) is not part of the text.
	if t := strings.TrimRight(rest, "#"); t != rest && (t == "" || strings.HasSuffix(t, " ")) {
		rest = strings.TrimSpace(t)
	}
	return rest, true
}

// fence reports whether line opens or closes a fenced code block, and
// with which marker.
func fence(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return "", false
	}
	for _, m := range []string{"```", "~~~"} {
		if strings.HasPrefix(trimmed, m) {
			return m, true
		}
	}
	return "", false
}

// proseLines calls f with each line of text that is outside fenced code
// blocks, numbered from 1.
func proseLines(text string, f func(n int, line string)) {
	open := ""
	for i, line := range strings.Split(text, "\n") {
		if m, ok := fence(line); ok {
			switch {
			case open == "":
				open = m
			case m == open:
				open = ""
			}
			continue
		}
		if open == "" {
			f(i+1, line)
		}
	}
}

// anchors returns the anchors the headings of a Markdown text produce: a
// heading's slug, and for the second and later headings with the same
// slug that slug followed by -1, -2, and so on.
func anchors(text string) map[string]bool {
	found := map[string]bool{}
	seen := map[string]int{}
	proseLines(text, func(_ int, line string) {
		h, ok := heading(line)
		if !ok {
			return
		}
		s := slug(h)
		a := s
		if n := seen[s]; n > 0 {
			a = fmt.Sprintf("%s-%d", s, n)
		}
		seen[s]++
		found[a] = true
	})
	return found
}

// codeSpan is an inline code span of one to three backticks; it may run
// over a line break, but not over a blank line.
var codeSpan = regexp.MustCompile("(`{1,3})(?:[^`\\n]|\\n[^`\\n])+?(`{1,3})")

// A link is a relative link found in a Markdown file.
type link struct {
	Line   int    // the line of its target
	Target string // as written: path, path#anchor or #anchor
}

// prose is text with the lines of fenced code blocks (fences included)
// emptied and code spans replaced by as many x's, so that what is left
// of Markdown syntax is outside code; line breaks stay where they were.
func prose(text string) string {
	kept := make([]string, strings.Count(text, "\n")+1)
	proseLines(text, func(n int, line string) { kept[n-1] = line })
	return codeSpan.ReplaceAllStringFunc(strings.Join(kept, "\n"), func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return 'x'
		}, s)
	})
}

// links returns the relative links of a Markdown text, in order: every
// [text](target) outside fenced code blocks and code spans (its text may
// run over lines) whose target names no scheme (http:, https:, mailto:
// and the like are left out).
func links(text string) []link {
	p := prose(text)
	var found []link
	for _, m := range inlineLink.FindAllStringSubmatchIndex(p, -1) {
		target := p[m[4]:m[5]]
		if target == "" || hasScheme(target) {
			continue
		}
		found = append(found, link{Line: 1 + strings.Count(p[:m[4]], "\n"), Target: target})
	}
	return found
}

// scheme is a URL scheme at the start of a link target.
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func hasScheme(target string) bool { return scheme.MatchString(target) }

// check checks the relative links of the Markdown files files, given as
// slash-separated paths in fsys: that each link's file exists in fsys
// (relative to the directory of the file holding the link, and not
// outside fsys), and that each anchor is one that a heading of the target
// produces, when the target is a Markdown file (an anchor into any other
// file is not checked). It returns a problem for each link that fails, in
// the order of files and lines; an error only when a file of files cannot
// be read.
func check(fsys fs.FS, files []string) ([]problem, error) {
	byFile := map[string]map[string]bool{}
	anchorsOf := func(name string) (map[string]bool, error) {
		if a, ok := byFile[name]; ok {
			return a, nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		a := anchors(string(b))
		byFile[name] = a
		return a, nil
	}
	var problems []problem
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(b)) {
			if reason := checkLink(fsys, file, l.Target, anchorsOf); reason != "" {
				problems = append(problems, problem{File: file, Line: l.Line, Target: l.Target, Reason: reason})
			}
		}
	}
	return problems, nil
}

// checkLink returns what is wrong with the link target in file, or "".
func checkLink(fsys fs.FS, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	p, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Sprintf("bad escape in path: %v", err)
	}
	name := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			return "an absolute path: links between pages are relative"
		}
		name = path.Join(path.Dir(file), p)
		if name == ".." || strings.HasPrefix(name, "../") {
			return "leads outside the repository"
		}
		info, err := fs.Stat(fsys, name)
		if err != nil {
			return fmt.Sprintf("no file %s", name)
		}
		if info.IsDir() {
			if anchor != "" {
				return fmt.Sprintf("%s is a directory, which has no anchors", name)
			}
			return ""
		}
	}
	if anchor == "" || !strings.HasSuffix(name, ".md") {
		return ""
	}
	a, err := anchorsOf(name)
	if err != nil {
		return fmt.Sprintf("cannot read %s: %v", name, err)
	}
	if !a[anchor] {
		return fmt.Sprintf("no heading of %s gives the anchor #%s", name, anchor)
	}
	return ""
}

// repoRoot is the repository, relative to this package's directory.
const repoRoot = "../../.."

// TestRepositoryLinks checks every relative link of README.md and of the
// pages under docs/.
func TestRepositoryLinks(t *testing.T) {
	fsys := os.DirFS(repoRoot)
	pages, err := fs.Glob(fsys, "docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	files := append([]string{"README.md"}, pages...)
	problems, err := check(fsys, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	n := 0
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			t.Fatal(err)
		}
		n += len(links(string(b)))
	}
	if n == 0 {
		t.Fatal("no relative link found: the checker is not reading the pages")
	}
	t.Logf("%d files, %d relative links, %d broken", len(files), n, len(problems))
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Quick start", "quick-start"},
		{"Security: what acpgate reads, and what it never does", "security-what-acpgate-reads-and-what-it-never-does"},
		{"MCP over ACP", "mcp-over-acp"},
		{"`session/fork`", "sessionfork"},
		{"Compaction (issue 20)", "compaction-issue-20"},
		{"Memory per result (issue 9: ≤ 3× its size)", "memory-per-result-issue-9--3-its-size"},
		{"Hostile input (issue 26): the earlier guarantees, measured again", "hostile-input-issue-26-the-earlier-guarantees-measured-again"},
		{"The `session_info_update` and **bold** words", "the-session_info_update-and-bold-words"},
		{"See [the docs](docs/README.md) here", "see-the-docs-here"},
		{"Zed — the editor", "zed--the-editor"},
		{"Émigré café 2", "émigré-café-2"},
	} {
		if got := slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	text := "# Title\n\n## Usage\n\ntext\n\n## Usage\n\n### Usage ##\n\n```sh\n# not a heading\n```\n\n    ## indented four: code\n#hashtag\n"
	got := anchors(text)
	want := map[string]bool{"title": true, "usage": true, "usage-1": true, "usage-2": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("anchors = %v, want %v", got, want)
	}
}

func TestLinks(t *testing.T) {
	text := strings.Join([]string{
		"See [a](a.md), [b](b.md#x \"title\") and [`code` text](#here).",                  // 1
		"Not [web](https://example.com), [mail](mailto:x@example.com) or `[code](c.md)`.", // 2
		"```md",              // 3
		"[fenced](f.md)",     // 4
		"```",                // 5
		"![image](i.png)",    // 6
		"A [link whose text", // 7
		"runs over a line](d.md) and `a code span",             // 8
		"over two lines [is not](e.md)` nor is ``[x](f.md)``.", // 9
	}, "\n")
	got := links(text)
	want := []link{{1, "a.md"}, {1, "b.md#x"}, {1, "#here"}, {6, "i.png"}, {8, "d.md"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links = %v, want %v", got, want)
	}
}

// TestCheckFindsBrokenLinks runs the checker on a small in-memory
// repository with good and bad links: it must name each bad one by file
// and line, and only those.
func TestCheckFindsBrokenLinks(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte(strings.Join([]string{
			"# Project",                              // 1
			"",                                       // 2
			"Read [the guide](docs/guide.md) first,", // 3
			"then [setup](docs/guide.md#set-it-up) and [again](docs/guide.md#set-it-up-1).",  // 4
			"A [missing page](docs/gone.md) and [a bad anchor](docs/guide.md#nowhere).",      // 5
			"[Up here](#project), [not here](#projects), [code](internal/), [off](../x.md).", // 6
			"```",                        // 7
			"[ignored](docs/nothing.md)", // 8
			"```",                        // 9
		}, "\n"))},
		"docs/guide.md": {Data: []byte(strings.Join([]string{
			"# Guide",      // 1
			"## Set it up", // 2
			"## Set it up", // 3
			"Back to [the README](../README.md#project) or [its nowhere](../README.md#nowhere).", // 4
			"Source: [main.go](../internal/main.go#L3).",                                         // 5
		}, "\n"))},
		"internal/main.go": {Data: []byte("package main\n")},
	}
	got, err := check(fsys, []string{"README.md", "docs/guide.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:5: (docs/gone.md): no file docs/gone.md",
		"README.md:5: (docs/guide.md#nowhere): no heading of docs/guide.md gives the anchor #nowhere",
		"README.md:6: (#projects): no heading of README.md gives the anchor #projects",
		"README.md:6: (../x.md): leads outside the repository",
		"docs/guide.md:4: (../README.md#nowhere): no heading of README.md gives the anchor #nowhere",
	}
	var gotS []string
	for _, p := range got {
		gotS = append(gotS, p.String())
	}
	if !reflect.DeepEqual(gotS, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(gotS, "\n"), strings.Join(want, "\n"))
	}
	if _, err := check(fsys, []string{"docs/absent.md"}); err == nil {
		t.Error("checking a file that does not exist: no error")
	}
}
