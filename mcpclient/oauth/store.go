package oauth

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
	"strings"
	"sync"
	"time"

	"github.com/acpgate/acpgate/internal/base/atomicfile"
)

// record is what a Client keeps about one (server, authorization server,
// client): the client's identity, the endpoint to refresh at, and the
// token. It holds secrets: never log it.
type record struct {
	ServerURL string `json:"server_url"`
	Issuer    string `json:"issuer"`
	Resource  string `json:"resource"`

	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
	// Registered: the client came from dynamic registration (and may be
	// reused for this authorization server).
	Registered bool `json:"registered,omitempty"`

	TokenEndpoint string `json:"token_endpoint"`

	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scope is the scope granted; Requested what was asked for (a step-up
	// that asks for no more than that cannot help).
	Scope     string `json:"scope,omitempty"`
	Requested string `json:"requested_scope,omitempty"`

	// DPoPKey is the PKCS#8 DER of the DPoP key pair the token is bound
	// to (see dpop.go); none without DPoP.
	DPoPKey []byte `json:"dpop_key,omitempty"`

	Updated time.Time `json:"updated"`
}

// secrets returns the record's secret values.
func (r *record) secrets() []string {
	var out []string
	for _, s := range []string{r.ClientSecret, r.AccessToken, r.RefreshToken} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Store keeps tokens on disk: one JSON file per (server URL, authorization
// server, client), mode 0600, in a directory of mode 0700 created on first
// write. Files are replaced whole (write, then rename), so a reader never
// sees half of one. Safe for concurrent use, also by several Clients of
// the same server; separate processes sharing a directory may lose a
// refresh to each other, never a file.
type Store struct {
	dir string
	mu  sync.Mutex
}

// NewStore returns a Store keeping its files in dir. Nothing is read or
// written until a Client needs it.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Dir returns the Store's directory.
func (s *Store) Dir() string { return s.dir }

// Remove deletes every stored token and registration of serverURL. It is
// what a Client's Logout does, for callers that have no Client.
func (s *Store) Remove(serverURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	paths, err := s.files(serverURL)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RemoveAll deletes every stored token and registration, of every server
// (the ACP logout method).
func (s *Store) RemoveAll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// serverPrefix is the file name prefix of serverURL's records.
func serverPrefix(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return hex.EncodeToString(sum[:12])
}

// fileName is the file of a record.
func fileName(serverURL, issuer, clientID string) string {
	sum := sha256.Sum256([]byte(issuer + "\n" + clientID))
	return serverPrefix(serverURL) + "-" + hex.EncodeToString(sum[:8]) + ".json"
}

// files lists serverURL's record files. Called with s.mu held.
func (s *Store) files(serverURL string) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	prefix := serverPrefix(serverURL) + "-"
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(s.dir, e.Name()))
		}
	}
	return out, nil
}

// load returns serverURL's records (those that parse and name it), newest
// first.
func (s *Store) load(serverURL string) ([]*record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	paths, err := s.files(serverURL)
	if err != nil {
		return nil, err
	}
	var out []*record
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // removed meanwhile
		}
		var r record
		if json.Unmarshal(b, &r) != nil || r.ServerURL != serverURL {
			continue
		}
		out = append(out, &r)
	}
	slices.SortFunc(out, func(a, b *record) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}

// save writes r (mode 0600) in place of its earlier version.
func (s *Store) save(r *record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, fileName(r.ServerURL, r.Issuer, r.ClientID)), b, 0o600); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}
