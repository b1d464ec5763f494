package connio

import (
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"concbench/models"

	"golang.org/x/sys/unix"
)

// scriptedListener is a Listener whose Accept returns the scripted
// results in turn, then EAGAIN: the accept policy's unit under test,
// without descriptors to exhaust.
type scriptedListener struct {
	results []error // nil: a connection (descriptor 100 + its index)
	calls   int
}

func (l *scriptedListener) Accept() (int, netip.AddrPort, error) {
	i := l.calls
	l.calls++
	if i >= len(l.results) {
		return -1, netip.AddrPort{}, os.NewSyscallError("accept4", unix.EAGAIN)
	}
	if err := l.results[i]; err != nil {
		return -1, netip.AddrPort{}, err
	}
	return 100 + i, netip.AddrPort{}, nil
}

// TestAcceptBatchPolicy drives the accept batch through each class of the
// one accept error policy.
func TestAcceptBatchPolicy(t *testing.T) {
	conns := func(n int) []error { return make([]error, n) }
	tests := []struct {
		name     string
		results  []error
		backoff  time.Duration // the back-off's next delay before the batch
		refuse   bool          // add reports false (the server is closing)
		upTo     int           // AcceptUpTo's bound; 0: AcceptBatch
		accepted int
		calls    int
		wait     time.Duration
		errno    unix.Errno // of the returned error; 0: none
		counted  map[string]uint64
	}{
		{name: "drained", results: conns(3), accepted: 3, calls: 4},
		{name: "bounded", results: conns(MaxAcceptsPerEvent + 5), accepted: MaxAcceptsPerEvent, calls: MaxAcceptsPerEvent},
		{name: "interrupted-retried", results: []error{unix.EINTR, nil, os.NewSyscallError("accept4", unix.ECONNABORTED), nil},
			accepted: 2, calls: 5},
		{name: "emfile-backs-off", results: []error{nil, os.NewSyscallError("accept4", unix.EMFILE), nil},
			accepted: 1, calls: 2, wait: MinAcceptBackoff, counted: map[string]uint64{models.ErrAcceptBackoff: 1}},
		{name: "enfile-doubles", results: []error{unix.ENFILE}, backoff: 4 * MinAcceptBackoff,
			calls: 1, wait: 4 * MinAcceptBackoff, counted: map[string]uint64{models.ErrAcceptBackoff: 1}},
		{name: "accepted-resets-backoff", results: []error{nil, unix.EMFILE}, backoff: 4 * MinAcceptBackoff,
			accepted: 1, calls: 2, wait: MinAcceptBackoff, counted: map[string]uint64{models.ErrAcceptBackoff: 1}},
		{name: "other-returned-wrapped", results: []error{nil, unix.EPERM, nil}, accepted: 1, calls: 2, errno: unix.EPERM},
		{name: "other-already-wrapped", results: []error{os.NewSyscallError("accept4", unix.EINVAL)}, calls: 1, errno: unix.EINVAL},
		{name: "closing", results: conns(3), refuse: true, accepted: 1, calls: 1},
		{name: "one-per-event", results: conns(3), upTo: 1, accepted: 1, calls: 1},
		{name: "one-try-retried-counts", results: []error{unix.EINTR, nil}, upTo: 1, calls: 1},
		{name: "up-to-the-batch", results: conns(MaxAcceptsPerEvent + 5), upTo: 1 << 20,
			accepted: MaxAcceptsPerEvent, calls: MaxAcceptsPerEvent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln := &scriptedListener{results: tc.results}
			var b AcceptBackoff
			for b.next < tc.backoff {
				b.Next()
			}
			var counters models.Counters
			sh := counters.NewThreadShard("acceptor")
			var got []int
			add := func(fd int) bool {
				got = append(got, fd)
				return !tc.refuse
			}
			var wait time.Duration
			var err error
			if tc.upTo == 0 {
				wait, err = AcceptBatch(ln, &b, sh, add)
			} else {
				wait, err = AcceptUpTo(ln, tc.upTo, &b, sh, add)
			}
			if len(got) != tc.accepted || ln.calls != tc.calls || wait != tc.wait {
				t.Errorf("accepted %d in %d calls, wait %v; want %d in %d, wait %v",
					len(got), ln.calls, wait, tc.accepted, tc.calls, tc.wait)
			}
			switch {
			case tc.errno == 0 && err != nil:
				t.Errorf("returned %v, want no error", err)
			case tc.errno != 0:
				var se *os.SyscallError
				if !errors.As(err, &se) || se.Syscall != "accept4" || !errors.Is(err, tc.errno) {
					t.Errorf("returned %v, want %v wrapped by accept4", err, tc.errno)
				}
				if errors.As(se.Err, new(*os.SyscallError)) {
					t.Errorf("returned %v: wrapped twice", err)
				}
			}
			var st models.Stats
			counters.Stats(&st)
			for _, kind := range []string{models.ErrAccept, models.ErrAcceptBackoff} {
				if st.Errors[kind] != tc.counted[kind] {
					t.Errorf("errors counted %v, want %v (AcceptBatch's caller counts what it returns)", st.Errors, tc.counted)
				}
			}
		})
	}
}

