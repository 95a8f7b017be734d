package nodump

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func protect() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("nodump: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}

func protected() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && v == 0
}
