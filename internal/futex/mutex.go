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
// Broadcast bump it and wake them, and do nothing (one atomic load, no
// system call) when no thread waits, so a monitor may signal after every
// change without tracking its waiters, as with glibc's
// pthread_cond_signal.
//
// The condition must be changed with c.L held; Signal may then be called
// with c.L held or after releasing it. No wake-up is lost: a waiter counts
// itself and reads the sequence while it holds c.L, so a signaller that
// changed the condition under c.L after that sees the count, and one that
// changed it before left a condition the waiter sees true and does not wait
// for.
type Cond struct {
	_       noCopy
	L       *Mutex
	seq     atomic.Uint32
	waiters atomic.Int32 // threads between the count in wait and their wake-up
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

// wait is Wait with a timeout d (< 0: none).
func (c *Cond) wait(d time.Duration) {
	c.waiters.Add(1)
	seq := c.seq.Load()
	c.L.Unlock()
	wait(&c.seq, seq, d)
	c.waiters.Add(-1)
	c.L.Lock()
}

// Signal wakes one waiter, if any.
func (c *Cond) Signal() {
	if c.waiters.Load() == 0 {
		return
	}
	c.seq.Add(1)
	wake(&c.seq, 1)
}

// Broadcast wakes every waiter.
func (c *Cond) Broadcast() {
	if c.waiters.Load() == 0 {
		return
	}
	c.seq.Add(1)
	wake(&c.seq, 1<<30)
}
