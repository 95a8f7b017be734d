package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/internal/base/safefile"
)

// This file is skills from files: where they are looked for, and reading
// them with the rules acpgate reads a project's AGENTS.md by.

// FileName is the name of a skill's instructions file.
const FileName = "SKILL.md"

// ProjectDirs are the folders of a project, relative to its root, whose
// subfolders are skills: .agents/skills, and .claude/skills for
// compatibility.
var ProjectDirs = []string{filepath.Join(".agents", "skills"), filepath.Join(".claude", "skills")}

// Bounds on a folder of skills.
const (
	// MaxSkillsPerDir bounds the entries of one folder of skills looked at.
	MaxSkillsPerDir = 256
	// MaxFiles bounds the supporting files a loaded skill lists.
	MaxFiles = 200
	// MaxFileDepth bounds how deep below a skill's folder its files are
	// listed.
	MaxFileDepth = 4
)

// Dir is a folder whose subfolders are skills, and the folders its files
// may be read from (a project's root; a user's folder of skills itself).
type Dir struct {
	Path   string // absolute
	Source Source
	Roots  []string
}

// ProjectSkillDirs are the folders of skills of each of projects (as
// gateway/sysprompt.ProjectRoots finds them), in order: each one's
// ProjectDirs, inside that project.
func ProjectSkillDirs(projects []string) []Dir {
	var out []Dir
	for _, p := range projects {
		for _, d := range ProjectDirs {
			out = append(out, Dir{Path: filepath.Join(p, d), Source: SourceProject, Roots: []string{p}})
		}
	}
	return out
}

// UserSkillDirs are the user's folders of skills (acpgate's configuration
// folder's skills/, then those the configuration names), each its own
// root.
func UserSkillDirs(dirs []string) []Dir {
	out := make([]Dir, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, Dir{Path: d, Source: SourceUser, Roots: []string{d}})
	}
	return out
}

// Problem is a skill that was not taken, and why: Err wraps ErrFormat (a
// malformed SKILL.md), safefile.ErrOutside (it leads out of the folders
// it may be read from), safefile.ErrNotRegular, safefile.ErrLinked,
// safefile.ErrTooLarge, ErrShadowed, or is the error reading it gave.
type Problem struct {
	Path string
	Err  error
}

// ErrShadowed is wrapped by the Problem of a skill whose name an earlier
// one (a project's before the user's) already has.
var ErrShadowed = errors.New("another skill has this name")

// Discover reads the skills of dirs, in order: each subfolder holding a
// SKILL.md whose frontmatter checks (Parse) and whose name is the
// folder's. Nothing it reads can block or lead outside its Dir's roots
// (internal/base/safefile: symbolic links resolved, regular files with a
// single hard link, at most MaxSkillBytes); a skill that breaks a rule is
// a Problem, never an error. A missing folder is none. A name seen before
// is a Problem (ErrShadowed). Discover stops, with what it read, when ctx
// is done.
func Discover(ctx context.Context, dirs []Dir, logger *slog.Logger) ([]Skill, []Problem) {
	var out []Skill
	var problems []Problem
	seen := map[string]string{}
	for _, d := range dirs {
		roots := safefile.ResolveRoots(d.Roots)
		entries, err := roots.ReadDir(d.Path, MaxSkillsPerDir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			problems = append(problems, Problem{Path: d.Path, Err: err})
			continue
		}
		for _, e := range entries {
			if ctx.Err() != nil {
				return out, problems
			}
			if strings.HasPrefix(e.Name(), ".") || !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			path := filepath.Join(d.Path, e.Name(), FileName)
			sk, err := readFileSkill(roots, path, e.Name(), d.Source)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err == nil {
				if first, dup := seen[sk.Name]; dup {
					err = fmt.Errorf("%w: %s", ErrShadowed, first)
				}
			}
			if err != nil {
				logger.Warn("skill skipped", "path", path, "err", err)
				problems = append(problems, Problem{Path: path, Err: err})
				continue
			}
			seen[sk.Name] = path
			out = append(out, sk)
		}
	}
	return out, problems
}

// readFileSkill reads the skill whose SKILL.md is at path, in a folder
// called dirName, inside roots.
func readFileSkill(roots safefile.Roots, path, dirName string, src Source) (Skill, error) {
	fm, body, err := readSkillFile(roots, path)
	if err != nil {
		return Skill{}, err
	}
	if fm.Name() != dirName {
		return Skill{}, fmt.Errorf("%w: field name %q is not the folder's name %q", ErrFormat, fm.Name(), oneLine(dirName, 80))
	}
	return Skill{Name: fm.Name(), Description: fm.Description(), Source: src, Path: path, Frontmatter: fm, roots: roots, bodyLen: len(body)}, nil
}

// readSkillFile reads and parses the SKILL.md at path inside roots.
func readSkillFile(roots safefile.Roots, path string) (Frontmatter, string, error) {
	f, _, err := roots.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if err := safefile.SingleLink(f, path); err != nil {
		return nil, "", err
	}
	data, err := safefile.ReadOpen(f, path, MaxSkillBytes, true)
	if err != nil {
		return nil, "", err
	}
	return Parse(data)
}

// files lists the supporting files of the file skill sk: the regular
// files below its folder (symbolic links and hidden names left out), at
// most MaxFiles, at most MaxFileDepth folders down, as paths relative to
// the folder, sorted.
func (sk Skill) files(ctx context.Context) []string {
	dir := filepath.Dir(sk.Path)
	var out []string
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		entries, err := sk.roots.ReadDir(filepath.Join(dir, rel), MaxSkillsPerDir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if len(out) >= MaxFiles || ctx.Err() != nil {
				return
			}
			name := filepath.Join(rel, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), "."), name == FileName:
			case e.IsDir():
				if depth < MaxFileDepth {
					walk(name, depth+1)
				}
			case e.Type().IsRegular():
				out = append(out, filepath.ToSlash(name))
			}
		}
	}
	walk("", 1)
	slices.Sort(out)
	return out
}
