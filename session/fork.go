package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Fork creates session id as a copy of session src as it is now: the
// complete records of its log (a torn last line is left out) and its
// metadata (Cwd, Title, Mode, Always, Extra), with ID id and Created and
// Updated now. edit, when not nil, then changes the copy's metadata under
// UpdateMeta's rules, before anything is written. The copy is written as
// Create writes a session (complete or not at all), opened for appending,
// and returned with its records, oldest first.
//
// src is left as it is. It may be open in this Store and being written
// to: the copy has the records appended before Fork took its snapshot and
// the metadata of that moment, none after.
//
// Fork fails with ErrInvalidID for an unsafe id, ErrNotFound if src does
// not exist, ErrExists if id does, a *CorruptError if src's log has an
// unreadable line before its last, and as UpdateMeta does when edit
// breaks its rules. It is safe for concurrent use.
func (s *Store) Fork(src, id string, edit func(*Meta)) (*Session, []Record, error) {
	if err := checkID(src); err != nil {
		return nil, nil, err
	}
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	if err := s.reserve(id, ErrExists); err != nil {
		return nil, nil, err
	}
	ss, recs, err := s.fork(src, id, edit)
	s.settle(id, ss)
	return ss, recs, err
}

func (s *Store) fork(src, id string, edit func(*Meta)) (*Session, []Record, error) {
	meta, size, err := s.snapshot(src)
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(s.sessionDir(src), logName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %q", ErrNotFound, src) // deleted meanwhile
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session: fork %q: %w", src, err)
	}
	defer f.Close()
	if size < 0 {
		fi, err := f.Stat()
		if err != nil {
			return nil, nil, fmt.Errorf("session: fork %q: %w", src, err)
		}
		size = fi.Size()
	}
	recs, _, end, err := readLog(io.NewSectionReader(f, 0, size), path)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	meta.ID, meta.Created, meta.Updated = id, now, now
	if edit != nil {
		if err := meta.edit(edit); err != nil {
			return nil, nil, fmt.Errorf("session: fork %q as %q: %w", src, id, err)
		}
	}
	ss, err := s.create(meta, func(dst *os.File) (int64, error) {
		return io.Copy(dst, io.NewSectionReader(f, 0, end))
	})
	if err != nil {
		return nil, nil, err
	}
	return ss, recs, nil
}

// snapshot returns the metadata of session id and how much of its log to
// read: for a session open in this Store its metadata in memory and its
// log's length, taken together under its lock (appends may go on once it
// is released: the bytes before that length never change); else its
// metadata on disk and -1 (the whole log).
func (s *Store) snapshot(id string) (Meta, int64, error) {
	s.mu.Lock()
	ss := s.open[id]
	s.mu.Unlock()
	if ss != nil {
		ss.mu.Lock()
		closed, meta, size := ss.closed, ss.meta.clone(), ss.size
		ss.mu.Unlock()
		if !closed {
			return meta, size, nil
		}
	}
	meta, err := s.readMeta(id)
	return meta, -1, err
}
