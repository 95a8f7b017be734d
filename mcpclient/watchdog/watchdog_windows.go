//go:build windows

package watchdog

import (
	"os/exec"
	"time"
)

// configure refuses: on Windows the servers' job objects are the watchdog.
func configure(*exec.Cmd) error { return ErrUnsupported }

func stopAll([]record, time.Duration) error { return ErrUnsupported }
