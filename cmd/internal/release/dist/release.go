// Package release makes acpgate's release: for every platform of the ACP
// registry an archive holding the binary, LICENSE and README.md;
// SHA256SUMS; and the registry entry (package registry) pointing at the
// archives. Two releases of the same sources, version and time are byte
// for byte the same (see WriteTarGz and WriteZip); make release and make
// release-check run it (cmd/internal/release).
package dist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/acpgate/acpgate/cmd/internal/release/registry"
)

// ErrVersion is returned for a version that is not x.y.z (decimal numbers
// without leading zeros).
var ErrVersion = errors.New("the version must be x.y.z, e.g. 1.2.3")

// ErrURLTemplate is returned for an archive URL template that is not an
// absolute http(s) URL with {file} in its path.
var ErrURLTemplate = errors.New("bad archive URL template")

// ErrOutput is returned when the output directory already holds files.
var ErrOutput = errors.New("the output directory is not empty")

var versionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// CheckVersion returns nil if v is x.y.z, else an error wrapping
// ErrVersion that names v.
func CheckVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("%w, not %q", ErrVersion, v)
	}
	return nil
}

// BuildFunc builds the acpgate binary for p into the file path. See
// GoBuild for the real one.
type BuildFunc func(ctx context.Context, p Platform, path string) error

// Options say what to release; every field is required but Logger.
type Options struct {
	Version string    // x.y.z
	Time    time.Time // the time of every archive entry (e.g. the commit's): not before 1980
	// URLTemplate is the URL of an archive once published: {version} is
	// replaced by the version and {file} by the archive's name, e.g.
	// https://github.com/acpgate/acpgate/releases/download/v{version}/{file}.
	URLTemplate string
	Out         string // the output directory, created; it must hold nothing yet
	// Docs are the files archived beside the binary, each under its path
	// relative to DocsDir (LICENSE, README.md, docs/configuration.md…),
	// so that the README's relative links work in the unpacked archive.
	Docs    []string
	DocsDir string // the directory Docs are relative to
	Icon    string // the registry icon's file
	// Entry is the registry entry's description: its ID, Name,
	// Description, Repository, Authors and License; Build fills in the
	// version and the archives.
	Entry  registry.Entry
	Build  BuildFunc
	Logger *slog.Logger // progress; nil: none
}

// Artifact is one archive of a release.
type Artifact struct {
	Platform Platform
	File     string // the archive's name in Options.Out
	SHA256   string // hex
}

// Build makes the release described by opts: it builds each platform's
// binary (in a temporary directory), writes its archive into opts.Out,
// then opts.Out/SHA256SUMS (sha256sum's format) and the registry entry
// opts.Out/registry/<id>/ (agent.json, icon.svg), which it checks with
// registry.Check and registry.CheckArchives. It returns the archives in
// the order of Platforms.
func Build(ctx context.Context, opts *Options) ([]Artifact, error) {
	o := *opts
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := CheckVersion(o.Version); err != nil {
		return nil, err
	}
	if _, err := ArchiveURL(o.URLTemplate, o.Version, "f"); err != nil {
		return nil, err
	}
	if o.Time.Before(minTime) {
		return nil, fmt.Errorf("%w: %s is before 1980", ErrTime, o.Time.UTC().Format(time.RFC3339))
	}
	icon, err := os.ReadFile(o.Icon)
	if err != nil {
		return nil, fmt.Errorf("icon: %w", err)
	}
	docs, err := readDocs(o.DocsDir, o.Docs)
	if err != nil {
		return nil, err
	}
	if err := makeEmptyDir(o.Out); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "acpgate-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var arts []Artifact
	for _, p := range Platforms() {
		a, err := o.platform(ctx, p, tmp, docs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		o.Logger.Info("archive", "file", a.File, "sha256", a.SHA256)
		arts = append(arts, a)
	}
	if err := os.WriteFile(filepath.Join(o.Out, "SHA256SUMS"), sums(arts), 0o644); err != nil {
		return nil, err
	}
	if err := o.writeEntry(arts, icon); err != nil {
		return nil, err
	}
	return arts, nil
}

// platform builds p's binary into tmp and archives it with docs.
func (o *Options) platform(ctx context.Context, p Platform, tmp string, docs []File) (Artifact, error) {
	a := Artifact{Platform: p, File: p.Archive(o.Version)}
	bin := filepath.Join(tmp, p.Name, p.Binary())
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return a, err
	}
	o.Logger.Info("build", "platform", p.Name)
	if err := o.Build(ctx, p, bin); err != nil {
		return a, err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return a, err
	}
	files := append([]File{{Name: p.Binary(), Mode: 0o755, Data: data}}, docs...)
	var buf bytes.Buffer
	write := WriteTarGz
	if strings.HasSuffix(a.File, ".zip") {
		write = WriteZip
	}
	if err := write(&buf, files, o.Time); err != nil {
		return a, err
	}
	sum := sha256.Sum256(buf.Bytes())
	a.SHA256 = hex.EncodeToString(sum[:])
	return a, os.WriteFile(filepath.Join(o.Out, a.File), buf.Bytes(), 0o644)
}

