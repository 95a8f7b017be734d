//go:build darwin

package sandbox

import (
	"errors"
	"fmt"
	"os"
)

// probe reports sandbox-exec: it enforces file and network rules.
func probe() Support {
	if _, err := os.Stat(SandboxExec); err != nil {
		return Support{Why: fmt.Sprintf("%s is missing (%v)", SandboxExec, err)}
	}
	return Support{Mechanism: "sandbox-exec", Files: true, Network: true}
}

// wrap runs argv under sandbox-exec with r's profile.
func (l *Launcher) wrap(r Rules, argv []string) ([]string, error) {
	return append([]string{SandboxExec, "-p", Profile(r)}, argv...), nil
}

// launch: macOS needs no launcher of acpgate's.
func launch(Rules, []string) error {
	return errors.New("the launcher is for Linux; macOS uses " + SandboxExec)
}
