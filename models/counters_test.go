package models

import "testing"

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
