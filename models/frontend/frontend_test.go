package frontend

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/models/netpoll"
	"concbench/wire"
)

// chain is a front end with the back end it started (in process): Close
// closes both, so the conformance suite's leak checks cover the pair.
type chain struct {
	*Server
	backend models.Server
}

func (c *chain) Close() error {
	err := c.Server.Close()
	if berr := c.backend.Close(); err == nil {
		err = berr
	}
	return err
}

// startChain starts a netpoll back end serving the binary protocol with
// cfg's service and limits, and a front end in front of it.
func startChain(cfg models.Config, opts Options) (*chain, error) {
	codec, err := wire.New("binary", cfg.Codec.Limits())
	if err != nil {
		return nil, err
	}
	back, err := netpoll.Start(models.Config{Addr: "127.0.0.1:0", Codec: codec, Service: cfg.Service}, netpoll.Options{})
	if err != nil {
		return nil, err
	}
	opts.Backend = back.Addr().String()
	front, err := Start(cfg, opts)
	if err != nil {
		back.Close()
		return nil, err
	}
	return &chain{Server: front, backend: back}, nil
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{name: "handoff=bound/upstream=1", opts: Options{Handoff: Bound, UpstreamConns: 1}},
		{name: "handoff=perthread", opts: Options{Handoff: PerThread}},
		{name: "handoff=queue/upstream=2", opts: Options{Handoff: Queue, UpstreamConns: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				cfg.Threads = 0 // a thread per client connection: the suite opens hundreds
				return startChain(cfg, tc.opts)
			})
		})
	}
}
