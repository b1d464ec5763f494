package leaderfollowers

import "sync/atomic"

// checkLeaders turns on the leader check. Only this package's tests set it
// (see leader_check_test.go), so a production build pays one predictable
// branch per leadership turn and no shared cache line.
var checkLeaders = false

// leaderCheck counts the threads that are acting as leader: from the moment
// a thread holds the role (join returned) until it gives it up (just before
// it promotes a successor), which spans its wait on the handle set. The
// pattern promises that this is never more than one.
type leaderCheck struct {
	acting     atomic.Int32
	turns      atomic.Uint64 // leadership turns begun
	violations atomic.Uint64 // turns begun while another thread was acting as leader
	maxActing  atomic.Int32  // the most leaders seen at once
}

// begin records that the calling thread starts acting as leader.
func (c *leaderCheck) begin() {
	n := c.acting.Add(1)
	c.turns.Add(1)
	if n > 1 {
		c.violations.Add(1)
	}
	for {
		m := c.maxActing.Load()
		if n <= m || c.maxActing.CompareAndSwap(m, n) {
			return
		}
	}
}

// end records that the calling thread stops acting as leader.
func (c *leaderCheck) end() { c.acting.Add(-1) }
