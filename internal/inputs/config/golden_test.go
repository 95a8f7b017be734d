package config_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/config"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden parses every testdata/*.json file and compares what Parse
// reports (warnings, then errors, or the result of selecting an unknown
// profile when the file is valid) with testdata/<name>.golden. Regenerate
// with go test ./internal/inputs/config -update.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			c, warnings, err := config.Parse(data, filepath.Base(file))
			for _, w := range warnings {
				fmt.Fprintf(&out, "warning: %s\n", w)
			}
			if err != nil {
				for _, e := range unjoin(err) {
					fmt.Fprintf(&out, "error: %v\n", e)
				}
			} else {
				_, err := c.Effective("nope")
				if !errors.Is(err, config.ErrUnknownProfile) {
					t.Errorf("Effective(nope): %v", err)
				}
				fmt.Fprintf(&out, "valid; profile nope: %v\n", err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/inputs/config -update)", err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("%s: got\n%s\nwant\n%s", golden, got, want)
			}
		})
	}
}

// unjoin returns the errors joined by errors.Join, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
