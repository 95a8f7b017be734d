//go:build unix

package secrets_test

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// TestResolveFileNamedPipe: a secret://file reference to a named pipe
// (which a plain open waits on for a writer) fails at once as not a
// regular file.
func TestResolveFileNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r := &secrets.Resolver{Redactor: secrets.NewRedactor()}
	done := make(chan error, 1)
	go func() {
		_, err := r.ResolveKey(context.Background(), "TOKEN", "secret://file/"+fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ResolveKey = %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("resolving a named pipe blocked")
	}
}
