package leaderfollowers

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"concbench/internal/futex"
	"concbench/models/modeltest"

	"golang.org/x/sys/unix"
)

// futexWaitOn reports whether thread tid is blocked in FUTEX_WAIT on the
// word at addr, from /proc/self/task/<tid>/syscall ("nr arg1 arg2 …"; arg1
// is the futex address, arg2 the operation).
func futexWaitOn(tid int, addr uintptr) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return false
	}
	nr, err1 := strconv.ParseUint(f[0], 10, 64)
	uaddr, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	op, err3 := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
	const futexWaitPrivate = 0 | 128
	return err1 == nil && err2 == nil && err3 == nil &&
		nr == unix.SYS_FUTEX && uintptr(uaddr) == addr && op == futexWaitPrivate
}

// parkAddr returns the futex word a follower of p sleeps on: its own
// Parker's, or the pool's shared word in os order. Both futex types hold
// their word as their only non-empty field, so it is at the type's address.
func parkAddr(p *pool, m *member) uintptr {
	if p.q == nil { // os order
		return uintptr(unsafe.Pointer(&p.word))
	}
	return uintptr(unsafe.Pointer(&m.parker))
}

// testFollower is a locked OS thread that joins p as a follower. When
// promoted it reports its id on led, waits for its turn to end (handoff),
// promotes a successor and exits.
type testFollower struct {
	m       *member
	tid     int
	handoff chan struct{}
	result  chan joinResult
}

// startFollower starts a follower thread and waits until it is parked in
// the kernel on its futex word and counted in p's follower set, so that the
// order in which a test starts followers is the order in which they park.
func startFollower(t *testing.T, p *pool, m *member, led chan<- int) *testFollower {
	t.Helper()
	f := &testFollower{m: m, handoff: make(chan struct{}), result: make(chan joinResult, 1)}
	before := p.followers()
	tids := make(chan int)
	go func() {
		runtime.LockOSThread() // exits locked: the thread is destroyed
		tids <- unix.Gettid()
		res := p.join(m)
		f.result <- res
		if res != joinPromoted {
			return
		}
		led <- m.id
		<-f.handoff
		p.promote(m)
	}()
	f.tid = <-tids
	modeltest.WaitFor(t, fmt.Sprintf("follower %d is in the follower set", m.id), func() bool { return p.followers() == before+1 })
	addr := parkAddr(p, m)
	modeltest.WaitFor(t, fmt.Sprintf("follower %d (tid %d) sleeps in FUTEX_WAIT on %#x", m.id, f.tid, addr),
		func() bool { return futexWaitOn(f.tid, addr) })
	return f
}

// parkFollowers returns a pool of order whose leader is first (id -1),
// with a follower parked per nice value, in turn (ids 0, 1, …: see
// startFollower); the followers report each promotion on led.
func parkFollowers(t *testing.T, order Promotion, nice []int) (p *pool, first *member, fs []*testFollower, led chan int) {
	t.Helper()
	n := len(nice)
	p = newPool(order, n+1)
	first = &member{id: -1}
	if res := p.join(first); res != joinLeader {
		t.Fatalf("first join into an empty pool: %v, want joinLeader", res)
	}
	led = make(chan int, n)
	fs = make([]*testFollower, n)
	for i := range n {
		fs[i] = startFollower(t, p, &member{id: i, nice: nice[i]}, led)
	}
	return p, first, fs, led
}

