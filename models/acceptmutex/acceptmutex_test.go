package acceptmutex

import (
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

// TestConformance runs the suite in every accept mode (multi_accept
// changes only how many connections one event takes, which
// connio.AcceptUpTo's tests cover).
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{name: "accept=exclusive", opts: Options{Accept: Exclusive}},
		{name: "accept=mutex", opts: Options{Accept: Mutex}},
		{name: "accept=reuseport", opts: Options{Accept: ReusePort}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				return Start(cfg, tc.opts)
			})
		})
	}
}
