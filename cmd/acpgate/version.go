package main

import (
	"runtime/debug"
)

// commit is the source revision, set at build time with -ldflags
// "-X main.commit=..." (make release stamps 12 hex digits, "-dirty" after
// them when the tree had changes).
var commit string

// versionLine is what --version prints: "acpgate VERSION (commit C)", C
// the stamped commit, else the revision the Go toolchain recorded in info
// (see vcsCommit).
func versionLine(version, commit string, info *debug.BuildInfo) string {
	if commit == "" {
		commit = vcsCommit(info)
	}
	return "acpgate " + version + " (commit " + commit + ")"
}

// vcsCommit is the revision in info (vcs.revision, 12 hex digits,
// "-dirty" after them when vcs.modified), or "unknown" (no info, or a
// build without VCS stamping: -buildvcs=false, no git).
func vcsCommit(info *debug.BuildInfo) string {
	var rev string
	var modified bool
	if info != nil {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case modified:
		return rev + "-dirty"
	}
	return rev
}

// buildInfo is the binary's build information, nil when it has none.
func buildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}
