//go:build !linux && !darwin

package proctree

// List returns ErrUnsupported.
func List() (Table, error) { return nil, ErrUnsupported }

// Lookup reports false: the process table cannot be read.
func Lookup(int) (Proc, bool) { return Proc{}, false }

func hasToken(int, string) bool { return false }

// BecomeSubreaper returns ErrUnsupported.
func BecomeSubreaper() error { return ErrUnsupported }

// IsSubreaper reports false.
func IsSubreaper() bool { return false }

// OwnChildren returns ErrUnsupported.
func OwnChildren() ([]int, error) { return nil, ErrUnsupported }

// ChildrenOf returns ErrUnsupported.
func ChildrenOf(int) ([]int, error) { return nil, ErrUnsupported }
