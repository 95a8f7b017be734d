package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/acpgate/acpgate/internal/safefile"
)

// Workload identity federation (MCP's extension, SEP-1933): the JWT
// bearer grant (RFC 7523 §2.1) with a token the workload's platform
// issues (a Kubernetes service account token, a CI provider's OIDC
// token), read afresh for each grant from a file or a command, since such
// tokens are short-lived and rotated by the platform.

// ErrWorkloadToken: the workload token could not be read from its source.
var ErrWorkloadToken = errors.New("workload token")

// maxWorkloadToken bounds a workload token (file or command output).
const maxWorkloadToken = 64 << 10

// workloadCommandTimeout bounds a workload token command.
const workloadCommandTimeout = 30 * time.Second

// workloadToken reads the workload token from its configured source: the
// file WorkloadTokenFile, else the output of WorkloadTokenCommand (run
// without a shell). Surrounding white space is trimmed. Errors wrap
// ErrWorkloadToken and name the source.
func (gr *grants) workloadToken(ctx context.Context) (string, error) {
	cfg := &gr.c.cfg
	var tok []byte
	var err error
	source := "file " + cfg.WorkloadTokenFile
	if cfg.WorkloadTokenFile != "" {
		tok, err = safefile.ReadFile(cfg.WorkloadTokenFile, maxWorkloadToken, true)
	} else {
		source = "command " + strings.Join(cfg.WorkloadTokenCommand, " ")
		tok, err = runWorkloadCommand(ctx, cfg.WorkloadTokenCommand)
	}
	if err == nil && len(bytes.TrimSpace(tok)) == 0 {
		err = errors.New("it is empty")
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrWorkloadToken, source, err)
	}
	s := string(bytes.TrimSpace(tok))
	gr.c.opts.Secrets(s)
	return s, nil
}

// runWorkloadCommand runs argv and returns its standard output (at most
// maxWorkloadToken bytes); a failure carries the end of its standard
// error.
func runWorkloadCommand(ctx context.Context, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, workloadCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errOut bytes.Buffer
	cmd.Stdout = &limitWriter{b: &out, max: maxWorkloadToken}
	cmd.Stderr = &limitWriter{b: &errOut, max: 4 << 10}
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// limitWriter keeps at most max bytes and discards the rest.
type limitWriter struct {
	b   *bytes.Buffer
	max int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
