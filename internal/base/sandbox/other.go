//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
)

// probe: no sandbox here. On Windows that is a documented choice: a
// policy other than off refuses to start what it is set for.
func probe() Support {
	return Support{Why: fmt.Sprintf("acpgate has no sandbox on %s (only Linux, with Landlock, and macOS, with sandbox-exec)", runtime.GOOS)}
}

// wrap is never reached: Enforceable refuses first.
func (l *Launcher) wrap(Rules, []string) ([]string, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, probe().Why)
}

// launch: no launcher here.
func launch(Rules, []string) error { return errors.New(probe().Why) }
