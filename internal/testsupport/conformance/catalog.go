package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

// catalog is what the suite lists: its client scenarios and its
// requirement sets.
type catalog struct {
	// all is every client scenario, in the suite's order; tags its tags
	// (the revisions it applies to, or "extension"), by name.
	all  []listedScenario
	tags map[string]string
	// sets are the requirement sets, by revision.
	sets map[string]requirementSet
}

// listedScenario is one client scenario of `list --client`.
type listedScenario struct{ name, tags string }

// requirementSet is the client side of one requirement set.
type requirementSet struct {
	// required are the scenarios it scores; notScored those it runs
	// without scoring, with the reason (extension, added-after-release,
	// pending).
	required  []string
	notScored map[string]string
}

// scenarios are the set's scenarios, scored then not scored.
func (s requirementSet) scenarios() []string {
	out := slices.Clone(s.required)
	for name := range s.notScored {
		out = append(out, name)
	}
	slices.Sort(out[len(s.required):])
	return out
}

// catalog lists the suite's client scenarios (`list --client`) and its
// requirement sets (`list --client --requirements 2025-11-25,2026-07-28`).
func (s suiteRun) catalog(ctx context.Context) (catalog, error) {
	all, err := s.list(ctx, "--client")
	if err != nil {
		return catalog{}, err
	}
	sets, err := s.list(ctx, "--client", "--requirements", Set20251125+","+Set20260728)
	if err != nil {
		return catalog{}, err
	}
	cat := catalog{all: parseClientList(all), tags: map[string]string{}, sets: parseRequirementSets(sets)}
	for _, sc := range cat.all {
		cat.tags[sc.name] = sc.tags
	}
	for _, rev := range []string{Set20251125, Set20260728} {
		if len(cat.sets[rev].required) == 0 {
			return catalog{}, fmt.Errorf("conformance list --requirements %s: no client scenarios in the output", rev)
		}
	}
	if len(cat.all) == 0 {
		return catalog{}, fmt.Errorf("conformance list --client: no client scenarios in the output")
	}
	return cat, nil
}

// list runs `list <args>` and returns its output.
func (s suiteRun) list(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.node, append([]string{s.suite, "list"}, args...)...)
	cmd.Dir = s.opts.Dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("conformance list %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out.String(), nil
}

// The lines of the suite's list output (listing in its src/index.ts).
var (
	listHeading  = regexp.MustCompile(`^\S.*:$`)                       // "Client scenarios (test against a client):"
	listItem     = regexp.MustCompile(`^  - (\S+)(?: \[([^\]]*)\])?$`) // "  - auth/dpop [extension]"
	setHeading   = regexp.MustCompile(`^Required for (\S+) \(`)        // "Required for 2026-07-28 (69 scenarios, ...):"
	reasonLine   = regexp.MustCompile(`^  (\S+) \(\d+\):$`)            // "  extension (6):"
	notScoredRow = regexp.MustCompile(`^    - (\S+) \[(\w+)\]$`)       // "    - auth/dpop [client]"
)

// parseClientList reads the client scenarios of `list --client`.
func parseClientList(out string) []listedScenario {
	var list []listedScenario
	inClient := false
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if listHeading.MatchString(line) {
			inClient = strings.HasPrefix(line, "Client scenarios")
			continue
		}
		if m := listItem.FindStringSubmatch(line); m != nil && inClient {
			list = append(list, listedScenario{name: m[1], tags: m[2]})
		}
	}
	return list
}

// parseRequirementSets reads the client side of the requirement sets of
// `list --client --requirements A,B`, by revision.
func parseRequirementSets(out string) map[string]requirementSet {
	sets := map[string]requirementSet{}
	var rev, section, reason string
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if m := setHeading.FindStringSubmatch(line); m != nil {
			rev, section = m[1], ""
			sets[rev] = requirementSet{notScored: map[string]string{}}
			continue
		}
		if rev == "" {
			continue
		}
		set := sets[rev]
		switch {
		case listHeading.MatchString(line):
			section, reason = line, ""
		case strings.HasPrefix(section, "Client scenarios"):
			if m := listItem.FindStringSubmatch(line); m != nil {
				set.required = append(set.required, m[1])
			}
		case strings.HasPrefix(section, "Run and reported"):
			if m := reasonLine.FindStringSubmatch(line); m != nil {
				reason = m[1]
			} else if m := notScoredRow.FindStringSubmatch(line); m != nil && m[2] == "client" {
				set.notScored[m[1]] = reason
			}
		}
		sets[rev] = set
	}
	return sets
}
