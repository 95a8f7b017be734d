package conformance

// ExpectedFailures is the one table of what does not pass against acpgate
// yet, by set (see Expected for the keys), each with the reason. The
// conformance test fails when something fails without being listed here
// and when a listed entry passes: when a feature lands, remove its
// entries. docs/conformance.md has the results and what each needs.
// Both requirement sets pass whole, their extensions included; what is
// left is in no requirement set. A fresh map on each call.
func ExpectedFailures() Expected {
	return Expected{
		Set20251125: {},
		Set20260728: {},
		SetOther:    {},
	}
}
