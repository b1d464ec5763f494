package registry_test

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"concbench/harness"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/models/netpoll"
	"concbench/models/registry"
)

// TestOneRow shows what adding a model takes: its package (here a
// test-only "echo" model that reuses netpoll's) and one row of the
// table. With the row alone, the model passes the conformance suite
// through the row's start function, is in the comparison's
// configurations (harness.Families), and is sized by the rule.
func TestOneRow(t *testing.T) {
	row := registry.Model{
		Name: "echo", Summary: "a test-only model", Family: registry.FamilyOther, Color: 7,
		Sizing:  registry.Sizing{Kind: registry.PoolRuntime},
		Configs: []registry.Config{{Name: "echo"}},
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
	start := m.Flags(flag.NewFlagSet("echo", flag.ContinueOnError))
	modeltest.Run(t, func(cfg models.Config) (models.Server, error) { return start(cfg) })

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
}