// TestPromotionOrder parks followers in a known order with known
// priorities, then promotes one at a time and checks which thread each
// promotion made leader.
func TestPromotionOrder(t *testing.T) {
	tests := []struct {
		name  string
		order Promotion
		nice  []int // the followers' nice values, in the order they park
		want  []int // follower ids in the order they must be promoted
		// longest is how many of the promotions with a choice (all but
		// the last) promoted the follower that had waited longest.
		longest uint64
	}{
		{name: "lifo", order: LIFO, nice: []int{0, 0, 0, 0}, want: []int{3, 2, 1, 0}, longest: 0},
		{name: "fifo", order: FIFO, nice: []int{0, 0, 0, 0}, want: []int{0, 1, 2, 3}, longest: 3},
		{name: "priority", order: Priority, nice: []int{5, -3, 0, -3, 19, -20}, want: []int{5, 1, 3, 2, 0, 4}, longest: 1},
		{name: "priority-equal-is-fifo", order: Priority, nice: []int{7, 7, 7}, want: []int{0, 1, 2}, longest: 2},
		{name: "lifo-one", order: LIFO, nice: []int{0}, want: []int{0}, longest: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.nice)
			p, first, fs, led := parkFollowers(t, tc.order, tc.nice)
			// The first leader promotes; each promoted follower, when
			// told, promotes the next.
			if !p.promote(first) {
				t.Fatal("promote found no follower with all followers parked")
			}
			var got []int
			for k := range n {
				id := receive(t, led, fmt.Sprintf("promotion %d", k+1))
				got = append(got, id)
				if res := receive(t, fs[id].result, "the promoted follower's join"); res != joinPromoted {
					t.Fatalf("follower %d: join returned %v", id, res)
				}
				if left := p.followers(); left != n-k-1 {
					t.Fatalf("after promotion %d: %d followers left, want %d", k+1, left, n-k-1)
				}
				close(fs[id].handoff)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("promotion order %v, want %v (nice values in parking order %v)", got, tc.want, tc.nice)
			}
			modeltest.WaitFor(t, "the last promotion is made", func() bool { return !p.hasLeader() })
			if c := p.counts(); c.choices != uint64(n-1) || c.longest != tc.longest {
				t.Fatalf("promotions with a choice %d, of which the longest-waiting follower %d; want %d and %d", c.choices, c.longest, n-1, tc.longest)
			}
			// The last leader promoted with nobody parked: no leader now,
			// and the next thread to join leads at once.
			modeltest.WaitFor(t, "the last promotion leaves the pool without a leader", func() bool { return !p.hasLeader() })
			if res := p.join(&member{id: n}); res != joinLeader {
				t.Fatalf("join with no leader and no follower: %v, want joinLeader", res)
			}
			p.close()
		})
	}
}

// futexWakeOrder is the probe of the assumption TestPromotionOS rests on:
// that FUTEX_WAKE of one waiter on a word many threads wait on wakes the
// one that has waited longest. futex(2) promises no order; Linux queues
// the waiters of a futex that are not real-time in FIFO order (see the
// package documentation, "os"), and a kernel that does otherwise is not
// wrong. The probe measures it: k locked threads wait on one futex.Word,
// each asleep in the kernel on it (seen in /proc) before the next starts
// to wait; then each of k rounds posts one token on the word and wakes one
// waiter, and waits for the woken thread to say which it is. It returns
// the waiters' indices (their waiting order) in the order they woke, and
// how many waits returned without a token and waited again (a signal, a
// spurious wake-up): such a thread joined the queue's tail, so the order
// measured is not the kernel's alone and the probe is inconclusive.
func futexWakeOrder(t *testing.T, k int) (order []int, rewaits int) {
	t.Helper()
	var w futex.Word
	var again atomic.Int32
	woke := make(chan int, k)
	t.Cleanup(func() { // let every waiter go, even if the probe failed
		w.Add(uint32(k))
		w.Wake(k)
	})
	for i := range k {
		tids := make(chan int)
		go func() {
			runtime.LockOSThread() // exits locked: the thread is destroyed
			tids <- unix.Gettid()
			slept := false
			for {
				v := w.Load()
				if v > 0 {
					if w.CompareAndSwap(v, v-1) {
						break
					}
					continue
				}
				if slept {
					again.Add(1)
				}
				slept = true
				w.Wait(0)
			}
			woke <- i
		}()
		tid := <-tids
		modeltest.WaitFor(t, fmt.Sprintf("probe waiter %d (tid %d) sleeps in FUTEX_WAIT", i, tid),
			func() bool { return futexWaitOn(tid, uintptr(unsafe.Pointer(&w))) })
	}
	for round := range k {
		w.Add(1)
		w.Wake(1)
		order = append(order, receive(t, woke, fmt.Sprintf("the probe's wake-up %d of %d", round+1, k)))
	}
	return order, int(again.Load())
}

