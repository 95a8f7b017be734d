package dist

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
)

// GoBuild returns the BuildFunc of a real release: goCmd (e.g. "go")
// builds ./cmd/acpgate of the module in dir for the platform, statically
// (CGO_ENABLED=0), with -trimpath, without VCS stamping, symbol tables or
// a build ID, with the baseline instruction sets (GOAMD64=v1,
// GOARM64=v8.0) whatever the environment says, and with version and
// commit stamped as main.version and main.commit.
func GoBuild(goCmd, dir, version, commit string) BuildFunc {
	return func(ctx context.Context, p Platform, path string) error {
		ldflags := fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s", version, commit)
		cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", path, "./cmd/acpgate")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.GOOS, "GOARCH="+p.GOARCH, "GOAMD64=v1", "GOARM64=v8.0")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w\n%s", err, stderr.Bytes())
		}
		return nil
	}
}
