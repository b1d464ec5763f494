package models

import (
	"strings"
	"testing"

	"concbench/service"
	"concbench/wire"
)

// TestOwnerShardReportsAccepted checks that ThreadStats.Accepted is the
// accepted connections of a thread that owns them, and 0 for a thread
// that accepts for a pool, while both count in ConnsAccepted.
func TestOwnerShardReportsAccepted(t *testing.T) {
	var c Counters
	owner, pool := c.NewOwnerShard("worker"), c.NewThreadShard("pool")
	for range 3 {
		owner.AddAccepted()
	}
	pool.AddAccepted()
	owner.AddRequests(7)
	var st Stats
	c.Stats(&st)
	if len(st.PerThread) != 2 || st.PerThread[0].Accepted != 3 || st.PerThread[0].Requests != 7 || st.PerThread[1].Accepted != 0 {
		t.Fatalf("per thread %+v; want the owner's 3 accepted and 7 requests, the pool thread's 0 accepted", st.PerThread)
	}
	if st.ConnsAccepted != 4 {
		t.Errorf("conns accepted %d, want 4", st.ConnsAccepted)
	}
}

// TestResolve: Resolve returns Validate's error, or the configuration with
// its defaults.
func TestResolve(t *testing.T) {
	codec, err := wire.New("binary", wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Config{Codec: codec, Service: svc, Threads: MaxThreads + 1}).Resolve(4); err == nil || !strings.Contains(err.Error(), "threads") {
		t.Errorf("threads past MaxThreads: error %v, want one naming threads", err)
	}
	c, err := Config{Codec: codec, Service: svc}.Resolve(4)
	if err != nil || c.Threads != 4 || c.MaxPendingOutput != DefaultMaxPendingOutput || c.HeaderTimeout != DefaultHeaderTimeout {
		t.Errorf("Resolve(4) of a valid config: %+v, %v; want 4 threads and the defaults", c, err)
	}
	if c, _ := (Config{Codec: codec, Service: svc, Threads: 2}).Resolve(4); c.Threads != 2 {
		t.Errorf("Resolve(4) with 2 threads set: %d threads, want 2", c.Threads)
	}
}
