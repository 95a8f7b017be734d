package dist_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/cmd/internal/release/dist"
	"github.com/acpgate/acpgate/cmd/internal/release/registry"
)

// fakeBuild writes a tiny stand-in binary naming its platform.
func fakeBuild(_ context.Context, p dist.Platform, path string) error {
	return os.WriteFile(path, []byte("fake acpgate for "+p.Name+"\n"), 0o755)
}

// testOptions are a release of version 1.2.3 into out with fake binaries
// and the repository's own LICENSE, README.md, a docs page and icon.
func testOptions(out string) *dist.Options {
	return &dist.Options{
		Version:     "1.2.3",
		Time:        mtime,
		URLTemplate: "https://github.com/acpgate/acpgate/releases/download/v{version}/{file}",
		Out:         out,
		Docs:        []string{"LICENSE", "README.md", "docs/configuration.md"},
		DocsDir:     "../../../..",
		Icon:        "../../../../docs/icon.svg",
		Entry:       registry.Entry{ID: "acpgate", Name: "acpgate", Description: "test", License: "Apache-2.0"},
		Build:       fakeBuild,
	}
}

// TestReleaseIsReproducible: the whole release, on fake binaries, twice
// into two directories: every file is the same, byte for byte.
func TestReleaseIsReproducible(t *testing.T) {
	t.Parallel()
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, out := range []string{a, b} {
		if _, err := dist.Build(t.Context(), testOptions(out)); err != nil {
			t.Fatal(err)
		}
	}
	filesA, filesB := tree(t, a), tree(t, b)
	if len(filesA) != len(filesB) {
		t.Fatalf("%d files and %d files", len(filesA), len(filesB))
	}
	for name, data := range filesA {
		if !bytes.Equal(data, filesB[name]) {
			t.Errorf("%s differs", name)
		}
	}
	want := []string{"SHA256SUMS", "registry/acpgate/agent.json", "registry/acpgate/icon.svg"}
	for _, p := range dist.Platforms() {
		want = append(want, p.Archive("1.2.3"))
	}
	if got := slices.Sorted(maps.Keys(filesA)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("files %q, want %q", got, want)
	}
}

// TestReleaseArchives: each archive holds the platform's binary (0755),
// LICENSE and README.md (0644); SHA256SUMS lists each archive's sum in
// sha256sum's format, sorted; Build returns the same sums.
func TestReleaseArchives(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	arts, err := dist.Build(t.Context(), testOptions(out))
	if err != nil {
		t.Fatal(err)
	}
	license, readme, conf := readFile(t, "../../../../LICENSE"), readFile(t, "../../../../README.md"), readFile(t, "../../../../docs/configuration.md")
	var lines []string
	for i, p := range dist.Platforms() {
		a := arts[i]
		data := readFile(t, filepath.Join(out, a.File))
		if sum := sha256.Sum256(data); a.Platform != p || a.File != p.Archive("1.2.3") || a.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("artifact %d: %+v", i, a)
		}
		lines = append(lines, a.SHA256+"  "+a.File+"\n")
		want := []dist.File{
			{Name: p.Binary(), Mode: 0o755, Data: []byte("fake acpgate for " + p.Name + "\n")},
			{Name: "LICENSE", Mode: 0o644, Data: license},
			{Name: "README.md", Mode: 0o644, Data: readme},
			{Name: "docs/configuration.md", Mode: 0o644, Data: conf},
		}
		if got := unpack(t, a.File, data); !slices.EqualFunc(got, want, func(a, b dist.File) bool {
			return a.Name == b.Name && a.Mode == b.Mode && bytes.Equal(a.Data, b.Data)
		}) {
			t.Errorf("%s holds %v", a.File, names(got))
		}
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[64:], b[64:]) }) // by file
	if got := string(readFile(t, filepath.Join(out, "SHA256SUMS"))); got != strings.Join(lines, "") {
		t.Errorf("SHA256SUMS:\n%s\nwant\n%s", got, strings.Join(lines, ""))
	}
}

// TestReleaseRefuses: bad options are refused before anything is built,
// each with its error; a failed build fails the release.
func TestReleaseRefuses(t *testing.T) {
	t.Parallel()
	errBuild := errors.New("build failed")
	for _, tc := range []struct {
		name   string
		change func(o *dist.Options)
		want   error
	}{
		{"no version", func(o *dist.Options) { o.Version = "" }, dist.ErrVersion},
		{"two parts", func(o *dist.Options) { o.Version = "1.2" }, dist.ErrVersion},
		{"v prefix", func(o *dist.Options) { o.Version = "v1.2.3" }, dist.ErrVersion},
		{"leading zero", func(o *dist.Options) { o.Version = "1.02.3" }, dist.ErrVersion},
		{"pre-release", func(o *dist.Options) { o.Version = "1.2.3-rc1" }, dist.ErrVersion},
		{"no {file}", func(o *dist.Options) { o.URLTemplate = "https://example.com/v{version}/acpgate.zip" }, dist.ErrURLTemplate},
		{"relative URL", func(o *dist.Options) { o.URLTemplate = "/releases/{file}" }, dist.ErrURLTemplate},
		{"ftp URL", func(o *dist.Options) { o.URLTemplate = "ftp://example.com/{file}" }, dist.ErrURLTemplate},
		{"1970", func(o *dist.Options) { o.Time = mtime.AddDate(-60, 0, 0) }, dist.ErrTime},
		{"output not empty", func(o *dist.Options) {
			if err := os.WriteFile(filepath.Join(o.Out, "old"), nil, 0o644); err != nil {
				panic(err)
			}
		}, dist.ErrOutput},
		{"build fails", func(o *dist.Options) {
			o.Build = func(context.Context, dist.Platform, string) error { return errBuild }
		}, errBuild},
	} {
		o := testOptions(t.TempDir())
		built := false
		o.Build = func(ctx context.Context, p dist.Platform, path string) error {
			built = true
			return fakeBuild(ctx, p, path)
		}
		tc.change(o)
		_, err := dist.Build(t.Context(), o)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if built {
			t.Errorf("%s: built a binary", tc.name)
		}
	}
}

// TestArchiveURL: the template's placeholders are replaced.
func TestArchiveURL(t *testing.T) {
	t.Parallel()
	got, err := dist.ArchiveURL("https://example.com/acpgate/v{version}/{file}", "1.2.3", "acpgate-1.2.3-linux-x86_64.tar.gz")
	if want := "https://example.com/acpgate/v1.2.3/acpgate-1.2.3-linux-x86_64.tar.gz"; err != nil || got != want {
		t.Errorf("%q, %v; want %q", got, err, want)
	}
}

// tree reads every file under dir, by slash-separated relative name.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = readFile(t, path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// unpack reads the entries of a .tar.gz or .zip archive.
func unpack(t *testing.T, name string, data []byte) []dist.File {
	t.Helper()
	var files []dist.File
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, dist.File{Name: f.Name, Mode: f.Mode(), Data: body})
		}
		return files
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, dist.File{Name: h.Name, Mode: fs.FileMode(h.Mode), Data: body})
	}
}

func names(files []dist.File) string {
	var s []string
	for _, f := range files {
		s = append(s, fmt.Sprintf("%s (%v)", f.Name, f.Mode))
	}
	return strings.Join(s, ", ")
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