// TestListenPause: no pause means waits without bound; a pause bounds the
// wait until it ends, and its end is reported to one caller only.
func TestListenPause(t *testing.T) {
	var p ListenPause
	if d := p.Timeout(); d != -1 || p.End() {
		t.Fatalf("no pause: timeout %v, end %v; want -1, false", d, p.End())
	}
	p.Start(time.Hour)
	if d := p.Timeout(); d <= 0 || d > time.Hour || p.End() {
		t.Fatalf("pause of an hour: timeout %v, end %v", d, p.End())
	}
	p.Start(0)
	if d := p.Timeout(); d != 0 {
		t.Fatalf("pause over: timeout %v, want 0", d)
	}
	if !p.End() || p.End() {
		t.Fatal("the end of the pause was not reported exactly once")
	}
	if d := p.Timeout(); d != -1 {
		t.Fatalf("after the end: timeout %v, want -1", d)
	}
}

func TestAcceptBackoffDoublesToBound(t *testing.T) {
	var b AcceptBackoff
	var got []time.Duration
	for range 13 {
		got = append(got, b.Next())
	}
	if got[0] != MinAcceptBackoff || got[1] != 2*MinAcceptBackoff || got[12] != MaxAcceptBackoff {
		t.Fatalf("delays %v: want 1ms, 2ms, … capped at 1s", got)
	}
	b.Reset()
	if d := b.Next(); d != MinAcceptBackoff {
		t.Fatalf("after Reset: %v", d)
	}
}

func TestAcceptFailedCountsAndStops(t *testing.T) {
	var counters models.Counters
	sh := counters.NewThreadShard("acceptor")
	var b AcceptBackoff
	stop := make(chan struct{})
	if !b.AcceptFailed(unix.ECONNREFUSED, sh, stop) {
		t.Fatal("a non-temporary error stopped the acceptor")
	}
	// Retried, uncounted: the accept policy's EINTR and ECONNABORTED.
	if !b.AcceptFailed(unix.EINTR, sh, stop) || !b.AcceptFailed(unix.ECONNABORTED, sh, stop) {
		t.Fatal("EINTR or ECONNABORTED stopped the acceptor")
	}
	close(stop)
	if b.AcceptFailed(unix.EMFILE, sh, stop) {
		t.Fatal("EMFILE with stop closed: the acceptor was not told to return")
	}
	var st models.Stats
	counters.Stats(&st)
	if st.Errors[models.ErrAccept] != 1 || st.Errors[models.ErrAcceptBackoff] != 1 {
		t.Fatalf("errors %v", st.Errors)
	}
}
