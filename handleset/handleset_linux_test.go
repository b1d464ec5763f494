package handleset

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mustOpen returns what open opens, failing t if it fails, and closes it
// when the test ends: sets, wakeups and listeners all open so.
func mustOpen[C interface{ Close() error }](t *testing.T, open func() (C, error)) C {
	t.Helper()
	c, err := open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newSet(t *testing.T) *Set {
	t.Helper()
	return mustOpen(t, New)
}

func newWakeup(t *testing.T) *Wakeup {
	t.Helper()
	return mustOpen(t, NewWakeup)
}

// mustRegister registers fd in s with interest and handler h, failing t if
// the set refuses.
func mustRegister(t *testing.T, s *Set, fd int, interest Events, h EventHandler) {
	t.Helper()
	if err := s.Register(fd, interest, h); err != nil {
		t.Fatal(err)
	}
}

// socketPair returns a connected pair of non-blocking Unix stream sockets,
// closed when the test ends.
func socketPair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return fds[0], fds[1]
}

type nopHandler struct{ name string }

func (nopHandler) HandleEvent(int, Events) {}

// inSyscall reports whether thread tid of this process is blocked in system
// call nr, from /proc/self/task/<tid>/syscall (first field: the number).
func inSyscall(tid int, nr uintptr) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return false
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	return err == nil && uintptr(n) == nr
}

// awaitBlocked waits (yielding, never sleeping) until every thread in tids is
// blocked in epoll_pwait, so a test knows its waiters are really waiting.
func awaitBlocked(t *testing.T, tids []int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, tid := range tids {
		for !inSyscall(tid, unix.SYS_EPOLL_PWAIT) {
			if time.Now().After(deadline) {
				t.Fatalf("thread %d never blocked in epoll_pwait", tid)
			}
			runtime.Gosched()
		}
	}
}

type outcome struct {
	events int
	err    error
}

// startWaiters starts n locked OS threads, each making one Wait(-1) on s, and
// returns their thread ids (once all are known) and the channel of outcomes.
func startWaiters(t *testing.T, s *Set, n int) ([]int, <-chan outcome) {
	t.Helper()
	tids := make(chan int, n)
	out := make(chan outcome, n)
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			w := s.NewWaiter(1)
			tids <- unix.Gettid()
			evs, err := w.Wait(-1)
			out <- outcome{events: len(evs), err: err}
		}()
	}
	ids := make([]int, 0, n)
	for range n {
		ids = append(ids, <-tids)
	}
	return ids, out
}

func TestOneEventWakesExactlyOneWaiter(t *testing.T) {
	const n = 8
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	wk := newWakeup(t)
	mustRegister(t, s, wk.Fd(), Readable|OneShot, nopHandler{})
	tids, out := startWaiters(t, s, n)
	awaitBlocked(t, tids)
	if err := wk.Signal(); err != nil {
		t.Fatal(err)
	}
	first := <-out
	if first.err != nil || first.events != 1 {
		t.Fatalf("first waiter to return: %d events, err %v; want the one event", first.events, first.err)
	}
	// The handle is deactivated: the other n-1 stay blocked until Close.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range n - 1 {
		o := <-out
		if !errors.Is(o.err, ErrClosed) || o.events != 0 {
			t.Errorf("another waiter returned %d events, err %v; want ErrClosed and none", o.events, o.err)
		}
	}
}

