package harness

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the Defaults lines of docs/profiles.md from the profiles")

const profilesDoc = "../docs/profiles.md"

// defaultsPrefix starts a profile section's generated line.
const defaultsPrefix = "Defaults (`harness.ProfileDefaults`): "

// TestProfilesDocDefaults checks that every profile's section in
// docs/profiles.md has exactly one Defaults line and that it says what
// ProfileDefaults says: a changed default fails here until the docs
// follow (go test ./harness -run TestProfilesDocDefaults -update-docs
// rewrites the lines; the prose around them must not repeat the numbers).
func TestProfilesDocDefaults(t *testing.T) {
	b, err := os.ReadFile(profilesDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	section := ""
	seen := map[string]int{}
	for i, l := range lines {
		if name, ok := strings.CutPrefix(l, "## "); ok {
			section = strings.TrimSpace(name)
			continue
		}
		if !strings.HasPrefix(l, defaultsPrefix) {
			continue
		}
		seen[section]++
		want, err := ProfileDefaults(section)
		if err != nil {
			t.Errorf("%s:%d: a Defaults line in section %q, which is no profile: %v", profilesDoc, i+1, section, err)
			continue
		}
		want = defaultsPrefix + want + "."
		if l != want {
			if *updateDocs {
				lines[i] = want
				continue
			}
			t.Errorf("%s:%d: section %q says\n\t%s\nbut the profile's defaults are\n\t%s\n(-update-docs rewrites it)", profilesDoc, i+1, section, l, want)
		}
	}
	for _, name := range ProfileNames {
		if seen[name] != 1 {
			t.Errorf("%s: section %q has %d Defaults lines, want 1 (a line starting %q)", profilesDoc, name, seen[name], defaultsPrefix)
		}
	}
	if *updateDocs {
		if err := os.WriteFile(profilesDoc, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProfileDefaultsFollowTheProfile checks that the line changes when a
// default does: the test above is only as good as the line's coverage.
func TestProfileDefaultsFollowTheProfile(t *testing.T) {
	e, err := Profile("default")
	if err != nil {
		t.Fatal(err)
	}
	base := experimentDefaults(e)
	for name, change := range map[string]func(*Experiment){
		"repetitions": func(e *Experiment) { e.Repetitions++ },
		"warm-up":     func(e *Experiment) { e.Warmup *= 2 },
		"window":      func(e *Experiment) { e.Duration *= 2 },
		"equal load":  func(e *Experiment) { e.RatesFromSlowest = []float64{0.5} },
		"objective":   func(e *Experiment) { e.Workloads[0].SLO = &SLO{Bound: e.Workloads[0].SLO.Bound * 2} },
		"probes":      func(e *Experiment) { e.SLOProbes++ },
		"probe time":  func(e *Experiment) { e.SLODuration *= 2 },
		"mechanisms":  func(e *Experiment) { e.MechanismsDuration *= 2 },
		"budget":      func(e *Experiment) { e.Budget *= 2 },
		"twin":        func(e *Experiment) { e.Twin = nil },
		"workloads":   func(e *Experiment) { e.Workloads = e.Workloads[1:] },
	} {
		c, _ := Profile("default")
		change(&c)
		if experimentDefaults(c) == base {
			t.Errorf("changing the %s leaves the Defaults line as it was: %s", name, base)
		}
	}
}
