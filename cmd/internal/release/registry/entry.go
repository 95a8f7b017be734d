// Package registry writes and checks an agent's entry in the ACP registry
// (github.com/agentclientprotocol/registry): a folder named by the
// agent's id holding agent.json and icon.svg. Check applies the rules the
// registry's build script (.github/workflows/build_registry.py) applies
// beyond its JSON schema, so that a release finds out before a pull
// request does; the schema itself is vendored under testdata and applied
// by the tests.
package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The files of an entry's folder.
const (
	AgentFile = "agent.json"
	IconFile  = "icon.svg"
)

// Entry is an agent.json: the fields acpgate fills, in the registry's
// format (FORMAT.md, agent.schema.json).
type Entry struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	Distribution Distribution `json:"distribution"`
}

// Distribution is how an agent is installed; acpgate ships binaries.
type Distribution struct {
	// Binary maps a registry platform (linux-x86_64, …) to its archive.
	Binary map[string]Target `json:"binary,omitempty"`
}

// Target is one platform's archive and the command in it.
type Target struct {
	Archive string `json:"archive"`          // URL of the archive
	SHA256  string `json:"sha256,omitempty"` // hex SHA-256 of the archive
	Cmd     string `json:"cmd"`              // the program, relative to where the archive is extracted
}

// Write writes e and icon as root/<e.ID>/agent.json and icon.svg (the
// JSON indented by two spaces, a newline at the end) and returns the
// folder. It does not check them: see Check.
func Write(root string, e Entry, icon []byte) (string, error) {
	if e.ID == "" || filepath.Base(e.ID) != e.ID {
		return "", fmt.Errorf("%w: %q cannot name a folder", ErrID, e.ID)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(e); err != nil {
		return "", err
	}
	dir := filepath.Join(root, e.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, AgentFile), buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, IconFile), icon, 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// Load reads the agent.json of the entry folder dir.
func Load(dir string) (Entry, error) {
	var e Entry
	data, err := os.ReadFile(filepath.Join(dir, AgentFile))
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("%w: %s: %w", ErrJSON, AgentFile, err)
	}
	return e, nil
}

// ErrJSON is returned for an agent.json that is not JSON of the entry's
// shape.
var ErrJSON = errors.New("invalid agent.json")
