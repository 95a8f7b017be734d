package setup

// Check, CheckAnthropic and Detect are check, checkAnthropic and detect,
// for the tests.
var (
	Check          = check
	CheckAnthropic = checkAnthropic
	Detect         = detect
)
