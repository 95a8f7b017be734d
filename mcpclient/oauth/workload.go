package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acpgate/acpgate/internal/base/safefile"
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

// workloadToken reads the workload token from its configured source: the
// file WorkloadTokenFile, else the output of WorkloadTokenCommand (run by
// Options.RunCommand, without a shell). Surrounding white space is
// trimmed. Errors wrap ErrWorkloadToken and name the source.
func (c *Client) workloadToken(ctx context.Context) (string, error) {
	cfg := &c.cfg
	var tok []byte
	var err error
	source := "file " + cfg.WorkloadTokenFile
	if cfg.WorkloadTokenFile != "" {
		tok, err = safefile.ReadFile(cfg.WorkloadTokenFile, maxWorkloadToken, true)
	} else {
		source = "command " + strings.Join(cfg.WorkloadTokenCommand, " ")
		tok, err = c.opts.RunCommand(ctx, maxWorkloadToken, cfg.WorkloadTokenCommand[0], cfg.WorkloadTokenCommand[1:]...)
	}
	switch {
	case err != nil:
	case len(bytes.TrimSpace(tok)) == 0:
		err = errors.New("it is empty")
	case len(tok) > maxWorkloadToken:
		err = fmt.Errorf("it is over %d bytes", maxWorkloadToken)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrWorkloadToken, source, err)
	}
	s := string(bytes.TrimSpace(tok))
	c.opts.Secrets(s)
	return s, nil
}
