package proactor

import (
	"bytes"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"concbench/handleset"
	"concbench/internal/sysstat"
	"concbench/internal/uring"
	"concbench/internal/uring/uringtest"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"

	"golang.org/x/sys/unix"
)

// requireURing skips the test, with the reason, where io_uring is
// unavailable.
func requireURing(t testing.TB) {
	t.Helper()
	if err := uring.Available(); err != nil {
		t.Skip(err.Error())
	}
}

// requireMultishot skips the test where the kernel lacks multishot receive.
func requireMultishot(t testing.TB) {
	t.Helper()
	requireURing(t)
	if ok, err := probeKernel(); err != nil || !ok {
		t.Skipf("multishot receive unavailable (%v)", err)
	}
}

// optionsCase is a subtest's name and the options it starts the model with.
type optionsCase struct {
	name string
	opts Options
}

// recvModes are the model's two ways to receive, for the tests that
// run both.
var recvModes = []optionsCase{
	{name: "recv=auto"},
	{name: "recv=single", opts: Options{Recv: RecvSingle}},
}

func TestConformance(t *testing.T) {
	requireURing(t)
	// Two tiny buffers per ring: receives run out of buffers all the
	// time, so the ENOBUFS and re-arm paths carry the whole suite.
	tests := append(slices.Clone(recvModes), optionsCase{name: "buffers=2x64", opts: Options{Buffers: 2, BufferSize: 64}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				return Start(cfg, tc.opts)
			})
		})
	}
	// Two registered-file slots per ring: most connections are served by
	// their descriptors, the first two of each ring by registered files,
	// and slots pass from one kind to the other as connections come and
	// go (not in parallel: it sets maxFixedFiles).
	saved := maxFixedFiles
	maxFixedFiles = 2
	defer func() { maxFixedFiles = saved }()
	for _, tc := range recvModes {
		t.Run("files=2,"+tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				return Start(cfg, tc.opts)
			})
		})
	}
}

// testConfig returns a configuration for tests of the model alone.
func testConfig(t testing.TB, protocol string) models.Config {
	t.Helper()
	return modeltest.Config(t, protocol, 2, service.Config{Accounts: 8, InitialBalance: 100})
}

// start starts a server, closed at cleanup.
func start(t testing.TB, cfg models.Config, opts Options) *Server {
	t.Helper()
	return modeltest.Start(t, func() (*Server, error) { return Start(cfg, opts) })
}

// dial connects a client to s through dialer (nil: a plain one), closed
// when t ends.
func dial(t testing.TB, s *Server, codec wire.Codec, dialer *net.Dialer) *modeltest.Client {
	t.Helper()
	return modeltest.Connect(t, dialer, s.Addr().String(), codec)
}

