package models_test

import (
	"strings"
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
)

// TestResolve: Resolve returns Validate's error, or the configuration with
// its defaults.
func TestResolve(t *testing.T) {
	base := modeltest.Config(t, "binary", 0, service.Config{NsPerIter: 1}) // one service, no calibration
	cfg := func(threads int) models.Config { c := base; c.Threads = threads; return c }
	if _, err := cfg(models.MaxThreads + 1).Resolve(4); err == nil || !strings.Contains(err.Error(), "threads") {
		t.Errorf("threads past MaxThreads: error %v, want one naming threads", err)
	}
	c, err := cfg(0).Resolve(4)
	if err != nil || c.Threads != 4 || c.MaxPendingOutput != models.DefaultMaxPendingOutput || c.HeaderTimeout != models.DefaultHeaderTimeout {
		t.Errorf("Resolve(4) of a valid config: %+v, %v; want 4 threads and the defaults", c, err)
	}
	if c, _ := cfg(2).Resolve(4); c.Threads != 2 {
		t.Errorf("Resolve(4) with 2 threads set: %d threads, want 2", c.Threads)
	}
}
