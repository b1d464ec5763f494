package activeobject

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestTotalCountsEveryPart drives the interleaving that made a Total
// return part of the money (seen as the conformance case LedgerLimits
// failing with "deposit up to the limit: status overflow, want ok": a
// Total one shard short made the test deposit more than the ledger had
// room for). Each object contributes its part of a snapshot on its own
// scheduler thread; the part added first must not be the only one in the
// total when its contributor happens to count last.
//
// The contributed hook holds the first contributor right after its part
// is added; the test then waits, with a Balance on each other object,
// until every other object has contributed too (a scheduler runs its
// queue in order, and each other object's marker and start were queued
// before the Balance), and only then lets the first one go on. Before the
// fix the first contributor counted last and completed the Total with
// its own part alone, every time.
func TestTotalCountsEveryPart(t *testing.T) {
	eachObjectCount(t, func(t *testing.T, objects int) {
		const accounts, initial = 64, 1000
		var first atomic.Bool
		held := make(chan int, 1)
		release := make(chan struct{})
		var releaseOnce sync.Once
		hook := func(object int) {
			if first.CompareAndSwap(false, true) {
				held <- object
				<-release
			}
		}
		_, p := startProxy(t, accounts, initial, Options{Objects: objects, contributed: hook})
		// Cleanups run last first: the held scheduler is let go before
		// the server closes, even if the test fails.
		t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

		total := p.Total()
		x := within(t, "the first part contributed", held)
		for i := range objects {
			if i == x {
				continue
			}
			acct, _ := shardRange(i, objects, accounts)
			await(t, "a balance on another object", p.Balance(acct))
		}
		releaseOnce.Do(func() { close(release) })
		await(t, "the total", total)
		if total.Err() != nil || total.Value() != accounts*initial {
			t.Fatalf("total: %d, %v; want %d (every object's part)", total.Value(), total.Err(), accounts*initial)
		}
	})
}
