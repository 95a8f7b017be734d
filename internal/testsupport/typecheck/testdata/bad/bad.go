// Package bad type-checks on every platform but Windows, where
// bad_windows.go calls a function no file declares.
package bad

// Answer is 42.
func Answer() int { return 42 }
