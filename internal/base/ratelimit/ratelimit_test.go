package ratelimit_test

import (
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/base/ratelimit"
)

func TestWindow(t *testing.T) {
	r := ratelimit.New(3, time.Minute)
	t0 := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if !r.Allow(t0.Add(time.Duration(i) * time.Second)) {
			t.Fatalf("call %d refused", i)
		}
	}
	if r.Allow(t0.Add(30 * time.Second)) {
		t.Fatal("4th call within a minute allowed")
	}
	if !r.Allow(t0.Add(61 * time.Second)) {
		t.Fatal("call after the window refused")
	}
}
