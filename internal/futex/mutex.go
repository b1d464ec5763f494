package futex

import (
	"sync/atomic"
	"time"
)

// spinTries is how many times Mutex.Lock re-reads the lock word before it
// sleeps in the kernel. Critical sections in this project are short (a
// ledger update, a queue push), far shorter than a futex round trip (a
// sleep and a wake-up in the kernel), so a short spin avoids most sleeps.
//
// Note: the spin only loads the word; it must not call runtime.Gosched. On a
// goroutine locked to its thread, Gosched hands the P to another thread and
// back: context switches and many times an uncontended lock's cost per call
// (docs/findings.md).
const spinTries = 200

// Mutex is a mutual-exclusion lock whose waiters sleep on a futex word, so a
// locked OS thread that blocks on it stays in the kernel instead of handing
// its goroutine to the Go scheduler. It follows Drepper's three-state design
// ("Futexes Are Tricky", mutex 2): 0 unlocked, 1 locked, 2 locked with
// possible sleepers. The zero value is unlocked.
type Mutex struct {
	_ noCopy
	s atomic.Uint32
}

// Lock acquires m, sleeping in the kernel if it is held.
func (m *Mutex) Lock() {
	if m.s.CompareAndSwap(0, 1) {
		return
	}
	for range spinTries {
		if m.s.Load() == 0 && m.s.CompareAndSwap(0, 1) {
			return
		}
	}
	// Mark contended; whoever sees the lock free after the swap owns it.
	for m.s.Swap(2) != 0 {
		wait(&m.s, 2, -1)
	}
}

// TryLock acquires m if it is free and reports whether it did.
func (m *Mutex) TryLock() bool { return m.s.CompareAndSwap(0, 1) }

// Unlock releases m and wakes one sleeper if there may be one. Unlocking an
// unlocked Mutex panics.
func (m *Mutex) Unlock() {
	switch m.s.Swap(0) {
	case 0:
		panic("futex: unlock of unlocked Mutex")
	case 2:
		wake(&m.s, 1)
	}
}

// Cond is a condition variable for a Mutex, with the usual monitor-object
// protocol: hold the mutex, test the condition, Wait while it is false.
// Waiters count themselves and sleep on a sequence word; Signal and
// Broadcast bump it and wake them. Like glibc's pthread_cond_signal, Signal
// makes no system call when no thread waits or when every waiting thread
// already has a signal on its way (one atomic load): a monitor may signal
// after every change without tracking its waiters, and a thread woken but
// not yet running is not woken again by the next change (on a busy CPU it
// may be many changes later: docs/findings.md, "Real asio beside its
// model").
//
// The condition must be changed with c.L held; Signal may then be called
// with c.L held or after releasing it. No wake-up is lost: a waiter reads
// the sequence, then counts itself, both while it holds c.L. A Signal that
// counts it as a waiter without a signal therefore bumps the sequence after
// the waiter read it, so the waiter's sleep either does not begin or is
// ended by that Signal's wake-up (or the wake-up goes to another sleeper,
// which, back under c.L, takes the signal and leaves the waiter counted
// without one). A Signal for a change made before the waiter's test, late
// or not, either finds the waiter uncounted (and the condition, if still
// true, not waited for) or gives it a spurious wake-up.
type Cond struct {
	_   noCopy
	L   *Mutex
	seq atomic.Uint32
	// state is waiters<<32 | signals: the threads counted in wait and not
	// yet back under L, and how many of them have a signal on its way.
	state atomic.Uint64
}

// Wait atomically releases c.L and sleeps until Signal or Broadcast, then
// re-acquires c.L. It may return spuriously: call it in a loop.
func (c *Cond) Wait() { c.wait(-1) }

// WaitTimeout is Wait bounded by d: it returns (with c.L held) after a
// Signal or Broadcast, after d, or spuriously. Callers re-check both their
// condition and their deadline in a loop.
func (c *Cond) WaitTimeout(d time.Duration) {
	if d <= 0 {
		return
	}
	c.wait(d)
}

const condWaiter = 1 << 32

// wait is Wait with a timeout d (< 0: none).
func (c *Cond) wait(d time.Duration) {
	seq := c.seq.Load() // before the count: see the type's comment
	c.state.Add(condWaiter)
	c.L.Unlock()
	wait(&c.seq, seq, d)
	// Uncount, taking a signal if one is on its way: whether it was meant
	// for this thread or another, the threads still counted keep no more
	// signals than sleepers (an awake thread that keeps one costs only a
	// wake-up that finds nobody).
	for {
		s := c.state.Load()
		n := s - condWaiter
		if uint32(s) > 0 {
			n--
		}
		if c.state.CompareAndSwap(s, n) {
			break
		}
	}
	c.L.Lock()
}

// Signal wakes one waiter, if any waiter has no signal on its way.
func (c *Cond) Signal() {
	if c.grant(false) {
		c.seq.Add(1)
		wake(&c.seq, 1)
	}
}

// Broadcast wakes every waiter.
func (c *Cond) Broadcast() {
	if c.grant(true) {
		c.seq.Add(1)
		wake(&c.seq, 1<<30)
	}
}

// grant gives a signal to one counted waiter without one (all: to every
// one) and reports whether there was such a waiter.
func (c *Cond) grant(all bool) bool {
	for {
		s := c.state.Load()
		waiters, signals := s>>32, uint64(uint32(s))
		if waiters <= signals {
			return false
		}
		n := s + 1
		if all {
			n = waiters<<32 | waiters
		}
		if c.state.CompareAndSwap(s, n) {
			return true
		}
	}
}
