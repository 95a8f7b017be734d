package conformance

// ExpectedFailures is the one table of the pinned suite's client scenarios
// that do not pass against acpgate, each with the reason (README.md names
// them). The conformance test fails when a scenario fails without being
// listed here and when a listed one passes: when a feature lands, remove
// its scenarios here. A fresh map on each call.
func ExpectedFailures() map[string]string {
	return map[string]string{}
}
