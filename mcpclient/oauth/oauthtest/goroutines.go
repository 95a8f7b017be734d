package oauthtest

import (
	"runtime"
	"strings"
)

// FlightGoroutines counts the goroutines of this process that run an
// oauth.Client's token flight or wait for one (by their stacks): 0 once
// every flight has ended and no request waits for a token.
func FlightGoroutines() int {
	// The functions of package oauth in which a goroutine runs a token
	// flight or waits for one.
	frames := []string{"mcpclient/oauth.(*Client).launch.func", "mcpclient/oauth.(*Client).fly("}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		for _, f := range frames {
			if strings.Contains(g, f) {
				count++
				break
			}
		}
	}
	return count
}
