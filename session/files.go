package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acpgate/acpgate/internal/base/atomicfile"
)

// mkdirPrivate creates dir and any missing parents, each with mode 0700
// regardless of the umask, and fsyncs the parent of each directory it
// creates. Existing directories are left as they are.
func mkdirPrivate(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirPrivate(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, dirMode); err != nil {
		if errors.Is(err, fs.ErrExist) { // created meanwhile
			return mkdirPrivate(dir)
		}
		return err
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return err
	}
	return syncDir(parent)
}

// syncDir fsyncs a directory, making its entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// writeMeta writes m as dir/meta.json, atomically.
func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	return writeFileAtomic(dir, metaName, append(b, '\n'))
}

// tempPattern is the pattern of writeFileAtomic's temporary files.
func tempPattern(name string) string { return "." + name + ".tmp-*" }

// writeFileAtomic replaces dir/name with data (mode 0600) with
// atomicfile.WriteFile: readers see the old or the new content, never a
// mix, and a crash leaves one of the two (and maybe a temporary file
// matching tempPattern, which removeStaleTemps removes).
func writeFileAtomic(dir, name string, data []byte) error {
	return atomicfile.WriteFile(filepath.Join(dir, name), data, fileMode)
}

// removeStaleTemps removes the temporary metadata files a crash in
// writeFileAtomic may have left in a session directory. Best effort.
func removeStaleTemps(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, tempPattern(metaName)))
	for _, n := range names {
		os.Remove(n)
	}
}

// readLog reads the records of the log at path from r. A torn last line
// (unterminated, or terminated but unparsable) is not an error: it is
// returned as dropped, and end is where it begins. Any other bad line is a
// *CorruptError. end is the length of the log's valid part.
func readLog(r io.Reader, path string) (recs []Record, dropped *Dropped, end int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		off     int64
		line    int
		bad     *Dropped // a bad terminated line; corruption unless last
		badErr  error
		readErr error
	)
	for readErr == nil {
		var b []byte
		b, readErr = br.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return nil, nil, 0, fmt.Errorf("session: read %s: %w", path, readErr)
		}
		if len(b) == 0 {
			break
		}
		line++
		if bad != nil {
			return nil, nil, 0, &CorruptError{Path: path, Line: bad.Line, Err: badErr}
		}
		if b[len(b)-1] != '\n' { // only at EOF
			bad = &Dropped{Line: line, Offset: off, Size: int64(len(b)), Reason: "unterminated line"}
		} else if rec, perr := parseRecord(b[:len(b)-1]); perr != nil {
			bad = &Dropped{Line: line, Offset: off, Size: int64(len(b)), Reason: "unparsable line: " + perr.Error()}
			badErr = perr
		} else {
			recs = append(recs, rec)
		}
		off += int64(len(b))
	}
	if bad != nil {
		return recs, bad, bad.Offset, nil
	}
	return recs, nil, off, nil
}

// parseRecord parses one log line (without its newline).
func parseRecord(b []byte) (Record, error) {
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, err
	}
	if rec.Kind == "" {
		return Record{}, errors.New(`missing record kind "k"`)
	}
	if rec.Data == nil {
		return Record{}, errors.New(`missing record data "d"`)
	}
	return rec, nil
}
