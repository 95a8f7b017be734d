package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Files is what a policy lets a process do with the file system.
type Files string

// The file rules of a policy.
const (
	// FilesOff: no sandbox at all (the whole policy is off).
	FilesOff Files = "off"
	// FilesReadOnly: read everything but the hidden paths, write only the
	// process's own temporary directory and the caches (Places.Cache).
	FilesReadOnly Files = "read-only"
	// FilesWorkspaceWrite: as FilesReadOnly, and write in the workspace
	// (the session's cwd and additional directories).
	FilesWorkspaceWrite Files = "workspace-write"
	// FilesCustom: read and write exactly Policy.Read and Policy.Write
	// (and the own temporary directory), minus the hidden paths.
	FilesCustom Files = "custom"
)

// Net says where a confined process may connect.
type Net string

// The network rules of a policy.
const (
	// NetAll: no network rule.
	NetAll Net = "all"
	// NetNone: no TCP connect and no TCP bind, and no socket of a
	// network family (UDP, MPTCP, raw, ...: see seccomp_linux.go).
	NetNone Net = "none"
	// NetPorts: TCP connect only to Policy.Connect's ports (any host);
	// UDP unrestricted (name resolution); no other network protocol.
	NetPorts Net = "ports"
)

// MaxPaths bounds each path list of a policy; MaxPorts its ports.
const (
	MaxPaths = 256
	MaxPorts = 256
)

// ErrPolicy is wrapped by every error about a policy's text.
var ErrPolicy = errors.New("invalid sandbox policy")

// Policy is a sandbox policy as acpgate's configuration gives it. The zero
// value is off. It is plain data.
type Policy struct {
	// Files is the file rule; "" means off.
	Files Files
	// Read and Write are the readable and writable paths of FilesCustom
	// (absolute, or starting with ~/ for the user's home).
	Read, Write []string
	// Hide are paths hidden on top of DefaultHidden.
	Hide []string
	// Network is the network rule ("" means NetAll); Connect the ports of
	// NetPorts.
	Network Net
	Connect []uint16
	// FailIfUnavailable false starts the process unconfined (and says so)
	// where the policy cannot be enforced; nil means true: refuse to start.
	FailIfUnavailable *bool
}

// Off reports whether the policy confines nothing.
func (p Policy) Off() bool { return p.Files == "" || p.Files == FilesOff }

// Strict reports whether an unenforceable policy refuses to start the
// process (FailIfUnavailable unset or true).
func (p Policy) Strict() bool { return p.FailIfUnavailable == nil || *p.FailIfUnavailable }

// network returns Network with its default.
func (p Policy) network() Net {
	if p.Network == "" {
		return NetAll
	}
	return p.Network
}

// String describes the policy in one line, as /mcp shows it:
// "workspace-write", "read-only, network none", "custom (read 2, write 1),
// network ports 443,8080".
func (p Policy) String() string {
	if p.Off() {
		return string(FilesOff)
	}
	var b strings.Builder
	b.WriteString(string(p.Files))
	if p.Files == FilesCustom {
		fmt.Fprintf(&b, " (read %d, write %d)", len(p.Read), len(p.Write))
	}
	if len(p.Hide) > 0 {
		fmt.Fprintf(&b, ", %d more hidden", len(p.Hide))
	}
	switch p.network() {
	case NetNone:
		b.WriteString(", network none")
	case NetPorts:
		ports := make([]string, len(p.Connect))
		for i, port := range p.Connect {
			ports[i] = strconv.Itoa(int(port))
		}
		b.WriteString(", network ports " + strings.Join(ports, ","))
	}
	if !p.Strict() {
		b.WriteString(", best effort")
	}
	return b.String()
}

// policyJSON is the object form of a policy.
type policyJSON struct {
	Files             json.RawMessage `json:"files,omitempty"`
	Hide              []string        `json:"hide,omitempty"`
	Network           json.RawMessage `json:"network,omitempty"`
	FailIfUnavailable *bool           `json:"failIfUnavailable,omitempty"`
}

// filesJSON is the object form of "files".
type filesJSON struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

// networkJSON is the object form of "network".
type networkJSON struct {
	Connect []uint16 `json:"connect"`
}

