package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// deletedPrefix starts the name a deleted session's directory is renamed
// to before it is removed; no session id can start with '.'.
const deletedPrefix = ".del-"

// Delete removes session id: its log, its metadata and its directory. It
// fails with ErrInvalidID for an unsafe id, ErrNotFound if there is no
// such session (a directory without a session's metadata, or a link, is
// none: see isSessionDir), and ErrInUse if the session is open (or being opened or
// created) in this Store: close it first.
//
// The directory is first renamed to a hidden name that List, Get, Resume
// and Fork never look at, and the rename is made durable: from then on,
// crash or not, the session no longer exists. The renamed directory is
// then removed; what a crash or a failed removal leaves of it is removed
// by the next OpenWith. A process that has the session open elsewhere
// (nothing is locked across processes) goes on appending to a log that is
// no longer anywhere, and its metadata writes fail: nothing it writes is
// left behind. Delete is safe for concurrent use.
func (s *Store) Delete(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := s.reserve(id, ErrInUse); err != nil {
		return err
	}
	defer s.settle(id, nil)
	dir := s.sessionDir(id)
	if ok, err := isSessionDir(dir); err != nil {
		return fmt.Errorf("session: delete %q: %w", id, err)
	} else if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:]) // never fails
	gone := filepath.Join(s.sessions, deletedPrefix+id+"-"+hex.EncodeToString(suffix[:]))
	if err := os.Rename(dir, gone); err != nil {
		return fmt.Errorf("session: delete %q: %w", id, err)
	}
	if err := syncDir(s.sessions); err != nil {
		return fmt.Errorf("session: delete %q: %w", id, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		// The session is gone; only its bytes are left, for OpenWith.
		s.logger.Warn("session: delete: removing the files of a deleted session", "id", id, "path", gone, "err", err)
	}
	return nil
}

// isSessionDir reports whether dir is a session's directory: a directory
// itself (not a link to one) holding a metadata file (a regular file, read
// or not). Anything else under the sessions directory — a directory a
// user made, a link — is no session, and Delete never removes it.
func isSessionDir(dir string) (bool, error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, nil
	}
	meta, err := os.Lstat(filepath.Join(dir, metaName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	return meta.Mode().IsRegular(), nil
}

// removeDeleted removes what Delete left of deleted sessions (a crash or
// a failed removal between its rename and its removal). Best effort.
func (s *Store) removeDeleted() {
	entries, err := os.ReadDir(s.sessions)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), deletedPrefix) {
			if err := os.RemoveAll(filepath.Join(s.sessions, e.Name())); err != nil {
				s.logger.Warn("session: removing the files of a deleted session", "path", e.Name(), "err", err)
			}
		}
	}
}
