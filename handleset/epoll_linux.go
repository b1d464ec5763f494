package handleset

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// closedBit marks a closed Set in Set.state; the bits below count the calls
// in progress (enter/leave).
const closedBit = int64(1) << 62

// registration binds a descriptor (its slot in the table) to its handler
// for one Register call.
type registration struct {
	gen uint32 // never 0: generation 0 marks the Set's own wake-up eventfd
	h   EventHandler
}

// table maps descriptor numbers to registrations. It is replaced, never
// resized in place, so readers load it without a lock.
type table struct {
	slots []atomic.Pointer[registration]
}

// Set is the shared handle set over one epoll instance. See the package
// documentation for its concurrency contract.
type Set struct {
	epfd int
	wake *Wakeup // signalled once by Close; level-triggered, so it wakes every waiter

	state    atomic.Int64 // closedBit | calls in progress
	done     chan struct{}
	doneOnce sync.Once

	mu  sync.Mutex // serializes Register/Unregister and table growth
	tab atomic.Pointer[table]
	gen uint32 // last generation handed out; guarded by mu

	stale atomic.Uint64 // events dropped because their registration was gone
}

// New creates an empty handle set.
func New() (*Set, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wake, err := NewWakeup()
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	// Generation 0 in the data identifies the wake-up descriptor.
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake.Fd()), Pad: 0}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake.Fd(), &ev); err != nil {
		wake.Close()
		unix.Close(epfd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	s := &Set{epfd: epfd, wake: wake, done: make(chan struct{})}
	s.tab.Store(&table{slots: make([]atomic.Pointer[registration], 64)})
	return s, nil
}

// enter counts a call in progress; it reports false (and counts nothing) if
// the set is closed.
func (s *Set) enter() bool {
	if s.state.Add(1)&closedBit != 0 {
		s.leave()
		return false
	}
	return true
}

func (s *Set) leave() {
	if s.state.Add(-1) == closedBit {
		s.doneOnce.Do(func() { close(s.done) })
	}
}

// epollEvents translates an interest into epoll flags. EPOLLRDHUP (the peer
// shut down its writing side) is asked for only with Readable: it stays true
// forever once it happens, so a handle armed Writable-only for a client that
// half-closed and stopped reading would otherwise fire at once, every time,
// and its dispatcher would spin. EPOLLHUP and EPOLLERR are reported whatever
// the interest, so a reset peer still wakes a Writable-only waiter. With
// Exclusive, EPOLLRDHUP is left out: the kernel accepts only the
// readiness bits, EPOLLET and EPOLLWAKEUP beside EPOLLEXCLUSIVE (nginx
// strips it likewise).
func epollEvents(ev Events) uint32 {
	var e uint32
	if ev&Readable != 0 {
		e |= unix.EPOLLIN
		if ev&Exclusive == 0 {
			e |= unix.EPOLLRDHUP
		}
	}
	if ev&Writable != 0 {
		e |= unix.EPOLLOUT
	}
	if ev&OneShot != 0 {
		e |= unix.EPOLLONESHOT
	}
	if ev&EdgeTriggered != 0 {
		e |= unix.EPOLLET
	}
	if ev&Exclusive != 0 {
		e |= unix.EPOLLEXCLUSIVE
	}
	return e
}

// readyEvents translates epoll flags into readiness conditions.
func readyEvents(e uint32) Events {
	var r Events
	if e&unix.EPOLLIN != 0 {
		r |= Readable
	}
	if e&unix.EPOLLOUT != 0 {
		r |= Writable
	}
	if e&(unix.EPOLLHUP|unix.EPOLLRDHUP) != 0 {
		r |= HangUp
	}
	if e&unix.EPOLLERR != 0 {
		r |= Error
	}
	return r
}

// lookup returns the current registration of fd, or nil.
func (s *Set) lookup(fd int) *registration {
	t := s.tab.Load()
	if fd < 0 || fd >= len(t.slots) {
		return nil
	}
	return t.slots[fd].Load()
}

// Register adds fd to the set with interest ev (Readable and/or Writable,
// optionally OneShot, EdgeTriggered or Exclusive) and associates h with
// it. A descriptor may be registered once at a time in one set, and in
// several sets at once.
func (s *Set) Register(fd int, ev Events, h EventHandler) error {
	if !s.enter() {
		return ErrClosed
	}
	defer s.leave()
	if fd < 0 {
		return os.NewSyscallError("epoll_ctl", unix.EBADF)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tab.Load()
	if fd >= len(t.slots) {
		n := len(t.slots)
		for n <= fd {
			n *= 2
		}
		nt := &table{slots: make([]atomic.Pointer[registration], n)}
		for i := range t.slots {
			nt.slots[i].Store(t.slots[i].Load())
		}
		s.tab.Store(nt)
		t = nt
	}
	if t.slots[fd].Load() != nil {
		return os.NewSyscallError("epoll_ctl", unix.EEXIST)
	}
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	r := &registration{gen: s.gen, h: h}
	e := unix.EpollEvent{Events: epollEvents(ev), Fd: int32(fd), Pad: int32(r.gen)}
	// Publish before EPOLL_CTL_ADD: an event may be reported the moment the
	// handle is in the set.
	t.slots[fd].Store(r)
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &e); err != nil {
		t.slots[fd].Store(nil)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// modify re-arms (or, with ev 0, disarms) fd keeping its registration's data.
func (s *Set) modify(fd int, ev Events) error {
	if !s.enter() {
		return ErrClosed
	}
	defer s.leave()
	r := s.lookup(fd)
	if r == nil {
		return ErrNotRegistered
	}
	var flags uint32
	if ev&(Readable|Writable) != 0 {
		flags = epollEvents(ev)
	} else {
		// No interest at all: EPOLLONESHOT with nothing armed keeps the
		// handle in the set but reports nothing (hang-ups included).
		flags = unix.EPOLLONESHOT
	}
	e := unix.EpollEvent{Events: flags, Fd: int32(fd), Pad: int32(r.gen)}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, fd, &e); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Reactivate re-arms fd with interest ev (which may differ from the
// registration's, e.g. Writable while output is pending). With OneShot in ev
// the handle is deactivated again at its next event.
func (s *Set) Reactivate(fd int, ev Events) error { return s.modify(fd, ev) }

// Deactivate disarms fd: it stays registered but reports no event until
// Reactivate.
func (s *Set) Deactivate(fd int) error { return s.modify(fd, 0) }

// Unregister removes fd from the set and forgets its handler. Call it before
// closing fd, so that the descriptor number can be reused safely.
func (s *Set) Unregister(fd int) error {
	if !s.enter() {
		return ErrClosed
	}
	defer s.leave()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tab.Load()
	if fd < 0 || fd >= len(t.slots) || t.slots[fd].Load() == nil {
		return ErrNotRegistered
	}
	t.slots[fd].Store(nil)
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Stale returns how many events were dropped because their handle had been
// unregistered after the kernel queued them.
func (s *Set) Stale() uint64 { return s.stale.Load() }

// Close wakes every waiter, waits for calls in progress to return, and
// releases the set's descriptors. It is idempotent. It must not be called
// from inside a Wait of the same set on the same thread (it would wait for
// itself); it may be called from a handler of another thread.
func (s *Set) Close() error {
	old := s.state.Or(closedBit)
	if old&closedBit != 0 {
		<-s.done // another Close is releasing, or has released, the descriptors
		return nil
	}
	if err := s.wake.Signal(); err != nil {
		// Without the wake-up a blocked waiter would never return; this
		// cannot fail for a valid eventfd.
		panic("handleset: " + err.Error())
	}
	if old != 0 {
		<-s.done
	} else {
		s.doneOnce.Do(func() { close(s.done) })
	}
	err1 := Close(s.epfd)
	err2 := s.wake.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// Waiter is one thread's view of the set: it owns the buffers Wait fills, so
// waiting does not allocate. A Waiter must not be used by two threads at once.
type Waiter struct {
	s   *Set
	raw []unix.EpollEvent
	out []Event
}

// NewWaiter returns a waiter that reports at most max events per Wait.
// Leader/Followers' leader role holds one waiter of max --events and takes
// one of its events per turn (its ready set), or, with --events 1, each
// thread waits for one event per turn with a waiter of its own.
func (s *Set) NewWaiter(max int) *Waiter {
	if max < 1 {
		max = 1
	}
	return &Waiter{s: s, raw: make([]unix.EpollEvent, max), out: make([]Event, 0, max)}
}

// Wait blocks until at least one handle is ready, timeout passes (timeout < 0:
// no bound; it is rounded up to whole milliseconds) or the set is closed, and
// returns the ready handles. The returned slice is owned by the Waiter and
// valid until its next Wait. A timeout returns an empty slice and no error;
// a closed set returns ErrClosed.
func (w *Waiter) Wait(timeout time.Duration) ([]Event, error) {
	s := w.s
	if !s.enter() {
		return nil, ErrClosed
	}
	defer s.leave()
	msec := -1
	if timeout >= 0 {
		msec = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	w.out = w.out[:0]
	for {
		n, err := unix.EpollWait(s.epfd, w.raw, msec)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, os.NewSyscallError("epoll_wait", err)
		}
		for i := range n {
			e := &w.raw[i]
			if e.Pad == 0 && int(e.Fd) == s.wake.Fd() {
				return nil, ErrClosed
			}
			r := s.lookup(int(e.Fd))
			if r == nil || r.gen != uint32(e.Pad) {
				s.stale.Add(1)
				continue
			}
			w.out = append(w.out, Event{Fd: int(e.Fd), Ready: readyEvents(e.Events), Handler: r.h})
		}
		if len(w.out) == 0 && n > 0 && msec < 0 {
			continue // every event was stale; keep waiting
		}
		return w.out, nil
	}
}
