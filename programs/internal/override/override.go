package override

import (
	"fmt"
	"slices"
	"strings"

	"concbench/harness"
)

// Given sets *to to v if the flag name was given on the command line:
// bench's and the gate's flags override their profile's (or file's)
// fields one by one.
func Given[T any](set map[string]bool, name string, to *T, v T) {
	if set[name] {
		*to = v
	}
}

// Configs keeps the configurations named in list (comma-separated),
// by name or by model, in the order of the list; a name that is not in
// the experiment is looked up in harness.AllConfigs. A configuration named
// twice (halfsynchalfreactive, a model, includes
// halfsynchalfreactive/pooled) is kept once.
func Configs(have []harness.Config, list string) ([]harness.Config, error) {
	cs, err := From(list, have, harness.AllConfigs())
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return cs, nil
}

// From keeps the configurations named in list (comma-separated),
// by name or by model, in the order of the list, each looked up in the
// first of pools that has it; a configuration named twice is kept once.
func From(list string, pools ...[]harness.Config) ([]harness.Config, error) {
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
