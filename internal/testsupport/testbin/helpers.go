package testbin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// JSON returns v encoded with encoding/json, failing the test if it does
// not encode. It is safe for concurrent use.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// WriteFile writes content to the file name in dir (mode 0600), failing the
// test on an error, and returns the file's path.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Count returns how many of lines are exactly line.
func Count(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}
