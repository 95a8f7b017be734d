//go:build !linux && !darwin

package proctree

// List returns ErrUnsupported.
func List() (Table, error) { return nil, ErrUnsupported }

// Running reports false: the process table cannot be read.
func Running(int) bool { return false }

// StartOf returns 0.
func StartOf(int) uint64 { return 0 }

func hasToken(int, string) bool { return false }

// BecomeSubreaper returns ErrUnsupported.
func BecomeSubreaper() error { return ErrUnsupported }

// IsSubreaper reports false.
func IsSubreaper() bool { return false }

// OwnChildren returns ErrUnsupported.
func OwnChildren() ([]int, error) { return nil, ErrUnsupported }

// ChildrenOf returns ErrUnsupported.
func ChildrenOf(int) ([]int, error) { return nil, ErrUnsupported }

// HasToken reports false.
func HasToken(int, string, uint64) bool { return false }
