//go:build !linux

package loopback

import "fmt"

// rawDial: the system-call protocols are tested on Linux only.
func rawDial(proto, _ string) error { return fmt.Errorf("%s: Linux only", proto) }