// TestPromotionOS parks followers on the shared word, one after another,
// and checks that each promotion makes exactly one of them leader and
// every follower is promoted once; and, when no follower was woken without
// a grant to take (such a follower waits again at the futex queue's tail),
// that the kernel woke them in the order they parked, the longest-waiting
// first, which the pool's counters must say too.
//
// That order is an assumption about the kernel, not a promise of
// futex(2): the test measures it first (futexWakeOrder) and is skipped,
// with the order measured, on a kernel that does not wake the longest
// waiter first; where it does, the test is the check it always was.
func TestPromotionOS(t *testing.T) {
	const n = 5
	fifo := []int{0, 1, 2, 3, 4} // the parking order
	var order []int
	for try := 1; ; try++ {
		var rewaits int
		order, rewaits = futexWakeOrder(t, n)
		if rewaits == 0 {
			break
		}
		if try == 3 {
			t.Skipf("futex wake-order probe inconclusive: %d of its waits returned without a wake-up and waited again, in each of %d tries; the kernel's order is not measured, so the os order's check has nothing to rest on", rewaits, try)
		}
	}
	if !slices.Equal(order, fifo) {
		t.Skipf("this kernel's FUTEX_WAKE on a shared word woke waiters in the order %v, not the longest waiter first %v: the os order's check assumes the latter (futex(2) promises no order)", order, fifo)
	}
	t.Logf("futex wake-order probe: this kernel woke the waiters of a shared word longest-waiting first (%v)", order)

	p, first, fs, led := parkFollowers(t, OS, make([]int, n))
	if !p.promote(first) {
		t.Fatal("promote found no follower")
	}
	seen := make(map[int]bool)
	var got []int
	for k := range n {
		id := receive(t, led, fmt.Sprintf("promotion %d", k+1))
		got = append(got, id)
		if seen[id] {
			t.Fatalf("follower %d promoted twice", id)
		}
		seen[id] = true
		if left := p.followers(); left != n-k-1 {
			t.Fatalf("after promotion %d: %d followers still waiting, want %d (one leader per promotion)", k+1, left, n-k-1)
		}
		// Every follower not yet promoted is still waiting (or, if the
		// kernel woke it without a grant, goes back to sleep).
		for _, f := range fs {
			if !seen[f.m.id] {
				select {
				case res := <-f.result:
					t.Fatalf("follower %d left join (%v) without being promoted", f.m.id, res)
				default:
				}
			}
		}
		close(fs[id].handoff)
	}
	modeltest.WaitFor(t, "the last promotion leaves the pool without a leader", func() bool { return !p.hasLeader() })
	c := p.counts()
	if c.choices != n-1 {
		t.Errorf("promotions with a choice %d, want %d", c.choices, n-1)
	}
	if c.rewaits == 0 {
		if !slices.Equal(got, fifo) {
			t.Errorf("os order woke %v, want the parking order %v (no follower waited twice; the probe found this kernel FIFO)", got, fifo)
		}
		if c.longest != c.choices {
			t.Errorf("promoted the longest-waiting follower %d times of %d", c.longest, c.choices)
		}
	} else {
		t.Logf("%d wake-ups without a grant: the kernel's order %v is not the parking order's test", c.rewaits, got)
	}
	p.close()
}

// TestPromotionOSVacant checks what sets os-vacant apart from os: its
// promotion leaves the role vacant, and a thread that joins before the
// woken follower takes it (counted as a vacancy rejoin), where os reserves
// the role for the follower the kernel wakes. The follower is one as
// promote sees it (counted as waiting, with no thread), so that no woken
// follower can race the rejoin.
func TestPromotionOSVacant(t *testing.T) {
	for _, order := range []Promotion{OS, OSVacant} {
		t.Run("promotion="+order.String(), func(t *testing.T) {
			p := newPool(order, 2)
			leader := &member{id: 0}
			if res := p.join(leader); res != joinLeader {
				t.Fatalf("first join: %v, want joinLeader", res)
			}
			p.mu.Lock()
			p.waiting = 1
			p.mu.Unlock()
			if !p.promote(leader) {
				t.Fatal("promote found no follower with one waiting")
			}
			if order == OS {
				if !p.hasLeader() {
					t.Fatal("os: the promotion left the role vacant; it must reserve it for the woken follower")
				}
				return // a join now would wait as a follower
			}
			if p.hasLeader() {
				t.Fatal("os-vacant: the promotion reserved the role; it must leave it vacant")
			}
			if res := p.join(leader); res != joinLeader {
				t.Fatalf("os-vacant: a rejoin into the vacant role: %v, want joinLeader", res)
			}
			if c := p.counts(); c.rejoins != 1 {
				t.Fatalf("os-vacant: %d vacancy rejoins counted, want 1", c.rejoins)
			}
		})
	}
}

