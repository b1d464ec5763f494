package registry_test

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"concbench/harness"
	"concbench/models"
	"concbench/models/netpoll"
	"concbench/models/registry"
)

// TestOneRow shows what adding a model takes: its package (here a
// test-only "echo" model that reuses netpoll's) and one row of the
// table. With the row alone, the model passes the conformance suite
// through the row's flags (TestConformance's runRows), is in the
// comparison's configurations (harness.Families) and every profile that
// takes them, sized by the rule, is the thread sweep's reference as its
// row says, and has a colour slot of its own (the palette grows: package
// plots, TestSlotColorsDistinct); the README's and design.md's model
// tables are checked against it (they fail until it has its rows).
func TestOneRow(t *testing.T) {
	row := registry.Model{
		Name: "echo", Summary: "a test-only model", Family: registry.FamilyOther, Color: nextColor(),
		Sizing:      registry.Sizing{Kind: registry.PoolRuntime},
		Configs:     []registry.Config{{Name: "echo"}},
		ThreadSweep: registry.SweepReference,
		Flags: func(*flag.FlagSet) registry.Start {
			return func(cfg models.Config) (models.Server, error) { return netpoll.Start(cfg, netpoll.Options{}) }
		},
	}
	saved := registry.Models
	registry.Models = append(slices.Clone(saved), row)
	t.Cleanup(func() { registry.Models = saved })

	m, ok := registry.Lookup("echo")
	if !ok {
		t.Fatal("the row is not in the table")
	}
	if m.Color != row.Color {
		t.Errorf("echo's colour slot %d, want its row's %d", m.Color, row.Color)
	}
	runRows(t, []registry.Model{m})

	if !slices.ContainsFunc(harness.Families(), func(c harness.Config) bool { return c.Name == "echo" && c.Sizing == harness.SizeRule }) {
		t.Errorf("harness.Families() = %+v, want echo sized by the rule", harness.Families())
	}
	e, _ := harness.Profile("default")
	e.ServerCPUs, e.LoadCPUs = "0-3", "4-7"
	e, err := e.WithDefaults().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if s := e.Sizes["echo/cpu"]; s.GOMAXPROCS != 4 || !strings.HasPrefix(s.Rule, "rule: 4 CPUs") {
		t.Errorf("echo under cpu on 4 CPUs: %+v", s)
	}
	for _, name := range []string{"load", "cores", "threads", "connections"} {
		p, err := harness.Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		p.ServerCPUs, p.LoadCPUs = "0-3", "4-7"
		p, err = p.WithDefaults().Resolve()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(p.Configs, func(c harness.Config) bool { return c.Model == "echo" }) {
			t.Errorf("profile %s has no echo configuration", name)
		}
	}
	if !slices.ContainsFunc(harness.ThreadsConfigs(4), func(c harness.Config) bool { return c.Name == "echo" && c.Pool == 0 }) {
		t.Error("the thread sweep has no echo reference sized by the rule")
	}
	if bad := tableMismatches(t, registry.Names()); len(bad) != len(modelTables) {
		t.Errorf("the model tables' check passes without echo's rows: %v", bad)
	}
}

// nextColor is the first colour slot no row has.
func nextColor() int {
	n := 0
	for _, m := range registry.Models {
		n = max(n, m.Color+1)
	}
	return n
}
