package sysstat

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseThreads(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int
		ok   bool
	}{
		{name: "status", in: "Name:\tx\nState:\tS (sleeping)\nThreads:\t4097\nSigQ:\t0/1\n", want: 4097, ok: true},
		{name: "no line", in: "Name:\tx\n", ok: false},
		{name: "garbage", in: "Threads:\tmany\n", ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseThreads([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseThreads = %d, %v; want %d, ok %t", got, err, tc.want, tc.ok)
			}
		})
	}
}

// parkThreads starts n goroutines locked to their threads and parked until
// the test ends: n more threads in this process.
func parkThreads(tb testing.TB, n int) {
	release := make(chan struct{})
	started := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			started <- struct{}{}
			<-release
		}()
	}
	for range n {
		<-started
	}
	tb.Cleanup(func() { close(release) })
}

// TestThreadsAndOpenFDs checks the counts against threads and descriptors
// the test itself holds.
func TestThreadsAndOpenFDs(t *testing.T) {
	const threads, pipes = 8, 16
	parkThreads(t, threads)
	n, err := Threads(0)
	if err != nil {
		t.Fatal(err)
	}
	if n < threads+1 {
		t.Errorf("Threads = %d with %d threads parked, want ≥ %d", n, threads, threads+1)
	}
	if m, err := Threads(os.Getpid()); err != nil || m < threads+1 {
		t.Errorf("Threads(own pid) = %d, %v; want ≥ %d", m, err, threads+1)
	}

	before, err := OpenFDs(0)
	if err != nil {
		t.Fatal(err)
	}
	for range pipes {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	}
	after, err := OpenFDs(0)
	if err != nil {
		t.Fatal(err)
	}
	if after-before != 2*pipes {
		t.Errorf("OpenFDs rose by %d after %d pipes, want %d", after-before, pipes, 2*pipes)
	}
}

// TestOpenSockets checks the count against a listener and a pipe the
// test itself holds: the socket counts, the pipe does not.
func TestOpenSockets(t *testing.T) {
	before, err := OpenSockets(0)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer func() { unix.Close(p[0]); unix.Close(p[1]) }()
	after, err := OpenSockets(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before != 1 {
		t.Errorf("OpenSockets rose by %d after a listener and a pipe, want 1", after-before)
	}
}

// TestRaiseNoFile checks that the soft limit ends at the hard limit.
func TestRaiseNoFile(t *testing.T) {
	soft, hard, err := RaiseNoFile()
	if err != nil {
		t.Fatal(err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if soft != hard || lim.Cur != soft || lim.Max != hard {
		t.Errorf("RaiseNoFile = %d, %d; getrlimit says %d, %d; want the soft limit at the hard one", soft, hard, lim.Cur, lim.Max)
	}
}

// BenchmarkSchedByThread measures one read of every thread's
// scheduler counters, the harness's window-edge read, against the number of
// threads of the process read (this one, with that many threads parked):
//
//	go test -run '^$' -bench SchedByThread -benchtime 20x ./internal/sysstat
func BenchmarkSchedByThread(b *testing.B) {
	for _, n := range []int{64, 1024, 4096} {
		b.Run(fmt.Sprintf("threads=%d", n), func(b *testing.B) {
			parkThreads(b, n)
			b.ResetTimer()
			for b.Loop() {
				if _, err := SchedByThread(0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/thread")
		})
	}
}

// BenchmarkOpenFDs measures one listing of /proc/self/fd with n pipes'
// descriptors open: the harness reads it after each window.
func BenchmarkOpenFDs(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("fds=%d", 2*n), func(b *testing.B) {
			var lim unix.Rlimit
			if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(2*n+100) {
				b.Skipf("RLIMIT_NOFILE %d is below %d descriptors", lim.Cur, 2*n+100)
			}
			for range n {
				var p [2]int
				if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := OpenFDs(0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