// TestPromotionOSVacantFollowers parks followers in os-vacant order and
// has each promoted one promote the next, the old leader never rejoining:
// every promotion must make exactly one waiting follower leader, each
// follower once, and count no vacancy rejoin.
func TestPromotionOSVacantFollowers(t *testing.T) {
	const n = 4
	p, first, fs, led := parkFollowers(t, OSVacant, make([]int, n))
	if !p.promote(first) {
		t.Fatal("promote found no follower")
	}
	seen := make(map[int]bool)
	for k := range n {
		id := receive(t, led, fmt.Sprintf("promotion %d", k+1))
		if seen[id] {
			t.Fatalf("follower %d promoted twice", id)
		}
		seen[id] = true
		if res := receive(t, fs[id].result, "the promoted follower's join"); res != joinPromoted {
			t.Fatalf("follower %d: join returned %v", id, res)
		}
		if left := p.followers(); left != n-k-1 {
			t.Fatalf("after promotion %d: %d followers still waiting, want %d", k+1, left, n-k-1)
		}
		close(fs[id].handoff)
	}
	modeltest.WaitFor(t, "the last promotion leaves the pool without a leader", func() bool { return !p.hasLeader() })
	if c := p.counts(); c.choices != n-1 || c.rejoins != 0 {
		t.Errorf("promotions with a choice %d, vacancy rejoins %d; want %d and 0", c.choices, c.rejoins, n-1)
	}
	p.close()
}

// TestPoolCloseWakesFollowers parks followers, closes the pool and checks
// that each leaves join with joinClosed, and that later joins do too.
func TestPoolCloseWakesFollowers(t *testing.T) {
	for _, order := range []Promotion{LIFO, FIFO, Priority, OS, OSVacant} {
		t.Run("promotion="+order.String(), func(t *testing.T) {
			const n = 3
			p, _, fs, _ := parkFollowers(t, order, make([]int, n))
			p.close()
			for _, f := range fs {
				if res := receive(t, f.result, "a follower's join after close"); res != joinClosed {
					t.Errorf("follower %d: join returned %v after close, want joinClosed", f.m.id, res)
				}
			}
			if res := p.join(&member{id: n}); res != joinClosed {
				t.Errorf("join after close: %v, want joinClosed", res)
			}
			p.close() // idempotent
		})
	}
}

