package connio

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"strings"
	"testing"

	"concbench/handleset"
	"concbench/models"
	"concbench/models/modeltest"
	"concbench/wire"

	"golang.org/x/sys/unix"
)

// pairListener is a Listener whose connections are real: each Accept
// returns one end of a new socket pair (its peer kept for the test to read
// what the server wrote), or the scripted error.
type pairListener struct {
	t       *testing.T
	results []error // nil: a connection
	peers   []int   // the client end of each connection, in order
}

func (l *pairListener) Accept() (int, netip.AddrPort, error) {
	if len(l.results) == 0 {
		return -1, netip.AddrPort{}, os.NewSyscallError("accept4", unix.EAGAIN)
	}
	err := l.results[0]
	l.results = l.results[1:]
	if err != nil {
		return -1, netip.AddrPort{}, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		l.t.Fatal(err)
	}
	l.peers = append(l.peers, fds[1])
	l.t.Cleanup(func() { unix.Close(fds[1]) })
	return fds[0], netip.AddrPort{}, nil
}

// peerReads returns everything the server wrote to connection i before it
// closed it (it must have closed it: the read ends at the end of stream).
func (l *pairListener) peerReads(i int) string {
	b, err := io.ReadAll(os.NewFile(uintptr(must(unix.Dup(l.peers[i]))), "peer"))
	if err != nil {
		l.t.Fatal(err)
	}
	return string(b)
}

func must(fd int, err error) int {
	if err != nil {
		panic(err)
	}
	return fd
}

// TestAcceptAdmitted: a batch admits up to the cap and counts each
// admitted connection before register sees it; one past the cap is
// answered with the refusal and closed; an accept error is counted as
// ErrAccept; register's false ends the batch as closed.
func TestAcceptAdmitted(t *testing.T) {
	codec := modeltest.Codec(t, "http", wire.Limits{})
	tests := []struct {
		name       string
		results    []error
		maxConns   int
		closing    bool // register reports the set closed
		registered int
		refused    int
		errAccept  uint64
	}{
		{name: "up-to-the-cap", results: make([]error, 3), maxConns: 2, registered: 2, refused: 1},
		{name: "no-cap", results: make([]error, 3), registered: 3},
		{name: "accept-error", results: []error{nil, unix.EPERM, nil}, registered: 1, errAccept: 1},
		{name: "closing", results: make([]error, 3), closing: true, registered: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln := &pairListener{t: t, results: tc.results}
			limit := NewLimit(&models.Config{Codec: codec, MaxConns: tc.maxConns}, "test")
			var counters models.Counters
			sh := counters.NewThreadShard("acceptor")
			var got []int
			_, closed := AcceptAdmitted(ln, new(AcceptBackoff), limit, sh, func(fd int) bool {
				var st models.Stats
				counters.Stats(&st)
				if st.ConnsAccepted != uint64(len(got)+1) {
					t.Errorf("register saw %d accepted, want %d: counted before it registers", st.ConnsAccepted, len(got)+1)
				}
				got = append(got, fd)
				unix.Close(fd)
				return !tc.closing
			})
			var st models.Stats
			counters.Stats(&st)
			if len(got) != tc.registered || closed != tc.closing {
				t.Errorf("registered %d, closed %v; want %d, %v", len(got), closed, tc.registered, tc.closing)
			}
			if st.ConnsAccepted != uint64(tc.registered+tc.refused) || st.Errors[models.ErrRefused] != uint64(tc.refused) ||
				st.Errors[models.ErrAccept] != tc.errAccept {
				t.Errorf("accepted %d, errors %v; want %d accepted, %d refused, %d accept errors",
					st.ConnsAccepted, st.Errors, tc.registered+tc.refused, tc.refused, tc.errAccept)
			}
			for i := tc.registered; i < tc.registered+tc.refused; i++ {
				if r := ln.peerReads(i); !strings.HasPrefix(r, "HTTP/1.1 503 ") {
					t.Errorf("connection %d past the cap read %q, want the refusal", i, r)
				}
			}
		})
	}
}

// nopHandler is an event handler that is never dispatched here.
type nopHandler struct{}

func (nopHandler) HandleEvent(int, handleset.Events) {}

// TestConns: a connection registered is counted open; Close forgets,
// closes and counts it and gives its place back; a set that refuses the
// registration gets the connection closed at once, reported as the
// server stopping when the set is closed; CloseAll closes the rest.
func TestConns(t *testing.T) {
	set, err := handleset.New()
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	codec := modeltest.Codec(t, "binary", wire.Limits{})
	limit := NewLimit(&models.Config{Codec: codec, MaxConns: 3}, "test")
	var counters models.Counters
	sh := counters.NewThreadShard("pool")
	conns := NewConns[nopHandler](nil, limit)
	ln := &pairListener{t: t, results: make([]error, 3)}
	var fds []int
	for range 3 {
		fd, _, _ := ln.Accept()
		if !limit.Accept(fd, sh) {
			t.Fatal("refused below the cap")
		}
		if !conns.Register(set, fd, nopHandler{}, new(Timer), sh) {
			t.Fatal("Register reported the set closed")
		}
		fds = append(fds, fd)
	}
	if conns.Len() != 3 || limit.Open() != 3 {
		t.Fatalf("%d open, %d places taken; want 3, 3", conns.Len(), limit.Open())
	}
	set.Unregister(fds[0])
	conns.Close(fds[0], sh)
	if conns.Len() != 2 || limit.Open() != 2 || ln.peerReads(0) != "" {
		t.Fatalf("after Close: %d open, %d places taken; want 2, 2 and the connection closed", conns.Len(), limit.Open())
	}
	if errs := conns.CloseAll(sh); conns.Len() != 0 || errors.Join(errs...) != nil {
		t.Fatalf("after CloseAll: %d open, errors %v", conns.Len(), errs)
	}
	set.Close()
	fd, _, _ := (&pairListener{t: t, results: make([]error, 1)}).Accept()
	limit.Admit()
	if conns.Register(set, fd, nopHandler{}, new(Timer), sh) || conns.Len() != 0 {
		t.Fatalf("a closed set: Register reported it open, or kept the connection (%d open)", conns.Len())
	}
	var st models.Stats
	counters.Stats(&st)
	if st.ConnsClosed != 4 || st.Errors[models.ErrIO] != 0 {
		t.Errorf("closed %d, errors %v; want 4 closed and no I/O error for a closed set", st.ConnsClosed, st.Errors)
	}
}

// TestFatalKeepsTheFirst: the first error recorded is the one returned,
// wrapped with its prefix; later ones are its consequences.
func TestFatalKeepsTheFirst(t *testing.T) {
	var f Fatal
	if f.Err() != nil {
		t.Fatal("the zero value holds an error")
	}
	first := errors.New("first")
	f.Set("model: stopped", first)
	f.Set("model: stopped", errors.New("second"))
	if err := f.Err(); !errors.Is(err, first) || err.Error() != "model: stopped: first" {
		t.Fatalf("Err() = %v, want the first, wrapped", err)
	}
}
