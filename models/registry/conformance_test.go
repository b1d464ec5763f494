package registry_test

import (
	"flag"
	"fmt"
	"slices"
	"testing"

	"concbench/internal/uring"
	"concbench/models"
	"concbench/models/frontend/frontendtest"
	"concbench/models/modeltest"
	"concbench/models/registry"
)

// TestConformance runs the shared conformance suite (models/modeltest)
// against every row of the model table, in every configuration the
// profiles run it in, started as serve starts it: through the row's own
// flags, parsed from the configuration's arguments (and the sizing rule's
// extra ones, Sizing.Args). A model's package keeps only the cases that
// go beyond its rows (other options, model-specific checks); a new row is
// covered here without a line of its own.
func TestConformance(t *testing.T) {
	runRows(t, registry.Models)
}

// runRows is TestConformance over rows (TestOneRow adds its own).
func runRows(t *testing.T, rows []registry.Model) {
	for _, m := range rows {
		configs := m.Configs
		if len(configs) == 0 {
			configs = []registry.Config{{Name: m.Name}}
		}
		for _, c := range configs {
			t.Run(c.Name, func(t *testing.T) {
				if m.Name == "proactor" {
					if err := uring.Available(); err != nil {
						t.Skip("io_uring unavailable: " + err.Error())
					}
				}
				modeltest.Run(t, rowStart(t, m, c))
			})
		}
	}
}

// rowStart returns the start function of configuration c of row m: the
// row's flags parsed from c's arguments, each start of a front end with
// a back end of its own (frontendtest.StartChain).
func rowStart(t *testing.T, m registry.Model, c registry.Config) modeltest.StartFunc {
	return func(cfg models.Config) (models.Server, error) {
		fs := flag.NewFlagSet(m.Name, flag.ContinueOnError)
		start := m.Flags(fs)
		args := c.Args
		if m.Sizing.Args != nil {
			args = slices.Concat(c.Args, m.Sizing.Args(c.Args, cfg.Threads))
		}
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%s: the row's flags refuse its arguments %q: %v", c.Name, args, err)
		}
		if m.Sizing.Kind == registry.PoolPerConn {
			cfg.Threads = 0 // a thread per connection: the suite opens hundreds
		}
		if !m.FrontEnd {
			return start(cfg)
		}
		return frontendtest.StartChain(cfg, func(backend string) (models.Server, error) {
			if err := fs.Set("backend", backend); err != nil {
				return nil, fmt.Errorf("%s: a front end without a --backend flag: %w", c.Name, err)
			}
			return start(cfg)
		})
	}
}
