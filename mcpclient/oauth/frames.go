package oauth

import (
	"reflect"
	"runtime"
)

// FlightFrames names the functions in which a goroutine of this package
// runs a token flight or waits for one, as a goroutine's stack prints
// them: for leak checks (oauthtest.FlightGoroutines). The names are taken
// from the functions themselves, so a rename cannot leave them stale.
func FlightFrames() []string {
	return []string{funcName((*Client).launch) + ".func", funcName((*Client).fly) + "("}
}

// funcName is the full name of function f.
func funcName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}
