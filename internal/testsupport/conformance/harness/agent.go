package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/acpgate/acpgate/internal/base/agentproc"
)

// stopAgent closes acpgate's stdin (it then stops its servers and exits)
// and kills it if it has not exited within stopGrace.
func stopAgent(p *agentproc.Proc, log *slog.Logger) {
	p.Stdin.Close()
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.Exited():
	case <-timer.C:
		log.Error("acpgate did not exit after its stdin closed; killing it", "grace", stopGrace)
		_ = p.Cmd.Process.Kill()
		<-p.Exited()
	}
	p.Stdout.Close()
	if err := p.Err(); err != nil {
		log.Error("acpgate exited", "err", err)
	}
}

// jsonText is v as compact JSON.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("tool arguments: %w", err)
	}
	return string(b), nil
}
