package sandbox

import "strings"

// denials are what programs print for an operation a sandbox refused:
// the errno names, their messages, and Node's and Python's forms.
var denials = []string{"EACCES", "EPERM", "permission denied", "operation not permitted", "PermissionError"}

// Explain returns the hint for a failure of a process confined by policy
// whose output or error text is text: that the sandbox may be why, and
// which policy to change. "" when text shows no denial.
func Explain(policy, text string) string {
	lower := strings.ToLower(text)
	for _, d := range denials {
		if strings.Contains(lower, strings.ToLower(d)) {
			return "the sandbox (policy " + policy + ") may be why: a hidden or read-only path, or a refused connect; " +
				"loosen the server's \"sandbox\" key (or the profile's clientServerSandbox / commandSandbox) if it needs more"
		}
	}
	return ""
}
