package leaderfollowers

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"concbench/internal/sysstat"
)

// BenchmarkPromotion measures one leadership hand-off between locked OS
// threads: the leader waits until every other thread is parked, promotes a
// follower and rejoins, parking itself because the role is taken; the
// promoted thread wakes, counts the turn and does the same. No handle set is involved, so an op is the pure
// cost of promote + wake-up + park (ns/op), and ctxsw/op is the process's
// voluntary plus involuntary context switches per hand-off (getrusage). In
// priority order all threads have the same nice value here (none is
// applied), so it measures the heap's cost, not the scheduler's.
func BenchmarkPromotion(b *testing.B) {
	for _, order := range []Promotion{LIFO, FIFO, Priority, OS, OSVacant} {
		for _, threads := range []int{2, 4} {
			b.Run(fmt.Sprintf("order=%s/threads=%d", order, threads), func(b *testing.B) {
				benchHandOff(b, order, threads)
			})
		}
	}
}

func benchHandOff(b *testing.B, order Promotion, threads int) {
	b.ReportAllocs()
	p := newPool(order, threads)
	// The benchmark's goroutine leads first, until every thread is parked as
	// a follower; then its promotion starts the chain of hand-offs.
	first := &member{id: -1}
	p.join(first)
	turns := 0 // written only by the leader of the moment
	var wg sync.WaitGroup
	for i := range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			m := &member{id: i}
			for res := p.join(m); res != joinClosed; res = p.join(m) {
				turns++
				if turns >= b.N {
					p.close()
					return
				}
				// Stand-in for the wait for an event: until the previous
				// leader has parked, so that every promotion is a hand-off
				// (plain loads; a locked thread must not Gosched).
				for p.followers() < threads-1 {
				}
				p.promote(m)
			}
		})
	}
	for p.followers() < threads {
		runtime.Gosched()
	}
	before, err := sysstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	p.promote(first)
	wg.Wait()
	b.StopTimer()
	after, err := sysstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	sw := (after.Voluntary - before.Voluntary) + (after.Involuntary - before.Involuntary)
	b.ReportMetric(float64(sw)/float64(b.N), "ctxsw/op")
}