func TestStats(t *testing.T) {
	requireURing(t)
	const conns, depth = 6, 5
	cfg := testConfig(t, "binary")
	s := start(t, cfg, Options{})
	for i := range conns {
		c := dial(t, s, cfg.Codec, nil)
		reqs := make([]*wire.Request, depth)
		for k := range reqs {
			reqs[k] = &wire.Request{ID: uint64(i*depth + k), Op: wire.OpWork, Size: 100 * k}
		}
		if err := c.Send(reqs...); err != nil {
			t.Fatal(err)
		}
		if err := c.Expect(reqs...); err != nil {
			t.Fatal(err)
		}
	}
	// The client holds every response, but the send completion of the
	// last responses may not be reaped yet: wait for the per-thread
	// events to cover an accept, a receive and a send per connection
	// (a condition, polled with a deadline; no fixed sleep).
	st := s.Stats()
	for deadline := time.Now().Add(10 * time.Second); eventsOf(st) < 3*conns && time.Now().Before(deadline); st = s.Stats() {
		time.Sleep(time.Millisecond)
	}
	multishot, err := probeKernel()
	if err != nil {
		t.Fatal(err)
	}
	if st.Model != "proactor" || st.Variant != variant(multishot) || st.Threads != cfg.Threads {
		t.Errorf("model %q, variant %q, threads %d; want proactor, %q, %d", st.Model, st.Variant, st.Threads, variant(multishot), cfg.Threads)
	}
	if st.Requests != conns*depth || st.ConnsAccepted != conns {
		t.Errorf("requests %d, accepted %d; want %d, %d", st.Requests, st.ConnsAccepted, conns*depth, conns)
	}
	if len(st.PerThread) != cfg.Threads {
		t.Fatalf("%d per-thread entries, want %d", len(st.PerThread), cfg.Threads)
	}
	var events, requests uint64
	for _, th := range st.PerThread {
		if th.Role != "dispatcher" || th.TID == 0 {
			t.Errorf("thread %+v: want role dispatcher and a TID", th)
		}
		events += th.Events
		requests += th.Requests
	}
	if requests != st.Requests {
		t.Errorf("threads served %d requests, total %d", requests, st.Requests)
	}
	c := st.Counters
	if c["accepts"] != conns {
		t.Errorf("accepts counter %d, want %d", c["accepts"], conns)
	}
	// Every completion dispatched is an event; each connection had at least
	// an accept, a receive and a send completion (waited for above).
	if events != c["completions"] || events < 3*conns {
		t.Errorf("events %d, completions %d; want equal and at least %d", events, c["completions"], 3*conns)
	}
	if c["sqes_submitted"] < 2*conns || c["enter_calls"] == 0 {
		t.Errorf("sqes_submitted %d, enter_calls %d", c["sqes_submitted"], c["enter_calls"])
	}
	for _, k := range []string{"recv_multishot_rearms", "partial_sends", "buffers_exhausted", "backpressure_pauses", "plain_files"} {
		if _, ok := c[k]; !ok {
			t.Errorf("counter %s missing: %v", k, c)
		}
	}
	if c["plain_files"] != 0 {
		t.Errorf("%d connections served by their descriptors, want every one by a registered file", c["plain_files"])
	}
}

// TestCloseReleasesRings checks that Close leaves no io_uring descriptor
// and no mapping of a ring or its buffers, with connections in every state
// open: idle, mid-request, and blocked sending to a client that does not
// read.
func TestCloseReleasesRings(t *testing.T) {
	requireURing(t)
	base := uringtest.Before(t)
	cfg := testConfig(t, "binary")
	cfg.Threads = 3
	s, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var regions []uring.Region
	for _, p := range s.procs {
		regions = append(regions, p.ring.Regions()...)
	}
	mapped := base.Opened(t, cfg.Threads, regions) // a ring per thread
	for i := range 6 {
		c := dial(t, s, cfg.Codec, nil)
		raw := cfg.Codec.AppendRequest(nil, &wire.Request{ID: uint64(i), Op: wire.OpWork, Size: 1 << 20})
		switch i % 3 {
		case 1:
			raw = raw[:len(raw)/2] // mid-request
		case 2:
			raw = nil // idle
		}
		if err := c.SendRaw(raw); err != nil {
			t.Fatal(err)
		}
	}
	if !modeltest.Settle(func() bool { return s.Stats().ConnsAccepted == 6 && s.Stats().Requests == 2 }) {
		t.Fatalf("server accepted %d connections, served %d requests", s.Stats().ConnsAccepted, s.Stats().Requests)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	base.Released(t, mapped)
	if st := s.Stats(); st.ConnsClosed != st.ConnsAccepted {
		t.Errorf("closed %d of %d connections", st.ConnsClosed, st.ConnsAccepted)
	}
}

// TestBackPressure checks that a connection whose output reaches
// MaxPendingOutput stops being received from, and resumes when the client
// reads.
func TestBackPressure(t *testing.T) {
	requireURing(t)
	for _, tc := range recvModes {
		t.Run(tc.name, func(t *testing.T) {
			const n = 64
			cfg := testConfig(t, "binary")
			cfg.Threads = 1
			cfg.MaxPendingOutput = 64 << 10
			s := start(t, cfg, tc.opts)
			c := dial(t, s, cfg.Codec, nil)
			reqs := make([]*wire.Request, n)
			for k := range reqs {
				reqs[k] = &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: 256 << 10}
			}
			// n × 256 KiB of responses is far more than the socket buffers
			// hold, so the server must stop; the requests themselves are
			// small and all sent at once.
			if err := c.Send(reqs...); err != nil {
				t.Fatal(err)
			}
			if !modeltest.Settle(func() bool { return s.Stats().Counters["backpressure_pauses"] > 0 }) {
				t.Fatalf("receiving never paused while the client read nothing: %v", s.Stats().Counters)
			}
			if st := s.Stats(); st.Requests >= n {
				t.Errorf("served all %d requests into a client that reads nothing", st.Requests)
			}
			if err := c.Expect(reqs...); err != nil {
				t.Fatal(err)
			}
			st := s.Stats()
			if st.Requests != n || len(st.Errors) != 0 {
				t.Errorf("requests %d, errors %v; want %d, none", st.Requests, st.Errors, n)
			}
		})
	}
}

