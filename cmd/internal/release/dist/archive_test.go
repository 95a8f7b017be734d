package dist_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpgate/acpgate/cmd/internal/release/dist"
)

var mtime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// testFiles is a fresh copy of an archive's files each call, so that two
// writes share no memory.
func testFiles() []dist.File {
	return []dist.File{
		{Name: "acpgate", Mode: 0o755, Data: bytes.Repeat([]byte("\x7fELF binary "), 1000)},
		{Name: "LICENSE", Mode: 0o644, Data: []byte("Apache License\n")},
		{Name: "README.md", Mode: 0o644, Data: []byte("# acpgate\n")},
	}
}

type writer func(io.Writer, []dist.File, time.Time) error

func write(t *testing.T, w writer, files []dist.File, at time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := w(&buf, files, at); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArchivesAreReproducible: the same files and time give the same
// bytes; another time gives other bytes (the time is in the headers).
func TestArchivesAreReproducible(t *testing.T) {
	t.Parallel()
	for name, w := range map[string]writer{"tar.gz": dist.WriteTarGz, "zip": dist.WriteZip} {
		a, b := write(t, w, testFiles(), mtime), write(t, w, testFiles(), mtime.In(time.FixedZone("X", 3600)))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two writes differ", name)
		}
		if c := write(t, w, testFiles(), mtime.Add(time.Hour)); bytes.Equal(a, c) {
			t.Errorf("%s: another time gives the same bytes", name)
		}
	}
}

// header is what TestTarGzHeaders compares of a tar.Header.
type header struct {
	typeflag     byte
	name         string
	mode         int64
	uid, gid     int
	uname, gname string
	mtime        int64
	format       tar.Format
	size         int64
}

// TestTarGzHeaders: a gzip header without name or time; USTAR entries in
// the order given, with the time, modes, uid/gid 0 and no owner names.
func TestTarGzHeaders(t *testing.T) {
	t.Parallel()
	data := write(t, dist.WriteTarGz, testFiles(), mtime)
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || zr.Comment != "" || !zr.ModTime.IsZero() || zr.Extra != nil {
		t.Errorf("gzip header: %+v, want no name, comment, time or extra", zr.Header)
	}
	tr := tar.NewReader(zr)
	for _, want := range testFiles() {
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		got := header{h.Typeflag, h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), h.Format, h.Size}
		exp := header{tar.TypeReg, want.Name, int64(want.Mode), 0, 0, "", "", mtime.Unix(), tar.FormatUSTAR, int64(len(want.Data))}
		if got != exp {
			t.Errorf("header\n got %+v\nwant %+v", got, exp)
		}
		if body, _ := io.ReadAll(tr); !bytes.Equal(body, want.Data) {
			t.Errorf("%s: content differs", h.Name)
		}
	}
	if h, err := tr.Next(); err != io.EOF {
		t.Errorf("after the files: %v, %v", h, err)
	}
}

// TestZipHeaders: entries in the order given, deflated, with the time
// and Unix modes, and no comments.
func TestZipHeaders(t *testing.T) {
	t.Parallel()
	data := write(t, dist.WriteZip, testFiles(), mtime)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Comment != "" || len(zr.File) != len(testFiles()) {
		t.Fatalf("comment %q, %d files", zr.Comment, len(zr.File))
	}
	for i, want := range testFiles() {
		f := zr.File[i]
		if f.Name != want.Name || f.Mode() != want.Mode || !f.Modified.Equal(mtime) || f.Method != zip.Deflate || f.CreatorVersion>>8 != 3 || f.Comment != "" {
			t.Errorf("entry %d: %s mode %v modified %v method %d creator %d comment %q; want %s %v %v deflate unix",
				i, f.Name, f.Mode(), f.Modified, f.Method, f.CreatorVersion>>8, f.Comment, want.Name, want.Mode, mtime)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(body, want.Data) {
			t.Errorf("%s: content differs (%v)", f.Name, err)
		}
	}
}

// TestTarExtracts: the system's tar extracts the archive with the modes
// and the time.
func TestTarExtracts(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.tar.gz")
	if err := os.WriteFile(archive, write(t, dist.WriteTarGz, testFiles(), mtime), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("tar", "-xzpf", archive, "-C", out).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, msg)
	}
	for _, want := range testFiles() {
		fi, err := os.Stat(filepath.Join(out, want.Name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want.Mode || !fi.ModTime().Equal(mtime) {
			t.Errorf("%s: mode %v time %v, want %v %v", want.Name, fi.Mode().Perm(), fi.ModTime().UTC(), want.Mode, mtime)
		}
	}
}

// TestArchivesRefuse: names that would land outside the extraction
// directory or twice, and times zip cannot hold.
func TestArchivesRefuse(t *testing.T) {
	t.Parallel()
	file := func(name string) dist.File { return dist.File{Name: name, Mode: 0o644} }
	for _, tc := range []struct {
		name  string
		files []dist.File
		at    time.Time
		want  error
	}{
		{"empty name", []dist.File{file("")}, mtime, dist.ErrEntry},
		{"absolute", []dist.File{file("/etc/passwd")}, mtime, dist.ErrEntry},
		{"parent", []dist.File{file("../x")}, mtime, dist.ErrEntry},
		{"unclean", []dist.File{file("a/../b")}, mtime, dist.ErrEntry},
		{"dot", []dist.File{file(".")}, mtime, dist.ErrEntry},
		{"twice", []dist.File{file("a"), file("a")}, mtime, dist.ErrEntry},
		{"1970", []dist.File{file("a")}, time.Unix(0, 0), dist.ErrTime},
	} {
		for format, w := range map[string]writer{"tar.gz": dist.WriteTarGz, "zip": dist.WriteZip} {
			if err := w(io.Discard, tc.files, tc.at); !errors.Is(err, tc.want) {
				t.Errorf("%s (%s): %v, want %v", tc.name, format, err, tc.want)
			}
		}
	}
}
