//go:build !linux

package testbin

import (
	"errors"
	"os"
)

// OpenPTY is not implemented on this system: the tests that need a
// pseudo-terminal skip.
func OpenPTY() (master, slave *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are opened on Linux only")
}