// TestPartialSends checks that sends the kernel completes partially are
// resumed from where they stopped: a client with a tiny receive buffer gets
// large responses intact.
func TestPartialSends(t *testing.T) {
	requireURing(t)
	for _, protocol := range wire.Protocols {
		t.Run("protocol="+protocol, func(t *testing.T) {
			cfg := testConfig(t, protocol)
			s := start(t, cfg, Options{})
			c := dial(t, s, cfg.Codec, modeltest.SmallReceiveBuffer(4096))
			// 16 MiB of responses: more than the server's socket send
			// buffer can hold (net.ipv4.tcp_wmem's maximum is 4 MiB by
			// default) while the client drains through a 4 KiB window, so
			// sends must complete partially.
			size := min(1<<20, cfg.Codec.Limits().MaxPayload)
			reqs := make([]*wire.Request, 16)
			for k := range reqs {
				reqs[k] = &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: size - k}
			}
			reqs = append(reqs, &wire.Request{ID: 99, Op: wire.OpWork, Size: 10})
			if err := c.Send(reqs...); err != nil {
				t.Fatal(err)
			}
			if err := c.Expect(reqs...); err != nil {
				t.Fatal(err)
			}
			if st := s.Stats(); st.Counters["partial_sends"] == 0 {
				t.Errorf("no partial send counted for %d MiB into a 4 KiB receive window: %v", 16*size>>20, st.Counters)
			}
		})
	}
}

// TestBufferExhaustion checks receives that outrun the provided buffers:
// with one 64-byte buffer, a 4 KiB request exhausts the ring within one
// multishot receive, which ends with ENOBUFS and is re-armed.
func TestBufferExhaustion(t *testing.T) {
	requireMultishot(t)
	cfg := testConfig(t, "binary")
	cfg.Threads = 1
	s := start(t, cfg, Options{Buffers: 1, BufferSize: 64})
	c := dial(t, s, cfg.Codec, nil)
	req := &wire.Request{ID: 5, Op: wire.OpWork, Size: 10, Payload: bytes.Repeat([]byte("p"), 4096)}
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	if err := c.Expect(req); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Counters["buffers_exhausted"] == 0 || st.Counters["recv_multishot_rearms"] == 0 {
		t.Errorf("counters %v: want buffer exhaustion and re-arms", st.Counters)
	}
}

