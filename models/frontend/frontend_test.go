package frontend

import (
	"testing"

	"concbench/models"
	"concbench/models/frontend/frontendtest"
	"concbench/models/modeltest"
)

// startChain starts a front end with opts in front of a netpoll back end
// of its own (frontendtest.StartChain).
func startChain(cfg models.Config, opts Options) (*frontendtest.Chain, error) {
	return frontendtest.StartChain(cfg, func(backend string) (models.Server, error) {
		opts.Backend = backend
		return Start(cfg, opts)
	})
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
