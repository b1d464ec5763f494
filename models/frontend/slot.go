package frontend

import (
	"fmt"
	"sync/atomic"
	"time"

	"concbench/internal/futex"
	"concbench/internal/monoclock"
)

// The re-dial back-off: after a failed dial the next waits minRedial,
// doubling with each failure up to maxRedial.
const (
	minRedial = time.Millisecond
	maxRedial = time.Second
)

// slot is one upstream connection slot: the link of the moment and,
// once it has broken, when the next may be dialled. A slot is shared by
// the client threads routed to it (handoff bound, queue) or is a client
// thread's own (perthread). A broken link is replaced lazily: the first
// request that finds it broken after the back-off re-dials, on its own
// thread; requests meanwhile are answered at once with the reason.
type slot struct {
	cur atomic.Pointer[link] // the link of the moment (broken while the slot is down); nil before the first dial

	mu      futex.Mutex
	dialing bool          // a thread is dialling
	backoff time.Duration // the wait after the last failed dial (0: none failed)
	next    int64         // no dial before this (monoclock)
	cause   error         // the last dial's failure, nil if the link broke and no dial failed since

	// reader (handoff queue) is the slot's reader thread's condition: it
	// waits there for a new link when its link has broken.
	reader futex.Parker
}

// link returns the slot's link if it is up; otherwise it re-dials, if
// the back-off has passed and no other thread is dialling, or returns
// why the slot is down (the request is then answered at once).
func (u *slot) link(s *Server) (*link, error) {
	if l := u.cur.Load(); l != nil && !l.down.Load() {
		return l, nil
	}
	now := monoclock.Now()
	u.mu.Lock()
	if l := u.cur.Load(); l != nil && !l.down.Load() {
		u.mu.Unlock() // another thread re-dialled meanwhile
		return l, nil
	}
	if u.dialing || now < u.next {
		err := u.downErr(now)
		u.mu.Unlock()
		return nil, err
	}
	u.dialing = true
	u.mu.Unlock()

	l, err := s.dial()
	u.mu.Lock()
	u.dialing = false
	if err != nil {
		u.backoff = min(max(2*u.backoff, minRedial), maxRedial)
		u.next = monoclock.Now() + int64(u.backoff)
		u.cause = err
		backoff := u.backoff // read under u.mu: another thread's failed dial may double it
		u.mu.Unlock()
		return nil, fmt.Errorf("cannot connect to the back end: %w; next attempt in %v", err, backoff)
	}
	redial := u.cur.Load() != nil
	u.backoff, u.next, u.cause = 0, 0, nil
	u.cur.Store(l)
	u.mu.Unlock()
	if redial {
		s.redials.Add(1)
	}
	u.reader.Unpark() // handoff queue: the reader thread follows the new link
	return l, nil
}

// downErr says why the slot is down, at now: the last dial's failure or
// the broken link's, and when the next dial may be. u.mu must be held.
func (u *slot) downErr(now int64) error {
	cause := u.cause
	if cause == nil {
		if l := u.cur.Load(); l != nil {
			l.mu.Lock()
			cause = l.broken
			l.mu.Unlock()
		}
	}
	if u.dialing {
		return fmt.Errorf("back end connection down (%v); being re-dialled", cause)
	}
	return fmt.Errorf("back end connection down (%v); next attempt in %v", cause, time.Duration(u.next-now).Round(time.Microsecond))
}

// readLoop is the slot's reader thread under handoff queue: it reads
// every response off the link of the moment and hands each to its
// thread (link.readLoop) until the link breaks, then waits for the link
// a client thread dials next, until the server closes.
func (u *slot) readLoop(s *Server) {
	for !s.closed.Load() {
		l := u.cur.Load()
		if l == nil || !l.acquire() {
			u.reader.Park() // until a re-dial or Close
			continue
		}
		l.readLoop()
		l.leave()
	}
}
