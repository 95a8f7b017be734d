package main

import (
	"runtime/debug"
	"testing"
)

// TestVersionLine: the stamped commit wins; else the toolchain's
// vcs.revision, shortened, marked when the tree was modified; else
// "unknown".
func TestVersionLine(t *testing.T) {
	t.Parallel()
	vcs := func(kv ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{}
		for i := 0; i < len(kv); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return info
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		commit string
		info   *debug.BuildInfo
		want   string
	}{
		{"abc123456789", vcs("vcs.revision", rev), "acpgate 1.2.3 (commit abc123456789)"},
		{"", vcs("vcs.revision", rev, "vcs.modified", "false"), "acpgate 1.2.3 (commit 0123456789ab)"},
		{"", vcs("vcs.modified", "true", "vcs.revision", rev), "acpgate 1.2.3 (commit 0123456789ab-dirty)"},
		{"", vcs("vcs.revision", "abc"), "acpgate 1.2.3 (commit abc)"},
		{"", vcs("-buildmode", "exe"), "acpgate 1.2.3 (commit unknown)"},
		{"", nil, "acpgate 1.2.3 (commit unknown)"},
	} {
		if got := versionLine("1.2.3", tc.commit, tc.info); got != tc.want {
			t.Errorf("versionLine(%q, %v) = %q, want %q", tc.commit, tc.info, got, tc.want)
		}
	}
}
