package dist

import (
	"archive/tar"
	"archive/zip"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"
)

// ErrEntry is returned for an archive entry that cannot be written: an
// empty, absolute, non-local or repeated name.
var ErrEntry = errors.New("bad archive entry")

// ErrTime is returned for a modification time an archive cannot hold
// (zip's MS-DOS times start in 1980).
var ErrTime = errors.New("bad modification time")

// minTime is the first time every archive format here can represent.
var minTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// File is one regular file in an archive.
type File struct {
	Name string      // slash-separated path inside the archive
	Mode fs.FileMode // permission bits only: 0o755 for a program, 0o644 else
	Data []byte
}

// WriteTarGz writes files, in the order given, as a gzip-compressed tar to
// w. The bytes depend only on the arguments (and the Go version's
// compressor): USTAR headers with mtime as every entry's time, uid and gid
// 0, empty owner names, only the permission bits of Mode; a gzip header
// without a name or a time.
func WriteTarGz(w io.Writer, files []File, mtime time.Time) error {
	if err := checkEntries(files, mtime); err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.Name,
			Mode:     int64(f.Mode.Perm()),
			Size:     int64(len(f.Data)),
			ModTime:  mtime.UTC().Truncate(time.Second),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return fmt.Errorf("tar %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	return zw.Close()
}

// WriteZip writes files, in the order given, as a zip archive to w,
// deflated at the best compression. The bytes depend only on the
// arguments (and the Go version's compressor): every entry has mtime (as
// an MS-DOS time and an extended timestamp, both UTC), a Unix mode of
// only the permission bits of Mode, and no comment.
func WriteZip(w io.Writer, files []File, mtime time.Time) error {
	if err := checkEntries(files, mtime); err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, f := range files {
		fh := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
		fh.SetMode(f.Mode.Perm())
		fw, err := zw.CreateHeader(fh)
		if err != nil {
			return fmt.Errorf("zip %s: %w", f.Name, err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			return fmt.Errorf("zip %s: %w", f.Name, err)
		}
	}
	return zw.Close()
}

// checkEntries refuses names an extractor could place outside its
// directory or would overwrite, and times before 1980.
func checkEntries(files []File, mtime time.Time) error {
	if mtime.Before(minTime) {
		return fmt.Errorf("%w: %s is before %s", ErrTime, mtime.UTC().Format(time.RFC3339), minTime.Format(time.RFC3339))
	}
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if !fs.ValidPath(f.Name) || f.Name == "." || path.Clean(f.Name) != f.Name {
			return fmt.Errorf("%w: name %q is not a clean relative path", ErrEntry, f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("%w: %q twice", ErrEntry, f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}
