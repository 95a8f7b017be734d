package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// DefaultHidden are the paths under the home directory that every policy
// but off hides (neither readable nor writable): the user's secret stores.
// SSH and GnuPG keys; the cloud command lines' credentials (AWS, Google
// Cloud, Azure, Kubernetes, Docker registries); the GitHub CLI's token and
// Git's stored credentials; netrc; pass and the desktop keyrings; the
// browsers' profiles (cookies, saved passwords). acpgate's own
// configuration and state directories (its configuration, sessions and
// sign-in tokens) come from the caller (Places.Hidden): their place
// depends on acpgate's environment.
var DefaultHidden = []string{
	"~/.ssh", "~/.gnupg",
	"~/.aws", "~/.config/gcloud", "~/.azure", "~/.kube", "~/.docker",
	"~/.config/gh", "~/.git-credentials", "~/.netrc",
	"~/.password-store", "~/.local/share/keyrings",
	"~/.mozilla", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware", "~/.config/microsoft-edge",
	"~/Library/Keychains", "~/Library/Cookies", "~/Library/Safari",
	"~/Library/Application Support/Google/Chrome", "~/Library/Application Support/Firefox",
}

// devices are the device files every confined process may read and
// write: programs open /dev/null for writing all the time.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// Places are the paths a policy is resolved against. It is plain data.
type Places struct {
	// Home is the user's home directory ("~/" in policies); "" leaves
	// the ~/ paths out.
	Home string
	// Workspace are the session's cwd and additional directories: what
	// workspace-write may write.
	Workspace []string
	// Cache are the directories every policy but off may write (package
	// managers' caches: npx and uvx need theirs).
	Cache []string
	// Hidden are paths hidden on top of DefaultHidden (acpgate's own
	// configuration and state).
	Hidden []string
	// Temp is the process's own temporary directory, writable under every
	// policy (the launcher sets TMPDIR to it); "" for none.
	Temp string
}

// Rules are a policy resolved to absolute paths: what a platform
// enforces. It is plain data, encoded as JSON for the Linux launcher.
type Rules struct {
	// Policy is the policy's description (Policy.String).
	Policy string `json:"policy"`
	// Read are the readable trees, Write the writable ones (also
	// readable), Hide the trees neither readable nor writable, inside any
	// of them.
	Read  []string `json:"read"`
	Write []string `json:"write"`
	Hide  []string `json:"hide"`
	// Network and Connect are the policy's network rule.
	Network Net      `json:"network"`
	Connect []uint16 `json:"connect,omitempty"`
}

// Resolve returns the rules of p in places: ~/ expanded, paths cleaned,
// symbolic links of existing paths resolved (a rule applies to what a
// path names), duplicates dropped.
func (p Policy) Resolve(pl Places) Rules {
	r := Rules{Policy: p.String(), Network: p.network(), Connect: slices.Clone(p.Connect)}
	switch p.Files {
	case FilesCustom:
		r.Read = expand(pl.Home, p.Read)
		r.Write = expand(pl.Home, p.Write)
	case FilesWorkspaceWrite:
		r.Read = []string{"/"}
		r.Write = expand(pl.Home, pl.Workspace)
	default:
		r.Read = []string{"/"}
	}
	r.Write = append(r.Write, expand(pl.Home, pl.Cache)...)
	if pl.Temp != "" {
		r.Write = append(r.Write, pl.Temp)
	}
	r.Read, r.Write = unique(r.Read), unique(r.Write)
	r.Hide = unique(expand(pl.Home, slices.Concat(DefaultHidden, pl.Hidden, p.Hide)))
	return r
}

// expand makes each path absolute: ~ and ~/x under home (dropped when
// home is ""), then cleaned and, where it exists, with its symbolic links
// resolved.
func expand(home string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case p == "~":
			p = home
		case strings.HasPrefix(p, "~/"):
			if home == "" {
				continue
			}
			p = filepath.Join(home, p[2:])
		}
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, p)
	}
	return out
}

func unique(paths []string) []string {
	slices.Sort(paths)
	return slices.Compact(paths)
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}
