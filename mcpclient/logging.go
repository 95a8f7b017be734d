package mcpclient

import (
	"context"
	"log/slog"
	"strings"
)

// demoteHandler turns every record into a debug record.
type demoteHandler struct{ h slog.Handler }

func (d demoteHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}
func (d demoteHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}
func (d demoteHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return demoteHandler{d.h.WithAttrs(as)}
}
func (d demoteHandler) WithGroup(name string) slog.Handler { return demoteHandler{d.h.WithGroup(name)} }

// mcpLogLevel maps an MCP logging level (RFC 5424 names) to slog.
func mcpLogLevel(level string) slog.Level {
	switch strings.ToLower(level) {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default: // error, critical, alert, emergency, unknown
		return slog.LevelError
	}
}

// serverLog writes a notifications/message from the server to the logger,
// through the server's log gate. It never reaches a model's context.
func (an *answerer) serverLog(params map[string]any) {
	level, _ := params["level"].(string)
	name, _ := params["logger"].(string)
	an.logs.serverLog(mcpLogLevel(level), level, name, params["data"])
}