// TestResetAfterPartialRequest checks that a client that sends part of
// a request and resets the connection is always closed: without the
// hang-up poll (conn's hupPoll), about one such connection in 2 000 kept
// its multishot receive armed with no completion ever posted. 3 000
// clients, 20 at a time, each batch closed before the next.
func TestResetAfterPartialRequest(t *testing.T) {
	requireMultishot(t)
	cfg := testConfig(t, "binary")
	cfg.Threads = 4
	s := start(t, cfg, Options{})
	raw := cfg.Codec.AppendRequest(nil, &wire.Request{ID: 1, Op: wire.OpWork, Size: 10})
	half := raw[:len(raw)/2]
	const batches, batch = 150, 20
	for b := range batches {
		for range batch {
			c, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(half); err != nil {
				t.Fatal(err)
			}
			c.(*net.TCPConn).SetLinger(0) // close with RST
			c.Close()
		}
		want := uint64((b + 1) * batch)
		if !modeltest.Settle(func() bool { st := s.Stats(); return st.ConnsAccepted >= want && st.ConnsClosed == st.ConnsAccepted }) {
			st := s.Stats()
			t.Fatalf("batch %d: accepted %d connections of %d, closed %d", b, st.ConnsAccepted, want, st.ConnsClosed)
		}
	}
}