func TestCloseWakesEveryWaiter(t *testing.T) {
	const n = 6
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tids, out := startWaiters(t, s, n)
	awaitBlocked(t, tids)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range n {
		if o := <-out; !errors.Is(o.err, ErrClosed) {
			t.Errorf("waiter returned err %v, want ErrClosed", o.err)
		}
	}
	// Every later call fails the same way.
	if _, err := s.NewWaiter(1).Wait(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close: %v, want ErrClosed", err)
	}
	if err := s.Register(0, Readable, nopHandler{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Register after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// poll returns the events ready now (timeout 0).
func poll(t *testing.T, w *Waiter) []Event {
	t.Helper()
	evs, err := w.Wait(0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestDeactivation(t *testing.T) {
	tests := []struct {
		name     string
		interest Events
		// deactivate is how the handle is silenced after the first event.
		deactivate func(s *Set, fd int) error
	}{
		{name: "oneshot", interest: Readable | OneShot, deactivate: func(*Set, int) error { return nil }},
		{name: "explicit", interest: Readable, deactivate: func(s *Set, fd int) error { return s.Deactivate(fd) }},
		{name: "explicit-oneshot", interest: Readable | OneShot, deactivate: func(s *Set, fd int) error { return s.Deactivate(fd) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSet(t)
			wk := newWakeup(t)
			h := nopHandler{name: tc.name}
			mustRegister(t, s, wk.Fd(), tc.interest, h)
			w := s.NewWaiter(4)
			if evs := poll(t, w); len(evs) != 0 {
				t.Fatalf("idle handle reported %v", evs)
			}
			wk.Signal()
			evs := poll(t, w)
			if len(evs) != 1 || evs[0].Fd != wk.Fd() || evs[0].Ready&Readable == 0 || evs[0].Handler != h {
				t.Fatalf("got %+v, want one readable event with its handler", evs)
			}
			if err := tc.deactivate(s, wk.Fd()); err != nil {
				t.Fatal(err)
			}
			// Still readable (never drained), but deactivated: no event.
			for range 3 {
				if evs := poll(t, w); len(evs) != 0 {
					t.Fatalf("deactivated handle reported %+v", evs)
				}
			}
			if err := s.Reactivate(wk.Fd(), tc.interest); err != nil {
				t.Fatal(err)
			}
			if evs := poll(t, w); len(evs) != 1 {
				t.Fatalf("reactivated handle: got %d events, want 1", len(evs))
			}
		})
	}
}

func TestUnregisteredEventsAreDropped(t *testing.T) {
	s := newSet(t)
	a, b := newWakeup(t), newWakeup(t)
	mustRegister(t, s, a.Fd(), Readable, nopHandler{"a"})
	mustRegister(t, s, b.Fd(), Readable, nopHandler{"b"})
	a.Signal()
	b.Signal()
	if err := s.Unregister(a.Fd()); err != nil {
		t.Fatal(err)
	}
	evs := poll(t, s.NewWaiter(4))
	if len(evs) != 1 || evs[0].Fd != b.Fd() {
		t.Fatalf("got %+v, want only b's event", evs)
	}
	if err := s.Unregister(a.Fd()); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("second Unregister: %v, want ErrNotRegistered", err)
	}
	if err := s.Reactivate(a.Fd(), Readable); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("Reactivate of unregistered: %v, want ErrNotRegistered", err)
	}
	// Registering again under the same number delivers to the new handler.
	h2 := nopHandler{"a2"}
	mustRegister(t, s, a.Fd(), Readable, h2)
	if err := s.Register(a.Fd(), Readable, h2); err == nil {
		t.Error("double Register succeeded")
	}
	found := false
	for _, e := range poll(t, s.NewWaiter(4)) {
		if e.Fd == a.Fd() {
			found = e.Handler == h2
		}
	}
	if !found {
		t.Error("re-registered handle's event did not reach its new handler")
	}
}

func TestTableGrowsPastInitialSize(t *testing.T) {
	s := newSet(t)
	var ws []*Wakeup
	for range 100 {
		ws = append(ws, newWakeup(t))
	}
	for _, w := range ws {
		mustRegister(t, s, w.Fd(), Readable|OneShot, nopHandler{})
	}
	last := ws[len(ws)-1]
	last.Signal()
	evs := poll(t, s.NewWaiter(8))
	if len(evs) != 1 || evs[0].Fd != last.Fd() {
		t.Fatalf("got %+v, want the event of fd %d", evs, last.Fd())
	}
}

// TestConcurrentDispatchNeverOverlaps runs many locked threads as waiters on
// OneShot handles that are signalled continually, and checks that no handle
// is ever held by two threads at once (the invariant the protocol exists for).
func TestConcurrentDispatchNeverOverlaps(t *testing.T) {
	const threads, handles, rounds = 4, 16, 2000
	s := newSet(t)
	held := make([]atomic.Int32, handles)
	byFd := map[int]int{}
	var ws []*Wakeup
	for i := range handles {
		w := newWakeup(t)
		ws = append(ws, w)
		byFd[w.Fd()] = i
		mustRegister(t, s, w.Fd(), Readable|OneShot, nopHandler{})
		w.Signal()
	}
	var dispatched atomic.Int64
	var overlaps atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			w := s.NewWaiter(1)
			for {
				evs, err := w.Wait(-1)
				if err != nil {
					return
				}
				for _, e := range evs {
					i := byFd[e.Fd]
					if held[i].Add(1) != 1 {
						overlaps.Add(1)
					}
					ws[i].Drain()
					ws[i].Signal() // ready again at once: only deactivation protects it
					held[i].Add(-1)
					if dispatched.Add(1) >= rounds {
						s.Close()
						return
					}
					if err := s.Reactivate(e.Fd, Readable|OneShot); err != nil {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d dispatches overlapped on one handle", n)
	}
}

func TestListenAcceptReadWrite(t *testing.T) {
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprintf("blocking=%v", blocking), func(t *testing.T) {
			l, err := Listen("127.0.0.1:0", ListenOptions{Blocking: blocking})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			if l.Addr().Port() == 0 || !l.Addr().Addr().Is4() {
				t.Fatalf("bound address %v", l.Addr())
			}
			if !blocking {
				if _, _, err := l.Accept(); !IsWouldBlock(err) {
					t.Fatalf("Accept with nothing pending: %v, want would-block", err)
				}
			}
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var fd int
			if blocking {
				fd, _, err = l.Accept()
			} else {
				s := newSet(t)
				mustRegister(t, s, l.Fd(), Readable|OneShot, nopHandler{})
				if _, err := s.NewWaiter(1).Wait(-1); err != nil {
					t.Fatal(err)
				}
				fd, _, err = l.Accept()
			}
			if err != nil {
				t.Fatal(err)
			}
			defer Close(fd)
			nodelay, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
			if err != nil || nodelay == 0 {
				t.Errorf("TCP_NODELAY = %d, %v; want set", nodelay, err)
			}
			if !blocking {
				if _, err := Read(fd, make([]byte, 8)); !IsWouldBlock(err) {
					t.Errorf("Read with nothing sent: %v, want would-block", err)
				}
			}
			c.Write([]byte("ping"))
			buf := make([]byte, 8)
			n := 0
			for n < 4 {
				m, err := Read(fd, buf[n:])
				if IsWouldBlock(err) {
					runtime.Gosched()
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				n += m
			}
			if string(buf[:n]) != "ping" {
				t.Fatalf("read %q", buf[:n])
			}
			if _, err := Write(fd, []byte("pong")); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4)
			if _, err := c.Read(got); err != nil || string(got) != "pong" {
				t.Fatalf("client read %q, %v", got, err)
			}
			c.Close()
			for {
				m, err := Read(fd, buf)
				if IsWouldBlock(err) {
					runtime.Gosched()
					continue
				}
				if m != 0 || err != nil {
					t.Fatalf("after peer close: %d, %v; want end of stream", m, err)
				}
				break
			}
		})
	}
}

func TestShutdownWakesBlockedAccept(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenOptions{Blocking: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tid := make(chan int)
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		_, _, err := l.Accept()
		done <- err
	}()
	id := <-tid
	deadline := time.Now().Add(30 * time.Second)
	for !inSyscall(id, unix.SYS_ACCEPT4) {
		if time.Now().After(deadline) {
			t.Fatal("acceptor never blocked in accept4")
		}
		runtime.Gosched()
	}
	if err := l.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("Accept returned a connection after Shutdown")
	}
}

func TestListenErrors(t *testing.T) {
	tests := []struct {
		name, addr string
		opts       ListenOptions
		want       string
	}{
		{name: "negative backlog", addr: "127.0.0.1:0", opts: ListenOptions{Backlog: -1}, want: "backlog -1 out of range"},
		{name: "huge backlog", addr: "127.0.0.1:0", opts: ListenOptions{Backlog: MaxBacklog + 1}, want: "out of range"},
		{name: "bad address", addr: "not an address", want: `"not an address"`},
		{name: "bad port", addr: "127.0.0.1:99999", want: "99999"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Listen(tc.addr, tc.opts)
			if err == nil {
				l.Close()
				t.Fatal("Listen succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestEventsString(t *testing.T) {
	if got := (Readable | HangUp).String(); got != "readable|hangup" {
		t.Errorf("got %q", got)
	}
	if got := (Readable | EdgeTriggered | Exclusive).String(); got != "readable|edge|exclusive" {
		t.Errorf("got %q", got)
	}
	if got := Events(0).String(); got != "none" {
		t.Errorf("got %q", got)
	}
}

// TestWritableOnlyIgnoresHalfClose arms a connection Writable-only after its
// peer half-closed and filled nothing: with the send buffer full, the handle
// must stay quiet (no spin on the peer's FIN), and report once writable.
func TestWritableOnlyIgnoresHalfClose(t *testing.T) {
	srv, peer := socketPair(t)
	// Fill srv's send path until it would block.
	chunk := make([]byte, 64<<10)
	for {
		if _, err := unix.Write(srv, chunk); err != nil {
			break
		}
	}
	unix.Shutdown(peer, unix.SHUT_WR) // the peer half-closes and does not read
	s := newSet(t)
	mustRegister(t, s, srv, Writable|OneShot, nopHandler{})
	w := s.NewWaiter(1)
	if evs := poll(t, w); len(evs) != 0 {
		t.Fatalf("writable-only handle with a full buffer and a half-closed peer reported %v", evs[0].Ready)
	}
	// Read interest does see the half-close.
	if err := s.Reactivate(srv, Readable|OneShot); err != nil {
		t.Fatal(err)
	}
	if evs := poll(t, w); len(evs) != 1 || evs[0].Ready&HangUp == 0 {
		t.Fatalf("readable handle after the peer's half-close: %+v, want hangup", evs)
	}
}

func TestReusePort(t *testing.T) {
	a, err := Listen("127.0.0.1:0", ListenOptions{ReusePort: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Listen(a.Addr().String(), ListenOptions{ReusePort: true})
	if err != nil {
		t.Fatalf("second listener on %v with SO_REUSEPORT: %v", a.Addr(), err)
	}
	b.Close()
	if c, err := Listen(a.Addr().String(), ListenOptions{}); err == nil {
		c.Close()
		t.Fatal("a listener without SO_REUSEPORT bound an address in use")
	}
}

// TestListenGroup checks that a listen group's sockets share one port
// (the first's, chosen by the kernel) and that each accepts on it.
func TestListenGroup(t *testing.T) {
	lns, err := ListenGroup("127.0.0.1:0", ListenOptions{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	if len(lns) != 3 || lns[0].Addr().Port() == 0 {
		t.Fatalf("%d listeners, first on %v; want 3 on a chosen port", len(lns), lns[0].Addr())
	}
	for i, l := range lns {
		if l.Addr() != lns[0].Addr() {
			t.Errorf("listener %d on %v, want %v", i, l.Addr(), lns[0].Addr())
		}
	}
	if _, err := ListenGroup("127.0.0.1:0", ListenOptions{}, 0); err == nil {
		t.Error("a group of 0 sockets opened")
	}
	// A socket without SO_REUSEPORT cannot join: the group fails and
	// closes what it opened.
	plain, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if g, err := ListenGroup(plain.Addr().String(), ListenOptions{}, 2); err == nil {
		for _, l := range g {
			l.Close()
		}
		t.Error("a group bound a port held without SO_REUSEPORT")
	}
}

// TestEdgeTriggered checks that an edge-triggered handle reports bytes
// once when they arrive, not again while they stay unread, and again
// when more arrive.
func TestEdgeTriggered(t *testing.T) {
	rx, tx := socketPair(t)
	s := newSet(t)
	mustRegister(t, s, rx, Readable|EdgeTriggered, nopHandler{})
	w := s.NewWaiter(4)
	if evs := poll(t, w); len(evs) != 0 {
		t.Fatalf("nothing sent, yet %v", evs[0].Ready)
	}
	for round := range 2 {
		if _, err := unix.Write(tx, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if evs := poll(t, w); len(evs) != 1 || evs[0].Ready&Readable == 0 {
			t.Fatalf("round %d: a byte arrived: %+v, want one readable event", round, evs)
		}
		if evs := poll(t, w); len(evs) != 0 {
			t.Fatalf("round %d: the unread byte reported again: %v", round, evs[0].Ready)
		}
	}
}

// TestExclusive checks that a handle registered Exclusive in two sets
// reports its event in one of them at least, and that the kernel keeps
// it from being re-armed (Reactivate fails), as documented.
func TestExclusive(t *testing.T) {
	wk := newWakeup(t)
	a, b := newSet(t), newSet(t)
	for _, s := range []*Set{a, b} {
		mustRegister(t, s, wk.Fd(), Readable|Exclusive, nopHandler{})
	}
	if err := wk.Signal(); err != nil {
		t.Fatal(err)
	}
	if n := len(poll(t, a.NewWaiter(1))) + len(poll(t, b.NewWaiter(1))); n == 0 {
		t.Error("an exclusive handle's event reached neither set")
	}
	if err := a.Reactivate(wk.Fd(), Readable); err == nil {
		t.Error("Reactivate of an exclusive handle succeeded")
	}
	if err := a.Unregister(wk.Fd()); err != nil {
		t.Fatal(err)
	}
	if err := a.Register(wk.Fd(), Readable|Exclusive, nopHandler{}); err != nil {
		t.Fatalf("register again after Unregister: %v", err)
	}
}

func TestWouldBlockDoesNotAllocate(t *testing.T) {
	rx, _ := socketPair(t)
	buf := make([]byte, 16)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Read(rx, buf); !IsWouldBlock(err) {
			t.Fatalf("Read on an empty socket: %v", err)
		}
	})
	if allocs != 0 {
		t.Errorf("a would-block Read allocates %v times", allocs)
	}
}
