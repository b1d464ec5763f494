package activeobject

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

func TestConformance(t *testing.T) {
	tests := []struct {
		name    string
		threads int // I/O threads; 0 keeps the suite's setting (4)
		opts    Options
	}{
		// The defaults: TestConformance of models/registry, through the row.
		{name: "threads=1", threads: 1, opts: Options{}},
		{name: "objects=1", opts: Options{Objects: 1}},
		// Tiny bounds: enqueuers block on full queues, connections stop at
		// one or two requests in flight.
		{name: "objects=3/queue=2/inflight=2", opts: Options{Objects: 3, QueueCapacity: 2, MaxInFlight: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				if tc.threads != 0 {
					cfg.Threads = tc.threads
				}
				return Start(cfg, tc.opts)
			})
		})
	}
}
