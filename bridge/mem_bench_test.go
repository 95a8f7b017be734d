package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// BenchmarkExecuteLargeResult runs a bridged tool whose result is one
// 15 MiB text (stdio test server) through the bridge's conversion and
// reports B/op, the peak heap growth and the peak RSS during the call:
//
//	go test -run '^$' -bench ExecuteLargeResult -benchtime 10x ./bridge/
func BenchmarkExecuteLargeResult(b *testing.B) {
	const size = 15 << 20
	tool, ok := session(b).Current().Lookup("mcp__srv__big")
	if !ok {
		b.Fatal("no tool mcp__srv__big")
	}
	args, _ := json.Marshal(map[string]any{"bytes": size})
	testbin.BenchPeak(b, size, func() (any, error) {
		res, err := tool.Execute(context.Background(), args, nil)
		if err == nil && res.IsError {
			err = fmt.Errorf("error result: %s", res.ForModel)
		}
		return res, err
	})
}