// writeEntry writes and checks the registry entry of arts.
func (o *Options) writeEntry(arts []Artifact, icon []byte) error {
	e := o.Entry
	e.Version = o.Version
	e.Distribution = registry.Distribution{Binary: make(map[string]registry.Target, len(arts))}
	for _, a := range arts {
		u, err := ArchiveURL(o.URLTemplate, o.Version, a.File)
		if err != nil {
			return err
		}
		e.Distribution.Binary[a.Platform.Name] = registry.Target{Archive: u, SHA256: a.SHA256, Cmd: "./" + a.Platform.Binary()}
	}
	dir, err := registry.Write(filepath.Join(o.Out, "registry"), e, icon)
	if err != nil {
		return err
	}
	if err := errors.Join(registry.Check(dir), registry.CheckArchives(dir, o.Out)); err != nil {
		return fmt.Errorf("the registry entry: %w", err)
	}
	o.Logger.Info("registry entry", "dir", dir)
	return nil
}

// ArchiveURL fills template with version and file (see
// Options.URLTemplate). The result must be an absolute http or https URL
// and {file} must be in the template's path; else the error wraps
// ErrURLTemplate.
func ArchiveURL(template, version, file string) (string, error) {
	u, err := url.Parse(template)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrURLTemplate, err)
	case (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return "", fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrURLTemplate, template)
	case !strings.Contains(u.Path, "{file}"):
		return "", fmt.Errorf("%w: %q has no {file} in its path", ErrURLTemplate, template)
	}
	return strings.NewReplacer("{version}", version, "{file}", file).Replace(template), nil
}

// readDocs reads the files archived beside the binary: paths, relative
// to dir, are their names in the archive.
func readDocs(dir string, paths []string) ([]File, error) {
	var files []File
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: filepath.ToSlash(p), Mode: 0o644, Data: data})
	}
	return files, nil
}

// makeEmptyDir creates dir, or accepts it if it is empty.
func makeEmptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if names, err := f.Readdirnames(1); len(names) > 0 {
		return fmt.Errorf("%w: %s", ErrOutput, dir)
	} else if err != nil && err != io.EOF {
		return err
	}
	return nil
}

// sums is SHA256SUMS: a line "<sha256>  <file>" per archive, sorted by
// file, as sha256sum writes and checks it.
func sums(arts []Artifact) []byte {
	lines := make([]string, 0, len(arts))
	for _, a := range arts {
		lines = append(lines, a.SHA256+"  "+a.File+"\n")
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[sha256.Size*2:], b[sha256.Size*2:]) })
	return []byte(strings.Join(lines, ""))
}
