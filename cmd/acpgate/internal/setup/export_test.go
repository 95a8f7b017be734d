package setup

// Check and Detect are check and detect, for the tests.
var (
	Check  = check
	Detect = detect
)
