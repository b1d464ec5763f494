package acceptmutex

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{name: "accept=exclusive", opts: Options{Accept: Exclusive}},
		{name: "accept=mutex", opts: Options{Accept: Mutex}},
		{name: "accept=reuseport", opts: Options{Accept: ReusePort}},
		{name: "accept=mutex/multi_accept", opts: Options{Accept: Mutex, MultiAccept: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				return Start(cfg, tc.opts)
			})
		})
	}
}