// TestPoolHandOffStress runs locked threads through many leadership turns
// with no server around them. Each leader holds the role for a random while
// (standing in for its wait on the handle set), checks that it is alone,
// bumps a counter that only the leader writes (so the race detector checks
// that the hand-off orders these writes), promotes, processes for a random
// while and rejoins. The random lengths make threads decide to park while
// a promotion is under way, and find no follower or no leader, in every
// combination. A lost wake-up would leave the pool without a leader while
// threads are parked, and hang the test.
func TestPoolHandOffStress(t *testing.T) {
	const threads, turns = 4, 20000
	// Every thread runs Go code between its futex calls: give each a P, so
	// that the Go scheduler does not serialize them (a thread waiting for a
	// P cannot race anyone).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + 1))
	for _, order := range []Promotion{LIFO, FIFO, Priority, OS, OSVacant} {
		t.Run("promotion="+order.String(), func(t *testing.T) {
			p := newPool(order, threads)
			var chk leaderCheck
			count := 0 // written only by the leader of the moment
			var promoted atomic.Uint64
			sink := make([]uint32, threads) // keeps the spins from being optimized away
			var wg sync.WaitGroup
			for i := range threads {
				wg.Go(func() {
					runtime.LockOSThread()
					m := &member{id: i, nice: i % 2}
					x := uint32(i)*0x9e3779b9 + 1
					spin := func() {
						x ^= x << 13
						x ^= x >> 17
						x ^= x << 5
						y := x
						for range x % 4000 {
							y = y*31 + 7
						}
						sink[i] = y
					}
					for res := p.join(m); res != joinClosed; res = p.join(m) {
						if res == joinPromoted {
							promoted.Add(1)
						}
						chk.begin()
						spin() // "waiting for an event"
						count++
						last := count >= turns
						chk.end()
						if last {
							p.close()
							return
						}
						p.promote(m)
						spin() // processing
					}
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			// A hang is no progress for 30 s, not a slow run: on a loaded
			// machine under -race the turns may take minutes.
			tick := time.NewTicker(30 * time.Second)
			defer tick.Stop()
			for last := chk.turns.Load(); ; {
				select {
				case <-done:
				case <-tick.C:
					if now := chk.turns.Load(); now != last {
						last = now
						continue
					}
					t.Fatalf("hang: %d followers, leader %v, no turn in 30 s after %d (lost wake-up?)", p.followers(), p.hasLeader(), last)
				}
				break
			}
			if v := chk.violations.Load(); v != 0 {
				t.Fatalf("%d turns began while another thread led (max %d at once)", v, chk.maxActing.Load())
			}
			if got := chk.turns.Load(); got != turns {
				t.Fatalf("%d turns, want %d", got, turns)
			}
			t.Logf("%d turns, %d of them by promotion", turns, promoted.Load())
		})
	}
}

// TestFollowerQueues checks the three follower sets directly, including a
// wrap-around and a growth of the FIFO ring.
func TestFollowerQueues(t *testing.T) {
	mk := func(nice ...int) []*member {
		ms := make([]*member, len(nice))
		for i, n := range nice {
			ms[i] = &member{id: i, nice: n, seq: uint64(i + 1)}
		}
		return ms
	}
	ids := func(q followerQueue) []int {
		var out []int
		for m := q.pop(); m != nil; m = q.pop() {
			out = append(out, m.id)
		}
		return out
	}
	tests := []struct {
		name string
		q    followerQueue
		nice []int
		want []int
	}{
		{name: "stack", q: &stack{}, nice: []int{0, 0, 0}, want: []int{2, 1, 0}},
		{name: "ring", q: &ring{buf: make([]*member, 3)}, nice: []int{0, 0, 0}, want: []int{0, 1, 2}},
		{name: "ring-grows", q: &ring{buf: make([]*member, 2)}, nice: []int{0, 0, 0, 0, 0}, want: []int{0, 1, 2, 3, 4}},
		{name: "heap", q: &prioHeap{}, nice: []int{3, -1, 3, -7, 0}, want: []int{3, 1, 4, 0, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range mk(tc.nice...) {
				tc.q.push(m)
			}
			if got := tc.q.len(); got != len(tc.nice) {
				t.Fatalf("len %d, want %d", got, len(tc.nice))
			}
			if got := ids(tc.q); !slices.Equal(got, tc.want) {
				t.Fatalf("pop order %v, want %v", got, tc.want)
			}
			if tc.q.pop() != nil || tc.q.len() != 0 {
				t.Fatal("queue not empty after popping everything")
			}
		})
	}
	// Interleaved pushes and pops move the ring's head around its buffer.
	q := &ring{buf: make([]*member, 2)}
	ms := mk(0, 0, 0, 0)
	q.push(ms[0])
	q.push(ms[1])
	if q.pop() != ms[0] {
		t.Fatal("ring: first pop")
	}
	q.push(ms[2]) // wraps
	q.push(ms[3]) // grows from a wrapped state
	if got := ids(q); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("ring after wrap and growth: %v, want [1 2 3]", got)
	}
}

func TestPromoteByNonLeaderPanics(t *testing.T) {
	p := newPool(LIFO, 2)
	leader, other := &member{id: 0}, &member{id: 1}
	p.join(leader)
	defer func() {
		if recover() == nil {
			t.Fatal("promote by a thread that is not the leader did not panic")
		}
	}()
	p.promote(other)
}
