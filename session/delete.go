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
// such session, and ErrInUse if the session is open (or being opened or
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
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	} else if err != nil {
		return fmt.Errorf("session: delete %q: %w", id, err)
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
