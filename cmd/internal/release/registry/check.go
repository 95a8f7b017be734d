package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The rules Check applies; each problem it finds wraps one of these.
var (
	ErrRequired   = errors.New("missing field")
	ErrID         = errors.New("bad id")
	ErrRepository = errors.New("bad repository URL")
	ErrVersion    = errors.New("bad version")
	ErrPlatform   = errors.New("bad platforms")
	ErrArchive    = errors.New("bad archive URL")
	ErrSHA256     = errors.New("bad sha256")
	ErrIcon       = errors.New("bad icon")
)

// platforms are the registry's platforms (its VALID_PLATFORMS).
var platforms = []string{"darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"}

// Formats the registry installs (agent.schema.json's archive description),
// and installer formats it refuses (REJECTED_ARCHIVE_EXTENSIONS).
var (
	archiveFormats  = []string{".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2"}
	rejectedFormats = []string{".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"}
)

// urlVersion is how the registry finds a version in a release URL
// (extract_version_from_url): /download/v1.2.3/ or /releases/1.2.3/.
var urlVersion = regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`)

// Check applies the registry's rules to the entry folder dir: those of
// its build script (the id names the folder and is lowercase letters,
// digits and hyphens starting with a letter; the version is x.y.z; every
// platform is one the registry knows; no archive URL has /latest/ or
// another version; icon.svg is a square 16×16 SVG in currentColor, see
// CheckIcon), the schema's uri format of the repository, and those this
// project keeps stricter (all six platforms, each with a sha256 and a
// supported archive format whose URL contains the version). It returns
// every problem found, joined; each wraps one of the Err values above.
func Check(dir string) error {
	e, err := Load(dir)
	if err != nil {
		return err
	}
	icon, err := os.ReadFile(filepath.Join(dir, IconFile))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrIcon, err)
	}
	return errors.Join(checkFields(e, filepath.Base(dir)), checkBinary(e), CheckIcon(icon))
}

func checkFields(e Entry, folder string) error {
	var errs []error
	for _, f := range []struct{ name, value string }{{"id", e.ID}, {"name", e.Name}, {"version", e.Version}, {"description", e.Description}} {
		if f.value == "" {
			errs = append(errs, fmt.Errorf("%w: %s", ErrRequired, f.name))
		}
	}
	switch {
	case e.ID == "":
	case !isLetter(rune(e.ID[0])) || strings.IndexFunc(e.ID, func(r rune) bool { return !isLetter(r) && !isDigit(r) && r != '-' }) >= 0:
		errs = append(errs, fmt.Errorf("%w: %q is not lowercase letters, digits and hyphens starting with a letter", ErrID, e.ID))
	case e.ID != folder:
		errs = append(errs, fmt.Errorf("%w: %q does not name its folder %q", ErrID, e.ID, folder))
	}
	if u, err := url.Parse(e.Repository); e.Repository != "" && (err != nil || !u.IsAbs() || u.Host == "") {
		errs = append(errs, fmt.Errorf("%w: %q is not an absolute URL", ErrRepository, e.Repository))
	}
	if !IsVersion(e.Version) {
		errs = append(errs, fmt.Errorf("%w: %q is not x.y.z", ErrVersion, e.Version))
	}
	return errors.Join(errs...)
}

// checkBinary checks distribution.binary: every platform, and each
// target's URL, sha256 and cmd.
func checkBinary(e Entry) error {
	bin := e.Distribution.Binary
	if len(bin) == 0 {
		return fmt.Errorf("%w: distribution.binary", ErrRequired)
	}
	var errs []error
	for _, p := range platforms {
		if _, ok := bin[p]; !ok {
			errs = append(errs, fmt.Errorf("%w: no %s", ErrPlatform, p))
		}
	}
	for _, p := range sortedKeys(bin) {
		t := bin[p]
		if !slices.Contains(platforms, p) {
			errs = append(errs, fmt.Errorf("%w: unknown platform %q", ErrPlatform, p))
		}
		if t.Cmd == "" {
			errs = append(errs, fmt.Errorf("%w: %s cmd", ErrRequired, p))
		}
		if len(t.SHA256) != sha256.Size*2 || !isHex(t.SHA256) {
			errs = append(errs, fmt.Errorf("%w: %s: %q is not 64 hex digits", ErrSHA256, p, t.SHA256))
		}
		if err := checkArchiveURL(t.Archive, e.Version); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func checkArchiveURL(raw, version string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%w: %q is not an absolute URL", ErrArchive, raw)
	}
	lower := strings.ToLower(u.Path)
	switch {
	case strings.Contains(raw, "/latest/"):
		return fmt.Errorf("%w: %s uses /latest/, not the version", ErrArchive, raw)
	case slices.ContainsFunc(rejectedFormats, func(ext string) bool { return strings.HasSuffix(lower, ext) }):
		return fmt.Errorf("%w: %s is an installer, not an archive", ErrArchive, raw)
	case !slices.ContainsFunc(archiveFormats, func(ext string) bool { return strings.HasSuffix(lower, ext) }):
		return fmt.Errorf("%w: %s is not one of %s", ErrArchive, raw, strings.Join(archiveFormats, ", "))
	case !strings.Contains(raw, version):
		return fmt.Errorf("%w: %s does not contain the version %s", ErrArchive, raw, version)
	}
	if m := urlVersion.FindStringSubmatch(raw); m != nil && normalizeVersion(m[1]) != version {
		return fmt.Errorf("%w: %s is version %s, the entry %s", ErrArchive, raw, m[1], version)
	}
	return nil
}

// CheckArchives checks that each archive of the entry folder dir, found
// in archives by the base name of its URL, has the entry's sha256.
func CheckArchives(dir, archives string) error {
	e, err := Load(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range sortedKeys(e.Distribution.Binary) {
		t := e.Distribution.Binary[p]
		u, err := url.Parse(t.Archive)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrArchive, p, err))
			continue
		}
		file := filepath.Join(archives, path.Base(u.Path))
		sum, err := fileSHA256(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrSHA256, p, err))
			continue
		}
		if !strings.EqualFold(sum, t.SHA256) {
			errs = append(errs, fmt.Errorf("%w: %s: %s has sha256 %s, the entry says %s", ErrSHA256, p, file, sum, t.SHA256))
		}
	}
	return errors.Join(errs...)
}

// fileSHA256 is the hex SHA-256 of the file name.
func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// IsVersion reports whether v is a version as the registry's build script
// wants it: at least three dot-separated parts, the first three decimal
// digits (1.2.3, 1.2.3.4).
func IsVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return false
	}
	for _, p := range parts[:3] {
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return !isDigit(r) }) >= 0 {
			return false
		}
	}
	return true
}

// normalizeVersion pads or cuts v to three parts, as the registry does
// with the version of a URL.
func normalizeVersion(v string) string {
	parts := strings.Split(v, ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return strings.Join(parts[:3], ".")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isLetter(r rune) bool { return 'a' <= r && r <= 'z' }
func isDigit(r rune) bool  { return '0' <= r && r <= '9' }

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
