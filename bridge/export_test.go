package bridge

import "strings"

// Normalize exposes normalize to the tests.
var Normalize = normalize

// CountMarkers returns how many frame markers text holds once normalised
// (forwards or backwards), and how many of them are end markers.
func CountMarkers(text string) (all, ends int) {
	norm := []byte(normalize(text))
	for _, m := range markerMatches(norm) {
		all++
		if strings.Contains(string(norm[m.start:m.end]), "end") {
			ends++
		}
	}
	return all, ends
}
