package session_test

import (
	"testing"

	"github.com/acpgate/acpgate/session"
)

// BenchmarkAppendSync is what the Runner's sink pays to save one completed
// tool call: an Append and a synchronous fdatasync (sync=each, the old
// way), or an Append and a background one (sync=soon).
func BenchmarkAppendSync(b *testing.B) {
	rec := map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call_1", "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "hello"}}}}
	for _, mode := range []string{"each", "soon"} {
		b.Run("sync="+mode, func(b *testing.B) {
			s, err := session.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ss, err := s.Create("bench", "/")
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			for b.Loop() {
				if err := ss.Append("update", rec); err != nil {
					b.Fatal(err)
				}
				if mode == "each" {
					err = ss.Sync()
				} else {
					ss.SyncSoon()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