// TestStartUnavailable checks that Start, where io_uring_setup is denied
// (here by a seccomp filter in a child process), fails and says why.
func TestStartUnavailable(t *testing.T) {
	if child, err := uringtest.Denied(); child {
		if err != nil {
			fmt.Println("FILTER:", err)
			return
		}
		s, err := Start(testConfig(t, "http"), Options{})
		if s != nil {
			s.Close()
		}
		fmt.Println("START:", err)
		return
	}
	requireURing(t)
	out := uringtest.RunDenied(t, "^TestStartUnavailable$", syscall.EPERM)
	want := "START: proactor: uring: io_uring_setup: operation not permitted (kernel.io_uring_disabled="
	if !strings.Contains(out, want) || !strings.Contains(out, "seccomp") {
		t.Errorf("child output lacks %q and the seccomp reason:\n%s", want, out)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string // "" for valid
	}{
		{name: "defaults"},
		{name: "single", opts: Options{Recv: RecvSingle}},
		{name: "bad-mode", opts: Options{Recv: "sometimes"}, want: "receive mode"},
		{name: "buffers-not-pow2", opts: Options{Buffers: 100}, want: "100 buffers"},
		{name: "buffers-too-many", opts: Options{Buffers: 1 << 16}, want: "buffers"},
		{name: "buffer-size", opts: Options{BufferSize: 10}, want: "buffer size"},
		{name: "entries", opts: Options{Entries: 3}, want: "ring entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.opts.withDefaults()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestListenGroup checks the SO_REUSEPORT group: one port, one socket per
// thread, and accepted sockets that inherit TCP_NODELAY.
func TestListenGroup(t *testing.T) {
	fds, addr, err := listenGroup("127.0.0.1:0", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if len(fds) != 3 || addr.Port() == 0 {
		t.Fatalf("%d sockets on %v", len(fds), addr)
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pfds := make([]unix.PollFd, len(fds))
	for i, fd := range fds {
		pfds[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	if n, err := unix.Poll(pfds, 30_000); err != nil || n != 1 {
		t.Fatalf("poll: %d ready, %v; want the one socket the connection was hashed to", n, err)
	}
	for i, pfd := range pfds {
		if pfd.Revents&unix.POLLIN == 0 {
			continue
		}
		nfd, _, err := unix.Accept4(fds[i], unix.SOCK_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(nfd)
		if v, err := unix.GetsockoptInt(nfd, unix.IPPROTO_TCP, unix.TCP_NODELAY); err != nil || v == 0 {
			t.Errorf("accepted socket: TCP_NODELAY %d (%v); want inherited from the listener", v, err)
		}
	}
}

// TestOutPendingBytesStable guards the assumption the send path makes about
// connio.Out (see conn.sending): appending responses never changes the
// pending bytes in place, even when the buffer is reallocated, and only
// Advance consumes them.
func TestOutPendingBytesStable(t *testing.T) {
	codec := modeltest.Codec(t, "binary", wire.Limits{})
	var out connio.Out
	out.AppendResponse(codec, &wire.Response{ID: 1, Payload: bytes.Repeat([]byte("a"), 1000)})
	inFlight := out.Bytes()
	want := bytes.Clone(inFlight)
	for i := range 50 { // grows the buffer many times
		out.AppendResponse(codec, &wire.Response{ID: uint64(i + 2), Payload: bytes.Repeat([]byte("b"), 5000)})
		if !bytes.Equal(inFlight, want) {
			t.Fatalf("append %d modified the bytes in flight", i)
		}
	}
	out.Advance(len(inFlight) / 2)
	if !bytes.Equal(inFlight, want) {
		t.Fatal("a partial Advance modified the bytes in flight")
	}
	if !bytes.Equal(out.Bytes()[:len(want)-len(want)/2], want[len(want)/2:]) {
		t.Fatal("after a partial Advance the rest of the bytes in flight are not next")
	}
}

// BenchmarkRoundTrip measures one request's round trip through a
// dispatcher thread over a socket pair: the kernel completes the receive,
// the dispatcher serves the request and initiates the send, the kernel
// completes it. The client is the benchmark goroutine, blocking in write
// and read on the other end.
func BenchmarkRoundTrip(b *testing.B) {
	requireURing(b)
	for _, protocol := range wire.Protocols {
		for _, recv := range []string{RecvMultishot, RecvSingle} {
			b.Run("proto="+protocol+"/recv="+recv, func(b *testing.B) {
				if recv == RecvMultishot {
					requireMultishot(b)
				}
				benchRoundTrip(b, protocol, Options{Recv: recv})
			})
		}
	}
}

func benchRoundTrip(b *testing.B, protocol string, opts Options) {
	cfg := testConfig(b, protocol)
	cfg.Threads = 1
	cfg = cfg.WithDefaults(1)
	opts, err := opts.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(sp[1])
	w, err := handleset.NewWakeup()
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{cfg: cfg, opts: opts, variant: variant(opts.Recv == RecvMultishot)}
	p := &proactor{s: s, lfd: -1, wake: w, multishot: opts.Recv == RecvMultishot, adopted: []int{sp[0]},
		sh: s.counters.NewThreadShard("dispatcher")}
	s.procs = []*proactor{p}
	ready := make(chan error, 1)
	s.wg.Go(func() { p.run(ready) })
	if err := <-ready; err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	req := &wire.Request{ID: 1, Op: wire.OpWork, Size: 64}
	raw := cfg.Codec.AppendRequest(nil, req)
	in := make([]byte, 4096)
	var resp wire.Response
	roundTrip := func() {
		if _, err := unix.Write(sp[1], raw); err != nil {
			b.Fatal(err)
		}
		have := 0
		for {
			n, err := unix.Read(sp[1], in[have:])
			if err != nil || n == 0 {
				b.Fatalf("read: %d, %v", n, err)
			}
			have += n
			if k, err := cfg.Codec.DecodeResponse(in[:have], &resp); err != nil {
				b.Fatal(err)
			} else if k == have {
				return
			}
		}
	}
	roundTrip() // warm up: the connection's buffers exist
	r0, err := sysstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		roundTrip()
	}
	b.StopTimer()
	r1, err := sysstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	if err := wire.Verify(req, &resp); err != nil {
		b.Fatal(err)
	}
	ctxsw := (r1.Voluntary + r1.Involuntary) - (r0.Voluntary + r0.Involuntary)
	b.ReportMetric(float64(ctxsw)/float64(b.N), "ctxsw/op")
}

// eventsOf sums the completions the dispatcher threads have handled.
func eventsOf(st models.Stats) uint64 {
	var n uint64
	for _, th := range st.PerThread {
		n += th.Events
	}
	return n
}
