package mcpclient_test

import (
	"context"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// BenchmarkCallToolLarge calls a tool whose result is one 15 MiB text
// over stdio and reports, besides B/op, the peak heap growth and the peak
// RSS during the call, in MB and as a multiple of the result's size:
//
//	go test -run '^$' -bench CallToolLarge -benchtime 10x ./mcpclient/
func BenchmarkCallToolLarge(b *testing.B) {
	const size = 15 << 20
	m, err := mcpclient.New([]mcpclient.ServerSpec{{Name: "s", Command: serverBin, CallsPerMinute: mcpclient.Unlimited}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"bytes": size}
	testbin.BenchPeak(b, size, func() (any, error) { return m.CallTool(context.Background(), "s", "big", args) })
}
