package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/acpgate/acpgate/internal/base/atomicfile"
	"github.com/acpgate/acpgate/internal/base/safefile"
)

// Trust is the user's answer about a project's hooks.
type Trust string

// The answers.
const (
	Trusted   Trust = "trusted"
	Untrusted Trust = "untrusted"
)

// maxDigests bounds the digests remembered per project (the newest
// kept).
const maxDigests = 16

// maxTrustBytes bounds the trust file.
const maxTrustBytes = 4 << 20

// TrustStore remembers, in one file, the user's answer about a project's
// hooks per project directory and per digest of its hook files: a changed
// file is a new question. Safe for concurrent use; a missing file is an
// empty store.
type TrustStore struct {
	path string
	mu   sync.Mutex
}

// NewTrustStore returns the store kept in the file at path.
func NewTrustStore(path string) *TrustStore { return &TrustStore{path: path} }

// trustFile is the file: project directory -> answers, oldest first.
type trustFile struct {
	Projects map[string][]trustEntry `json:"projects"`
}

type trustEntry struct {
	Digest string `json:"digest"`
	Trust  Trust  `json:"trust"`
}

// Lookup returns the answer remembered for the project dir with hook
// files of digest, if any.
func (t *TrustStore) Lookup(dir, digest string) (Trust, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.read()
	if err != nil {
		return "", false, err
	}
	for _, e := range f.Projects[dir] {
		if e.Digest == digest {
			return e.Trust, true, nil
		}
	}
	return "", false, nil
}

// Remember records answer for the project dir with hook files of digest.
func (t *TrustStore) Remember(dir, digest string, answer Trust) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.read()
	if err != nil {
		return err
	}
	list := slices.DeleteFunc(f.Projects[dir], func(e trustEntry) bool { return e.Digest == digest })
	list = append(list, trustEntry{Digest: digest, Trust: answer})
	if len(list) > maxDigests {
		list = list[len(list)-maxDigests:]
	}
	f.Projects[dir] = list
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("hooks trust: %w", err)
	}
	if err := atomicfile.WriteFile(t.path, data, 0o600); err != nil {
		return fmt.Errorf("hooks trust: %w", err)
	}
	return nil
}

// read reads the file (an empty store when there is none).
func (t *TrustStore) read() (trustFile, error) {
	f := trustFile{Projects: map[string][]trustEntry{}}
	data, err := safefile.ReadFile(t.path, maxTrustBytes, true)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("hooks trust: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("hooks trust: %s: %w", t.path, err)
	}
	if f.Projects == nil {
		f.Projects = map[string][]trustEntry{}
	}
	return f, nil
}

// Digest is the digest of a project's hook files, named (by their path
// in the project) and in any order: "sha256:" and the hex of each name
// and content, in name order.
func Digest(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%d:%s\n%d:", len(n), n, len(files[n]))
		h.Write(files[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
