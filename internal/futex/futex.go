package futex

import (
	"errors"
	"sync/atomic"
	"time"
)

// ErrUnsupported is returned (or panicked with) where the futex system call
// does not exist.
var ErrUnsupported = errors.New("futex: not supported on this operating system")

// noCopy makes `go vet` report copies of the types that embed it: a copied
// futex word is a different word, and a waiter on the copy is never woken.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Parker is a binary semaphore owned by one thread: the owner parks on it,
// any thread unparks it. An Unpark that comes before Park is remembered, so a
// wake-up is never lost. It is the follower's private synchronizer of the
// Leader/Followers promotion protocols that must wake one chosen thread.
type Parker struct {
	_ noCopy
	w atomic.Uint32 // 1: a permit is available; 0: none
}

// Park blocks the calling OS thread until a permit is available and consumes
// it. Only the Parker's owner may call Park.
func (p *Parker) Park() {
	for !p.w.CompareAndSwap(1, 0) {
		wait(&p.w, 0, -1)
	}
}

// ParkTimeout is Park with a bound: it reports whether a permit was consumed
// before d elapsed.
func (p *Parker) ParkTimeout(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !p.w.CompareAndSwap(1, 0) {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		wait(&p.w, 0, left)
	}
	return true
}

// Unpark makes a permit available and wakes the owner if it is parked.
// Permits do not accumulate: two Unparks before a Park release one Park.
func (p *Parker) Unpark() {
	if p.w.Swap(1) == 0 {
		wake(&p.w, 1)
	}
}

// Word is a futex word many threads may sleep on at once. It is the shared
// synchronizer of the "implementation-defined order" promotion protocol: the
// waker does not choose which sleeper runs, the kernel does.
type Word struct {
	_ noCopy
	v atomic.Uint32
}

// Load returns the word's value.
func (w *Word) Load() uint32 { return w.v.Load() }

// Add adds delta to the word and returns the new value.
func (w *Word) Add(delta uint32) uint32 { return w.v.Add(delta) }

// CompareAndSwap is atomic.Uint32.CompareAndSwap on the word.
func (w *Word) CompareAndSwap(old, new uint32) bool { return w.v.CompareAndSwap(old, new) }

// Wait blocks while the word equals val; it may return spuriously, so
// callers re-check their condition in a loop.
func (w *Word) Wait(val uint32) { wait(&w.v, val, -1) }

// Wake wakes at most n threads sleeping in Wait and returns how many it woke.
func (w *Word) Wake(n int) int { return wake(&w.v, n) }
