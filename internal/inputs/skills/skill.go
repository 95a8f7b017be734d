package skills

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/mcpclient"
)

// Source is where a skill comes from.
type Source string

// The sources, in the order a catalog lists them.
const (
	SourceProject Source = "project"
	SourceUser    Source = "user"
	SourceServer  Source = "server"
)

// Skill is one skill as listed: its name and description (checked by
// the format's rules), where it comes from, and what loading it reads. A
// value; safe for concurrent use.
type Skill struct {
	Name        string
	Description string
	Source      Source
	// Path is a file skill's SKILL.md (absolute).
	Path string
	// Server is a server skill's server (the session's name for it), and
	// Entry its listing's entry.
	Server string
	Entry  mcpclient.SkillEntry
	// Frontmatter is every field of the skill's frontmatter.
	Frontmatter Frontmatter

	roots   safefile.Roots // a file skill's: the folders it may be read from
	bodyLen int            // a file skill's body's length when listed
}

// Origin says where the skill comes from, for a person: its SKILL.md's
// path, or the server's name and the skill's URI.
func (sk Skill) Origin() string {
	if sk.Source == SourceServer {
		return fmt.Sprintf("MCP server %s, %s", sk.Server, sk.Entry.URI)
	}
	return sk.Path
}

// Loaded is a skill's instructions, read when it is loaded: its SKILL.md's
// body and its other files (paths relative to a file skill's folder, or a
// server skill's listed URIs).
type Loaded struct {
	Skill Skill
	Body  string
	Files []string
}

// ReadFunc reads a server's resource: the bytes of its contents at uri
// (text as UTF-8, a blob decoded).
type ReadFunc func(ctx context.Context, server, uri string) ([]byte, error)

// Load reads sk's instructions: a file skill's SKILL.md again, by the
// rules Discover reads it by (it must still parse and have the listed
// name), and the list of its files; a server skill's SKILL.md through
// read, verified against its entry (Verify) before anything of it is
// used. read is used for server skills only.
func Load(ctx context.Context, sk Skill, read ReadFunc) (Loaded, error) {
	if sk.Source == SourceServer {
		return loadServer(ctx, sk, read)
	}
	fm, body, err := readSkillFile(sk.roots, sk.Path)
	if err != nil {
		return Loaded{}, err
	}
	if fm.Name() != sk.Name {
		return Loaded{}, fmt.Errorf("%s: %w: field name is now %q, listed as %q", sk.Path, ErrFormat, fm.Name(), sk.Name)
	}
	sk.Frontmatter, sk.Description = fm, fm.Description()
	return Loaded{Skill: sk, Body: body, Files: sk.files(ctx)}, nil
}

// ErrNotListed is wrapped by the error for a file of a file skill that
// is not among the files loading it lists.
var ErrNotListed = errors.New("not a file of the skill")

// ReadLocal reads the file rel (a path Load listed: relative to the
// skill's folder, slash-separated) of the file skill sk, by the rules
// Discover reads a SKILL.md by (inside its folders, a regular file with
// a single hard link, not blocking), at most MaxSkillBytes.
func ReadLocal(ctx context.Context, sk Skill, rel string) ([]byte, error) {
	if sk.Source == SourceServer || !slices.Contains(sk.files(ctx), rel) {
		return nil, fmt.Errorf("%w: %q", ErrNotListed, rel)
	}
	path := filepath.Join(filepath.Dir(sk.Path), filepath.FromSlash(rel))
	f, _, err := sk.roots.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := safefile.SingleLink(f, path); err != nil {
		return nil, err
	}
	return safefile.ReadOpen(f, path, MaxSkillBytes, true)
}
