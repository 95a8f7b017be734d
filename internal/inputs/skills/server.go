package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/acpgate/acpgate/mcpclient"
)

// This file is skills from MCP servers (the skills extension, SEP-2640):
// an entry of a server's skills/list made a Skill, and the checks of what
// loading it reads against the entry.

// Errors of a server skill's file that does not match its entry. Each is
// wrapped in a *VerifyError naming the file.
var (
	// ErrDigest: the file's SHA-256 is not the listed digest.
	ErrDigest = errors.New("digest mismatch")
	// ErrSize: the file's length is not the listed size.
	ErrSize = errors.New("size mismatch")
	// ErrFrontmatterMismatch: the SKILL.md's frontmatter is not the
	// listed frontmatter, field by field.
	ErrFrontmatterMismatch = errors.New("frontmatter mismatch")
	// ErrUnlisted: the file is not among the entry's resources, or the
	// entry lists none (a skill generated at read time cannot be verified,
	// and acpgate declines it).
	ErrUnlisted = errors.New("not a listed file of the skill")
)

// VerifyError is a server skill's file that failed a check: the file's
// URI, the server, and the check (wrapped: ErrDigest, ErrSize,
// ErrFrontmatterMismatch, ErrUnlisted, ErrFormat).
type VerifyError struct {
	Server, URI string
	Err         error
	Detail      string
}

// Error names the server, the file and the check.
func (e *VerifyError) Error() string {
	msg := fmt.Sprintf("skill file %s of MCP server %q failed verification: %v", e.URI, e.Server, e.Err)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg + "; nothing of it was used"
}

// Unwrap is the check that failed.
func (e *VerifyError) Unwrap() error { return e.Err }

// FromEntry makes a Skill of entry, listed by server: its frontmatter
// must check (Check), and its URI end in the skill's name and /SKILL.md.
func FromEntry(server string, entry mcpclient.SkillEntry) (Skill, error) {
	var fm Frontmatter
	if err := json.Unmarshal(entry.Frontmatter, &fm); err != nil || fm == nil {
		return Skill{}, fmt.Errorf("%w: skill %s: frontmatter is not an object", ErrFormat, entry.URI)
	}
	if err := Check(fm); err != nil {
		return Skill{}, fmt.Errorf("skill %s: %w", oneLine(entry.URI, 200), err)
	}
	if !strings.HasSuffix(entry.URI, "/"+fm.Name()+"/"+FileName) {
		return Skill{}, fmt.Errorf("%w: skill %s: its URI does not end in /%s/%s", ErrFormat, oneLine(entry.URI, 200), fm.Name(), FileName)
	}
	return Skill{Name: fm.Name(), Description: fm.Description(), Source: SourceServer, Server: server, Entry: entry, Frontmatter: fm}, nil
}

// Verify checks data, read from a server skill's file at uri, against
// sk's entry: the file must be listed, of the listed size (when given)
// and digest, and a SKILL.md's frontmatter must be the listed one field
// by field. The error is a *VerifyError.
func Verify(sk Skill, uri string, data []byte) error {
	fail := func(err error, detail string) error {
		return &VerifyError{Server: sk.Server, URI: uri, Err: err, Detail: detail}
	}
	var res *mcpclient.SkillResource
	for i := range sk.Entry.Resources {
		if sk.Entry.Resources[i].URI == uri {
			res = &sk.Entry.Resources[i]
			break
		}
	}
	if res == nil {
		return fail(ErrUnlisted, "")
	}
	if res.Size != nil && int64(len(data)) != *res.Size {
		return fail(ErrSize, fmt.Sprintf("%d bytes read, %d listed", len(data), *res.Size))
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); !strings.EqualFold(got, res.Digest) {
		return fail(ErrDigest, fmt.Sprintf("read %s, listed %s", got, oneLine(res.Digest, 80)))
	}
	if uri != sk.Entry.URI {
		return nil
	}
	fm, _, err := Split(data)
	if err != nil {
		return fail(err, "")
	}
	var listed Frontmatter
	_ = json.Unmarshal(sk.Entry.Frontmatter, &listed)
	for _, k := range fieldUnion(fm, listed) {
		if !reflect.DeepEqual(fm[k], listed[k]) {
			return fail(ErrFrontmatterMismatch, "field "+oneLine(k, 80)+" differs")
		}
	}
	return nil
}

// fieldUnion is the fields of a and b, sorted.
func fieldUnion(a, b Frontmatter) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []Frontmatter{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// loadServer reads a server skill's SKILL.md through read and verifies
// it; only then is its body used. Its files are the entry's other URIs
// (none of them read).
func loadServer(ctx context.Context, sk Skill, read ReadFunc) (Loaded, error) {
	uri := sk.Entry.URI
	if len(sk.Entry.Resources) == 0 {
		return Loaded{}, &VerifyError{Server: sk.Server, URI: uri, Err: ErrUnlisted, Detail: "the server lists no files with digests for this skill"}
	}
	for _, r := range sk.Entry.Resources {
		if r.URI == uri && r.Size != nil && *r.Size > MaxSkillBytes {
			return Loaded{}, &VerifyError{Server: sk.Server, URI: uri, Err: ErrSize, Detail: fmt.Sprintf("listed as %d bytes, acpgate reads at most %d", *r.Size, MaxSkillBytes)}
		}
	}
	data, err := read(ctx, sk.Server, uri)
	if err != nil {
		return Loaded{}, fmt.Errorf("reading skill %s of MCP server %q: %w", uri, sk.Server, err)
	}
	if len(data) > MaxSkillBytes {
		return Loaded{}, &VerifyError{Server: sk.Server, URI: uri, Err: ErrSize, Detail: fmt.Sprintf("%d bytes, acpgate reads at most %d", len(data), MaxSkillBytes)}
	}
	if err := Verify(sk, uri, data); err != nil {
		return Loaded{}, err
	}
	_, body, err := Split(data)
	if err != nil {
		return Loaded{}, err
	}
	var files []string
	for _, r := range sk.Entry.Resources {
		if r.URI != uri {
			files = append(files, r.URI)
		}
	}
	return Loaded{Skill: sk, Body: body, Files: files}, nil
}

// ReadFile reads the file at uri of the server skill sk through read,
// verified against its entry (Verify): a supporting file the model asks
// for after loading the skill.
func ReadFile(ctx context.Context, sk Skill, uri string, read ReadFunc) ([]byte, error) {
	if err := Verify(sk, uri, nil); errors.Is(err, ErrUnlisted) {
		return nil, err
	}
	data, err := read(ctx, sk.Server, uri)
	if err != nil {
		return nil, fmt.Errorf("reading %s of MCP server %q: %w", uri, sk.Server, err)
	}
	if err := Verify(sk, uri, data); err != nil {
		return nil, err
	}
	return data, nil
}
