package main

// The helpers below serve the commands of this package whose logic has
// not moved into programs/ yet (aarate, soak, theory, validate); the
// commands that moved use programs/internal/override's. Note: this file
// goes when they move (issue 42's other half); TestCommandImports lets
// it import loadgen until then.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"concbench/harness"
	"concbench/loadgen"
)

// relaxedLimits turn off every check of the load generator on its own
// health (--relax-load-checks).
var relaxedLimits = loadgen.Limits{MaxLagShare: 1, MaxBusy: 1, MaxRunQueue: 1, MaxSteal: 1, SendProcessAlpha: 1e-300}

// selectFrom keeps the configurations named in list (comma-separated),
// by name or by model, in the order of the list, each looked up in the
// first of pools that has it; a configuration named twice is kept once.
func selectFrom(list string, pools ...[]harness.Config) ([]harness.Config, error) {
	var out []harness.Config
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		found := false
		for _, pool := range pools {
			for _, c := range pool {
				if c.Name != want && c.Model != want {
					continue
				}
				found = true
				if !slices.ContainsFunc(out, func(o harness.Config) bool { return o.Name == c.Name }) {
					out = append(out, c)
				}
			}
			if found {
				break
			}
		}
		if !found {
			var names []string
			for _, pool := range pools {
				for _, c := range pool {
					if !slices.Contains(names, c.Name) {
						names = append(names, c.Name)
					}
				}
			}
			return nil, fmt.Errorf("--models: no configuration or model %q (accepted: %s, or a model name)", want, strings.Join(names, ", "))
		}
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", part)
		}
		out = append(out, v)
	}
	return out, nil
}

// pct is a of n in percent, 0 for n = 0.
func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}
