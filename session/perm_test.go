//go:build linux || darwin

package session_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/acpgate/acpgate/session"
)

// TestPermissions checks that the store's directories are 0700 and its
// files 0600 whatever the umask. It changes the process umask, so it must
// not run in parallel with other tests.
func TestPermissions(t *testing.T) {
	for _, umask := range []int{0o022, 0o077, 0o000, 0o277} {
		t.Run(fmtMode(os.FileMode(umask)), func(t *testing.T) {
			base := t.TempDir()
			old := syscall.Umask(umask)
			defer syscall.Umask(old)

			dir := filepath.Join(base, "state", "acpgate")
			s, err := session.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := s.Create("p", "/")
			if err != nil {
				t.Fatal(err)
			}
			if err := ss.Append("k", 1); err != nil {
				t.Fatal(err)
			}
			if err := ss.UpdateMeta(func(m *session.Meta) { m.Title = "t" }); err != nil {
				t.Fatal(err)
			}
			if err := ss.Close(); err != nil {
				t.Fatal(err)
			}
			ss, _, err = s.Resume("p")
			if err != nil {
				t.Fatal(err)
			}
			if err := ss.Append("k", 2); err != nil {
				t.Fatal(err)
			}
			if err := ss.Close(); err != nil {
				t.Fatal(err)
			}
			syscall.Umask(old)

			for path, want := range map[string]os.FileMode{
				filepath.Join(base, "state"):   0o700,
				dir:                            0o700,
				filepath.Join(dir, "sessions"): 0o700,
				sessionDir(dir, "p"):           0o700,
				logPath(dir, "p"):              0o600,
				metaPath(dir, "p"):             0o600,
			} {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != want {
					t.Errorf("%s: mode %s, want %s", path, fmtMode(got), fmtMode(want))
				}
			}
		})
	}
}

func fmtMode(m os.FileMode) string { return "0" + strconv.FormatUint(uint64(m.Perm()), 8) }
