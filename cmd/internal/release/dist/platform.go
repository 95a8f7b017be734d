package dist

// Name is the program's name: the binary in every archive and the start
// of every archive's file name.
const Name = "acpgate"

// Platform is one target of a release, named as the ACP registry names it.
type Platform struct {
	Name   string // the registry's platform: linux-x86_64, windows-aarch64, …
	GOOS   string
	GOARCH string
}

// Platforms returns every platform the ACP registry knows, in a fixed
// order: the platforms a release builds.
func Platforms() []Platform {
	return []Platform{
		{"linux-x86_64", "linux", "amd64"},
		{"linux-aarch64", "linux", "arm64"},
		{"darwin-x86_64", "darwin", "amd64"},
		{"darwin-aarch64", "darwin", "arm64"},
		{"windows-x86_64", "windows", "amd64"},
		{"windows-aarch64", "windows", "arm64"},
	}
}

// Binary is the program's file name on p: acpgate, or acpgate.exe on
// Windows.
func (p Platform) Binary() string {
	if p.GOOS == "windows" {
		return Name + ".exe"
	}
	return Name
}

// Archive is the file name of p's archive of version: a .zip on Windows,
// a .tar.gz elsewhere, e.g. acpgate-1.2.3-linux-x86_64.tar.gz.
func (p Platform) Archive(version string) string {
	ext := ".tar.gz"
	if p.GOOS == "windows" {
		ext = ".zip"
	}
	return Name + "-" + version + "-" + p.Name + ext
}
