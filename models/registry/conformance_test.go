package registry_test

import (
	"flag"
	"testing"

	"concbench/internal/uring"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/models/netpoll"
	"concbench/models/registry"
	"concbench/wire"
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
// a back end of its own.
func rowStart(t *testing.T, m registry.Model, c registry.Config) modeltest.StartFunc {
	return func(cfg models.Config) (models.Server, error) {
		fs := flag.NewFlagSet(m.Name, flag.ContinueOnError)
		start := m.Flags(fs)
		args := c.Args
		if m.Sizing.Args != nil {
			args = append(args[:len(args):len(args)], m.Sizing.Args(c.Args, cfg.Threads)...)
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
		back, err := startBackend(cfg)
		if err != nil {
			return nil, err
		}
		if err := fs.Set("backend", back.Addr().String()); err != nil {
			back.Close()
			t.Fatalf("%s: a front end without a --backend flag: %v", c.Name, err)
		}
		front, err := start(cfg)
		if err != nil {
			back.Close()
			return nil, err
		}
		return &chain{Server: front, backend: back}, nil
	}
}

// startBackend starts a netpoll back end serving the binary protocol with
// cfg's service and limits.
func startBackend(cfg models.Config) (models.Server, error) {
	codec, err := wire.New("binary", cfg.Codec.Limits())
	if err != nil {
		return nil, err
	}
	return netpoll.Start(models.Config{Addr: "127.0.0.1:0", Codec: codec, Service: cfg.Service}, netpoll.Options{})
}

// chain is a front end with its back end: Close closes both, so that the
// suite's leak checks cover the pair.
type chain struct {
	models.Server
	backend models.Server
}

func (c *chain) Close() error {
	err := c.Server.Close()
	if berr := c.backend.Close(); err == nil {
		err = berr
	}
	return err
}