// UnmarshalJSON decodes "off", "read-only", "workspace-write" (those
// files rules, network all) or the object form
// {"files", "hide", "network", "failIfUnavailable"}. Unknown keys of the
// object are an error; the values are Check's to judge (a configuration
// reports those at their JSON path).
func (p *Policy) UnmarshalJSON(data []byte) error {
	var name string
	if err := json.Unmarshal(data, &name); err == nil {
		switch f := Files(name); f {
		case FilesOff, FilesReadOnly, FilesWorkspaceWrite:
			*p = Policy{Files: f}
			return nil
		}
		return fmt.Errorf("%w: %q: want \"off\", \"read-only\", \"workspace-write\" or an object", ErrPolicy, name)
	}
	var o policyJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	out := Policy{Files: FilesReadOnly, Hide: o.Hide, FailIfUnavailable: o.FailIfUnavailable}
	if err := out.decodeFiles(o.Files); err != nil {
		return err
	}
	if err := out.decodeNetwork(o.Network); err != nil {
		return err
	}
	*p = out
	return nil
}

func (p *Policy) decodeFiles(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil // read-only
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		switch f := Files(name); f {
		case FilesReadOnly, FilesWorkspaceWrite:
			p.Files = f
			return nil
		}
		return fmt.Errorf("%w: files %q: want \"read-only\", \"workspace-write\" or {\"read\": [...], \"write\": [...]}", ErrPolicy, name)
	}
	var f filesJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%w: files: %w", ErrPolicy, err)
	}
	p.Files, p.Read, p.Write = FilesCustom, f.Read, f.Write
	return nil
}

func (p *Policy) decodeNetwork(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil // all
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		switch n := Net(name); n {
		case NetAll, NetNone:
			p.Network = n
			return nil
		}
		return fmt.Errorf("%w: network %q: want \"all\", \"none\" or {\"connect\": [ports]}", ErrPolicy, name)
	}
	var n networkJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return fmt.Errorf("%w: network: %w", ErrPolicy, err)
	}
	p.Network, p.Connect = NetPorts, n.Connect
	return nil
}

// MarshalJSON encodes the policy in the form UnmarshalJSON reads: a name
// where one says it all, else the object.
func (p Policy) MarshalJSON() ([]byte, error) {
	if p.Off() {
		return json.Marshal(string(FilesOff))
	}
	if len(p.Hide) == 0 && p.network() == NetAll && p.FailIfUnavailable == nil && p.Files != FilesCustom {
		return json.Marshal(string(p.Files))
	}
	o := map[string]any{}
	if p.Files == FilesCustom {
		o["files"] = filesJSON{Read: nonNil(p.Read), Write: nonNil(p.Write)}
	} else {
		o["files"] = string(p.Files)
	}
	if len(p.Hide) > 0 {
		o["hide"] = p.Hide
	}
	switch p.network() {
	case NetPorts:
		o["network"] = networkJSON{Connect: nonNil(p.Connect)}
	default:
		o["network"] = string(p.network())
	}
	if p.FailIfUnavailable != nil {
		o["failIfUnavailable"] = *p.FailIfUnavailable
	}
	return json.Marshal(o)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Check reports what is wrong with the policy's values: a path that is
// neither absolute nor ~/..., a list longer than MaxPaths, port 0, more
// than MaxPorts ports, an unknown files or network rule. The error wraps
// ErrPolicy and names the member.
func (p Policy) Check() error {
	switch p.Files {
	case "", FilesOff, FilesReadOnly, FilesWorkspaceWrite, FilesCustom:
	default:
		return fmt.Errorf("%w: files %q: want read-only, workspace-write or custom", ErrPolicy, p.Files)
	}
	for _, l := range []struct {
		name  string
		paths []string
	}{{"files.read", p.Read}, {"files.write", p.Write}, {"hide", p.Hide}} {
		if len(l.paths) > MaxPaths {
			return fmt.Errorf("%w: %s: %d paths, at most %d", ErrPolicy, l.name, len(l.paths), MaxPaths)
		}
		for i, path := range l.paths {
			if err := checkPath(path); err != nil {
				return fmt.Errorf("%w: %s[%d]: %w", ErrPolicy, l.name, i, err)
			}
		}
	}
	switch p.network() {
	case NetAll, NetNone:
	case NetPorts:
		if len(p.Connect) > MaxPorts {
			return fmt.Errorf("%w: network.connect: %d ports, at most %d", ErrPolicy, len(p.Connect), MaxPorts)
		}
		if slices.Contains(p.Connect, 0) {
			return fmt.Errorf("%w: network.connect: port 0 is no port", ErrPolicy)
		}
	default:
		return fmt.Errorf("%w: network %q: want all, none or ports", ErrPolicy, p.Network)
	}
	return nil
}

// checkPath accepts an absolute path or one starting with ~/ (the home).
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("empty path")
	case strings.ContainsRune(path, 0):
		return errors.New("a path holds no NUL byte")
	case path == "~" || strings.HasPrefix(path, "~/"):
		return nil
	case !filepath.IsAbs(path):
		return fmt.Errorf("%q is not absolute (start it with / or ~/)", path)
	}
	return nil
}
