//go:build !linux

package nodump

func protect() error { return ErrUnsupported }

func protected() bool { return false }
