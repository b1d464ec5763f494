package modeltest

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"concbench/models"
	"concbench/service"
	"concbench/wire"
)

// StartFunc starts the model under test with cfg.
type StartFunc func(cfg models.Config) (models.Server, error)

// Ledger configuration of the suite's service.
const (
	ledgerAccounts = 64
	ledgerInitial  = 1000
)

// env is one protocol's test environment.
type env struct {
	start StartFunc
	codec wire.Codec
	svc   *service.Service
}

// Run runs the conformance suite against the model started by start, for
// both protocols. See the package documentation for what it checks.
func Run(t *testing.T, start StartFunc) {
	initNetpoll(t)
	svc, err := service.New(service.Config{Accounts: ledgerAccounts, InitialBalance: ledgerInitial})
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range wire.Protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			codec, err := wire.New(proto, wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			e := &env{start: start, codec: codec, svc: svc}
			tests := []struct {
				name string
				fn   func(*testing.T, *env)
				only string // run only for this protocol, if set
			}{
				{name: "Pipelined", fn: testPipelined},
				{name: "ByteAtATime", fn: testByteAtATime},
				{name: "PartialWrites", fn: testPartialWrites},
				{name: "SlowReader", fn: testSlowReader},
				{name: "Amplification", fn: testAmplification},
				{name: "SlowHeader", fn: testSlowHeader},
				{name: "AbruptDisconnect", fn: testAbruptDisconnect},
				{name: "Malformed", fn: testMalformed},
				{name: "MaxConns", fn: testMaxConns},
				{name: "BadConfig", fn: testBadConfig},
				{name: "ConnectionClose", fn: testConnectionClose, only: "http"},
				{name: "Ledger", fn: testLedger},
				{name: "LedgerLimits", fn: testLedgerLimits},
				{name: "Close", fn: testClose},
			}
			for _, tc := range tests {
				if tc.only != "" && tc.only != proto {
					continue
				}
				t.Run(tc.name, func(t *testing.T) { tc.fn(t, e) })
			}
		})
	}
	if err := svc.Ledger().Audit(); err != nil {
		t.Errorf("service ledger after the suite: %v", err)
	}
}

// initNetpoll makes the Go runtime open its netpoller (an epoll and an
// eventfd, kept for the process's life) before any test takes its count
// of descriptors: it opens lazily, at the first use of package net, and a
// test run alone (go test -run, or the test binary run directly) would
// otherwise count those two as leaked by the first server it starts.
func initNetpoll(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}

// resources are what a server must give back when it closes.
type resources struct {
	fds, goroutines int
	tids            map[int]bool // the process's threads
}

func count(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	return len(ents)
}

func threadIDs() map[int]bool {
	ids := map[int]bool{}
	ents, _ := os.ReadDir("/proc/self/task")
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids[id] = true
		}
	}
	return ids
}

func takeResources() resources {
	return resources{fds: count("/proc/self/fd"), goroutines: runtime.NumGoroutine(), tids: threadIDs()}
}

// Settle polls cond, yielding the processor between polls, until it holds
// or 30 s pass, and reports whether it held. It never sleeps: the server's
// threads run while it yields. Tests use it to wait for a server to reach a
// state (a counter, a closed connection) without asserting any timing.
func Settle(cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// SmallReceiveBuffer returns a dialer whose connections have a receive
// buffer of about size bytes (SO_RCVBUF, set before connecting so that
// the window is small from the start): a client whose kernel cannot
// absorb a server's output on its behalf.
func SmallReceiveBuffer(size int) *net.Dialer {
	return &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
		})
		return errors.Join(err, serr)
	}}
}

// WaitFor is Settle that fails t, naming what it waited for, if cond does
// not come to hold.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Settle(cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// config is the suite's configuration of a server.
func (e *env) config() models.Config {
	return models.Config{Addr: "127.0.0.1:0", Threads: 4, Codec: e.codec, Service: e.svc}
}

// startServer starts the model with the suite's configuration and
// registers a cleanup that closes it and checks that it leaked nothing.
func (e *env) startServer(t *testing.T) models.Server {
	t.Helper()
	return e.startServerWith(t, func(*models.Config) {})
}

// startServerWith is startServer with the suite's configuration changed
// by set.
func (e *env) startServerWith(t *testing.T, set func(*models.Config)) models.Server {
	t.Helper()
	before := takeResources()
	cfg := e.config()
	set(&cfg)
	srv, err := e.start(cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		var tids []int
		for _, th := range srv.Stats().PerThread {
			if th.TID != 0 {
				tids = append(tids, th.TID)
			}
		}
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkReleased(t, before, tids)
	})
	return srv
}

// checkReleased verifies that descriptors, goroutines and threads are back
// to what they were: the same descriptors and goroutine count, every thread
// the model reported gone (models' threads exit locked, so the runtime
// destroys them), and no thread created meanwhile still busy.
func checkReleased(t *testing.T, before resources, tids []int) {
	t.Helper()
	runtime.LockOSThread() // see busyNewThreads
	defer runtime.UnlockOSThread()
	alive := func() []int {
		var live []int
		for _, tid := range tids {
			if tid == os.Getpid() {
				// The main thread (m0): a locked goroutine that exits on it
				// cannot take it along; the runtime parks ("wedges") it.
				continue
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
				live = append(live, tid)
			}
		}
		return live
	}
	ok := Settle(func() bool {
		now := takeResources()
		return now.fds <= before.fds && now.goroutines <= before.goroutines &&
			len(alive()) == 0 && len(busyNewThreads(before.tids)) == 0
	})
	now := takeResources()
	if !ok {
		if now.fds > before.fds {
			t.Errorf("descriptors: %d open after Close, %d before start:\n%s", now.fds, before.fds, listFDs())
		}
		if now.goroutines > before.goroutines {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutines: %d after Close, %d before start:\n%s", now.goroutines, before.goroutines, buf)
		}
		if live := alive(); len(live) > 0 {
			t.Errorf("model threads still alive after Close: %v", live)
		}
		if busy := busyNewThreads(before.tids); len(busy) > 0 {
			t.Errorf("threads created while the server ran are still busy after Close: %v", busy)
		}
	}
	t.Logf("threads: %d before start, %d after Close (new idle runtime threads are allowed)", len(before.tids), len(now.tids))
}

func listFDs() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		fmt.Fprintf(&b, "  %s -> %s\n", e.Name(), target)
	}
	return b.String()
}

// parallel runs fn(i) for i in [0, n) concurrently and returns the first
// errors (at most 5, joined).
func parallel(n int, fn func(i int) error) error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := fn(i); err != nil {
				mu.Lock()
				if len(errs) < 5 {
					errs = append(errs, fmt.Errorf("worker %d: %w", i, err))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// workRequest returns an OpWork request with a varied size and work.
func workRequest(id uint64, size int) *wire.Request {
	r := &wire.Request{ID: id, Op: wire.OpWork, Size: size, Priority: uint8(id % 3)}
	switch id % 16 {
	case 0:
		r.CPU = 2 * time.Microsecond
	case 5:
		r.Block = 50 * time.Microsecond
	}
	return r
}

// serveWell runs conns connections of rounds × depth pipelined requests and
// verifies every response. base distinguishes the ids of separate calls.
func serveWell(addr string, codec wire.Codec, base uint64, conns, rounds, depth int) error {
	return parallel(conns, func(i int) error {
		c, err := dial(addr, codec)
		if err != nil {
			return err
		}
		defer c.close()
		reqs := make([]*wire.Request, depth)
		for r := range rounds {
			for k := range reqs {
				id := base + uint64(i)<<20 + uint64(r*depth+k)
				reqs[k] = workRequest(id, int(id*7919%1500))
			}
			if err := c.roundTrip(reqs); err != nil {
				return err
			}
		}
		return nil
	})
}

func testPipelined(t *testing.T, e *env) {
	const conns, rounds, depth = 256, 4, 8
	srv := e.startServer(t)
	if err := serveWell(srv.Addr().String(), e.codec, 1<<40, conns, rounds, depth); err != nil {
		t.Fatal(err)
	}
	st := srv.Stats()
	if want := uint64(conns * rounds * depth); st.Requests != want {
		t.Errorf("server counted %d requests, clients sent %d", st.Requests, want)
	}
	if len(st.Errors) != 0 {
		t.Errorf("errors counted in a clean run: %v", st.Errors)
	}
	if st.ConnsAccepted != conns {
		t.Errorf("server accepted %d connections, clients opened %d", st.ConnsAccepted, conns)
	}
}

func testByteAtATime(t *testing.T, e *env) {
	srv := e.startServer(t)
	err := parallel(8, func(i int) error {
		c, err := dial(srv.Addr().String(), e.codec)
		if err != nil {
			return err
		}
		defer c.close()
		payload := []byte(strings.Repeat("payload-", 40))
		reqs := []*wire.Request{
			workRequest(uint64(i)*10+1, 100),
			{ID: uint64(i)*10 + 2, Op: wire.OpWork, Size: 3000, Payload: payload},
			{ID: uint64(i)*10 + 3, Op: wire.OpBalance, Account: uint32(i)},
		}
		var raw []byte
		for _, r := range reqs {
			raw = e.codec.AppendRequest(raw, r)
		}
		for j := range raw {
			if err := c.sendRaw(raw[j : j+1]); err != nil {
				return err
			}
		}
		var resp wire.Response
		for _, r := range reqs {
			if err := c.recvChecked(r, &resp); err != nil {
				return err
			}
		}
		if resp.Status != wire.StatusOK || len(resp.Payload) == 0 {
			return fmt.Errorf("balance: status %v, payload %q", resp.Status, resp.Payload)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testPartialWrites(t *testing.T, e *env) {
	const conns, n = 3, 6
	size := min(1<<20, e.codec.Limits().MaxPayload)
	srv := e.startServer(t)
	err := parallel(conns, func(i int) error {
		c, err := dial(srv.Addr().String(), e.codec)
		if err != nil {
			return err
		}
		defer c.close()
		reqs := make([]*wire.Request, n)
		for k := range reqs {
			reqs[k] = &wire.Request{ID: uint64(i*n + k), Op: wire.OpWork, Size: size - k}
		}
		return c.roundTrip(reqs)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The client may read the last bytes before the server's write returns
	// and is counted: wait for the count.
	want := uint64(conns * n * (size - n))
	if !Settle(func() bool { return srv.Stats().BytesWritten >= want }) {
		t.Errorf("server counted %d bytes written, responses total at least %d", srv.Stats().BytesWritten, want)
	}
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func testSlowReader(t *testing.T, e *env) {
	const slowN = 32
	size := min(1<<20, e.codec.Limits().MaxPayload)
	srv := e.startServer(t)
	base := liveHeap()
	slow := connect(t, nil, srv.Addr().String(), e.codec)
	reqs := make([]*wire.Request, slowN)
	for k := range reqs {
		reqs[k] = &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: size}
	}
	if err := slow.send(reqs...); err != nil {
		t.Fatal(err)
	}
	// While the slow client reads nothing, everyone else is served.
	if err := serveWell(srv.Addr().String(), e.codec, 1<<40, 32, 4, 4); err != nil {
		t.Fatalf("other connections while a client does not read: %v", err)
	}
	// An unbounded server would by now hold most of slowN × size bytes.
	const bound = 24 << 20
	if grown := int64(liveHeap()) - int64(base); grown > bound {
		t.Errorf("live heap grew %d MiB while a client requested %d MiB and read none (bound %d MiB)",
			grown>>20, slowN*size>>20, bound>>20)
	}
	// Nothing was lost: the slow reader gets every response once it reads.
	var resp wire.Response
	for _, r := range reqs {
		if err := slow.recvChecked(r, &resp); err != nil {
			t.Fatalf("slow reader: %v", err)
		}
	}
}

// testAmplification is the memory-amplification attack: many clients each
// pipeline requests for 1 MiB bodies and read nothing. A server that
// materialised its responses would hold at least a megabyte per
// connection once each has had a response produced; the bound the models
// package states (ConnMemoryBound) must hold instead, and other clients
// must be served meanwhile.
func testAmplification(t *testing.T, e *env) {
	const conns, perConn = 64, 16
	size := min(1<<20, e.codec.Limits().MaxPayload)
	srv := e.startServer(t)
	var reqBytes []byte
	maxReq := 0
	for k := range perConn {
		n := len(reqBytes)
		reqBytes = e.codec.AppendRequest(reqBytes, &wire.Request{ID: uint64(k), Op: wire.OpWork, Size: size})
		maxReq = max(maxReq, len(reqBytes)-n)
	}
	base := liveHeap()
	// Small receive buffers, so that the kernel cannot absorb a response
	// on the attackers' behalf.
	d := SmallReceiveBuffer(4 << 10)
	attackers := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range attackers {
			c.Close()
		}
	}()
	for range conns {
		c, err := d.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		attackers = append(attackers, c)
		if _, err := c.Write(reqBytes); err != nil {
			t.Fatal(err)
		}
	}
	// Every attacking connection has had a response produced (the
	// attackers sent all requests; only they are connected).
	WaitFor(t, "a response produced on every attacking connection", func() bool {
		return srv.Stats().Requests >= conns
	})
	grown := int64(liveHeap()) - int64(base)
	bound := int64(conns * models.ConnMemoryBound(models.Config{Codec: e.codec}, maxReq))
	t.Logf("live heap grew %d KiB with %d connections each asking for %d × %d KiB and reading none (bound %d KiB)",
		grown>>10, conns, perConn, size>>10, bound>>10)
	if grown > bound {
		t.Errorf("live heap grew %d KiB with %d connections each asking for %d × %d KiB and reading none; the stated bound is %d KiB (%d per connection)",
			grown>>10, conns, perConn, size>>10, bound>>10, bound/conns>>10)
	}
	// Others are served meanwhile.
	if err := serveWell(srv.Addr().String(), e.codec, 1<<40, 8, 4, 4); err != nil {
		t.Fatalf("other connections during the attack: %v", err)
	}
}

// testSlowHeader: a client that sends part of a request and then nothing
// more is closed once its request has been incomplete for the header
// timeout, counted as header_timeout (and not also as truncated); a
// connection idle between requests is not timed and stays open; others
// are served meanwhile. It asserts no duration: the server is run with a
// short timeout, and the test waits for the close however long it takes.
func testSlowHeader(t *testing.T, e *env) {
	srv := e.startServerWith(t, func(c *models.Config) { c.HeaderTimeout = 50 * time.Millisecond })
	addr := srv.Addr().String()
	idle := connect(t, nil, addr, e.codec)
	if err := idle.roundTrip([]*wire.Request{workRequest(1, 8)}); err != nil {
		t.Fatalf("idle connection's first request: %v", err)
	}
	slow := connect(t, nil, addr, e.codec)
	whole := e.codec.AppendRequest(nil, workRequest(2, 8))
	if err := slow.sendRaw(whole[:len(whole)/2]); err != nil {
		t.Fatal(err)
	}
	// The server closes the slow connection, with nothing sent.
	if err := slow.expectEOF(); err != nil {
		t.Fatalf("slow connection: %v", err)
	}
	WaitFor(t, "the slow connection counted as header_timeout", func() bool {
		return srv.Stats().Errors[models.ErrHeaderTimeout] == 1
	})
	// The idle connection has been open longer than the timeout: it is
	// still served.
	if err := idle.roundTrip([]*wire.Request{workRequest(3, 8)}); err != nil {
		t.Fatalf("idle connection after the timeout: %v", err)
	}
	if err := serveWell(addr, e.codec, 1<<40, 4, 2, 2); err != nil {
		t.Fatalf("other connections: %v", err)
	}
	if st := srv.Stats(); st.Errors[models.ErrTruncated] != 0 || st.Errors[models.ErrHeaderTimeout] != 1 {
		t.Errorf("errors %v: want one header_timeout and no truncated", st.Errors)
	}
}

// isReset reports whether err is a connection reset.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func testAbruptDisconnect(t *testing.T, e *env) {
	const n = 8
	srv := e.startServer(t)
	addr := srv.Addr().String()
	var raw []byte
	raw = e.codec.AppendRequest(raw, workRequest(1, 10))
	half := raw[:len(raw)/2]
	for i := range n {
		c, err := dial(addr, e.codec)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.sendRaw(half); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			c.c.SetLinger(0) // close with RST instead of FIN
		}
		c.close()
	}
	// Clients that request large responses and vanish before reading them.
	for i := range n {
		c, err := dial(addr, e.codec)
		if err != nil {
			t.Fatal(err)
		}
		reqs := make([]*wire.Request, 4)
		for k := range reqs {
			reqs[k] = &wire.Request{ID: uint64(i*4 + k), Op: wire.OpWork, Size: 256 << 10}
		}
		if err := c.send(reqs...); err != nil {
			t.Fatal(err)
		}
		c.c.SetLinger(0)
		c.close()
	}
	if err := serveWell(addr, e.codec, 1<<40, 4, 2, 4); err != nil {
		t.Fatalf("service after abrupt disconnects: %v", err)
	}
	// Every connection accepted, then every one closed. The well-served
	// clients finishing first says nothing of the vanished ones: a model
	// with a listener per thread (SO_REUSEPORT: the Proactor, the
	// partitioned server) accepts each listener's queue on its own
	// thread, and a busy thread may not have taken the vanished ones off
	// its queue yet when another has served the others ("accepted 18 of
	// 20", once, on a loaded machine).
	if !Settle(func() bool { st := srv.Stats(); return st.ConnsAccepted >= 2*n+4 && st.ConnsClosed == st.ConnsAccepted }) {
		st := srv.Stats()
		t.Fatalf("server accepted %d connections (clients opened %d) and closed %d", st.ConnsAccepted, 2*n+4, st.ConnsClosed)
	}
	st := srv.Stats()
	if st.ConnsAccepted != 2*n+4 {
		t.Errorf("accepted %d connections, clients opened %d", st.ConnsAccepted, 2*n+4)
	}
	if got := st.Errors[models.ErrTruncated]; got < n/2 {
		t.Errorf("counted %d truncated requests, %d clients closed (FIN) mid-request; errors: %v", got, n/2, st.Errors)
	}
}

// malformedCase is one bad input and what the server must answer.
type malformedCase struct {
	name  string
	input []byte
	kind  wire.ErrorKind
	// valid is how many valid requests precede the bad input.
	valid int
}

func malformedCases(codec wire.Codec) []malformedCase {
	lim := codec.Limits()
	good := codec.AppendRequest(nil, workRequest(7, 10))
	patch := func(off int, b ...byte) []byte {
		p := slices.Clone(good)
		copy(p[off:], b)
		return p
	}
	if codec.Protocol() == "binary" {
		big := uint32(lim.MaxPayload + 1)
		return []malformedCase{
			{name: "garbage", input: []byte(strings.Repeat("X", 64)), kind: wire.KindMalformed},
			{name: "bad-version", input: patch(2, 99), kind: wire.KindUnsupported},
			{name: "unknown-op", input: patch(3, 200), kind: wire.KindMalformed},
			{name: "oversized-payload", input: patch(36, byte(big), byte(big>>8), byte(big>>16), byte(big>>24)), kind: wire.KindTooLarge},
			{name: "valid-then-garbage", input: append(slices.Clone(good), strings.Repeat("Z", 48)...), kind: wire.KindMalformed, valid: 1},
		}
	}
	return []malformedCase{
		{name: "garbage", input: []byte("HELLO THERE\r\n\r\n"), kind: wire.KindMalformed},
		{name: "bad-method", input: []byte("POST /work HTTP/1.1\r\nHost: x\r\n\r\n"), kind: wire.KindUnsupported},
		{name: "bad-param", input: []byte("GET /work?cpu=banana HTTP/1.1\r\nHost: x\r\n\r\n"), kind: wire.KindMalformed},
		{name: "header-too-large", input: []byte("GET /work HTTP/1.1\r\nX-Pad: " + strings.Repeat("a", lim.MaxHeader+10)), kind: wire.KindHeaderTooLarge},
		{name: "body-too-large", input: fmt.Appendf(nil, "GET /work HTTP/1.1\r\nContent-Length: %d\r\n\r\n", lim.MaxPayload+1), kind: wire.KindTooLarge},
		{name: "valid-then-garbage", input: append(slices.Clone(good), "NONSENSE\r\n\r\n"...), kind: wire.KindMalformed, valid: 1},
	}
}

func testMalformed(t *testing.T, e *env) {
	srv := e.startServer(t)
	addr := srv.Addr().String()
	cases := malformedCases(e.codec)
	var wg sync.WaitGroup
	var goodErr error
	wg.Go(func() {
		goodErr = serveWell(addr, e.codec, 1<<40, 16, 4, 4)
	})
	want := map[string]uint64{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, nil, addr, e.codec)
			if err := c.sendRaw(tc.input); err != nil {
				t.Fatal(err)
			}
			var resp wire.Response
			for range tc.valid {
				if err := c.recv(&resp); err != nil {
					t.Fatal(err)
				}
				if resp.Status != wire.StatusOK {
					t.Fatalf("valid request before the bad input: status %v", resp.Status)
				}
			}
			if err := c.recv(&resp); err != nil {
				t.Fatalf("no error response: %v", err)
			}
			if resp.Status == wire.StatusOK {
				t.Fatalf("bad input answered with status ok")
			}
			if !resp.Close && e.codec.Protocol() == "http" {
				t.Errorf("error response does not announce Connection: close")
			}
			if err := c.expectEOF(); err != nil {
				t.Fatal(err)
			}
		})
		want[tc.kind.String()]++
	}
	wg.Wait()
	if goodErr != nil {
		t.Fatalf("well-behaved connections during malformed input: %v", goodErr)
	}
	st := srv.Stats()
	for kind, n := range want {
		if st.Errors[kind] != n {
			t.Errorf("errors[%s] = %d, want %d (all: %v)", kind, st.Errors[kind], n, st.Errors)
		}
	}
}

// testBadConfig: a setting out of range fails Start with an error that
// names it, and leaves nothing behind (no listener, goroutine or thread).
func testBadConfig(t *testing.T, e *env) {
	for _, tc := range []struct {
		name string
		set  func(*models.Config)
	}{
		{"backlog", func(c *models.Config) { c.Backlog = models.MaxBacklog + 1 }},
		{"max conns", func(c *models.Config) { c.MaxConns = -1 }},
		{"max pending output", func(c *models.Config) { c.MaxPendingOutput = -1 }},
	} {
		before := takeResources()
		cfg := e.config()
		tc.set(&cfg)
		srv, err := e.start(cfg)
		if err == nil {
			srv.Close()
			t.Fatalf("%s out of range: the server started", tc.name)
		}
		if !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s out of range: error %q does not name it", tc.name, err)
		}
		checkReleased(t, before, nil)
	}
}

// testMaxConns: with Config.MaxConns 2, a third connection is refused at
// once — status unavailable with a reason that names the cap, then the end
// of the stream — and counted as refused; the first two keep their
// service; once one of them closes, a new connection is served in its
// place.
func testMaxConns(t *testing.T, e *env) {
	const maxConns = 2
	srv := e.startServerWith(t, func(c *models.Config) { c.MaxConns = maxConns })
	addr := srv.Addr().String()
	var open []*client
	defer func() {
		for _, c := range open {
			c.close()
		}
	}()
	id := uint64(0)
	serve := func(what string, c *client) {
		t.Helper()
		id++
		if err := c.roundTrip([]*wire.Request{workRequest(id, 16)}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for i := range maxConns {
		c, err := dial(addr, e.codec)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		serve(fmt.Sprintf("connection %d of %d", i+1, maxConns), c)
	}

	extra := connect(t, nil, addr, e.codec)
	var resp wire.Response
	if err := extra.recv(&resp); err != nil {
		t.Fatalf("connection past the cap: no refusal: %v", err)
	}
	reason := string(resp.Payload)
	if resp.Status != wire.StatusUnavailable || !strings.Contains(reason, "--max-conns") ||
		!strings.Contains(reason, fmt.Sprintf("all %d connections", maxConns)) {
		t.Fatalf("connection past the cap: status %v, payload %q; want unavailable with a reason naming --max-conns and %d connections",
			resp.Status, reason, maxConns)
	}
	if !resp.Close && e.codec.Protocol() == "http" {
		t.Errorf("refusal does not announce Connection: close")
	}
	if err := extra.expectEOF(); err != nil {
		t.Fatalf("connection past the cap: %v", err)
	}
	WaitFor(t, "the refusal counted", func() bool { return srv.Stats().Errors[models.ErrRefused] == 1 })

	for i, c := range open {
		serve(fmt.Sprintf("connection %d after the refusal", i+1), c)
	}
	// A place given back is a place for the next client: the refused
	// connection and this one are the server's closed ones.
	open[0].close()
	open = open[1:]
	WaitFor(t, "the closed connection counted", func() bool { return srv.Stats().ConnsClosed == 2 })
	next, err := dial(addr, e.codec)
	if err != nil {
		t.Fatal(err)
	}
	open = append(open, next)
	serve("a connection after one closed", next)
	serve("the connection left open", open[0])

	st := srv.Stats()
	if want := map[string]uint64{models.ErrRefused: 1}; !maps.Equal(st.Errors, want) {
		t.Errorf("errors %v, want %v", st.Errors, want)
	}
	if st.ConnsAccepted != maxConns+2 {
		t.Errorf("accepted %d connections (the refused one included), clients opened %d", st.ConnsAccepted, maxConns+2)
	}
}

func testConnectionClose(t *testing.T, e *env) {
	srv := e.startServer(t)
	tests := []struct {
		name string
		raw  []byte
	}{
		{name: "connection-close", raw: e.codec.AppendRequest(nil, &wire.Request{ID: 9, Op: wire.OpWork, Size: 5, Close: true})},
		{name: "http/1.0", raw: []byte("GET /work?size=5 HTTP/1.0\r\n\r\n")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, nil, srv.Addr().String(), e.codec)
			if err := c.sendRaw(tc.raw); err != nil {
				t.Fatal(err)
			}
			var resp wire.Response
			if err := c.recv(&resp); err != nil {
				t.Fatal(err)
			}
			if resp.Status != wire.StatusOK || len(resp.Payload) != 5 || !resp.Close {
				t.Fatalf("response: status %v, %d bytes, close %v", resp.Status, len(resp.Payload), resp.Close)
			}
			if err := c.expectEOF(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func testLedger(t *testing.T, e *env) {
	const conns, batches, depth = 16, 10, 4
	srv := e.startServer(t)
	addr := srv.Addr().String()
	err := parallel(conns, func(i int) error {
		c, err := dial(addr, e.codec)
		if err != nil {
			return err
		}
		defer c.close()
		x := uint64(i)*0x9e3779b97f4a7c15 + 1
		next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
		reqs := make([]*wire.Request, depth)
		for b := range batches {
			for k := range reqs {
				from := uint32(next() % ledgerAccounts)
				to := (from + 1 + uint32(next()%(ledgerAccounts-1))) % ledgerAccounts
				reqs[k] = &wire.Request{ID: uint64(b*depth + k), Op: wire.OpTransfer,
					Account: from, To: to, Amount: int64(1 + next()%200)}
			}
			if err := c.send(reqs...); err != nil {
				return err
			}
			var resp wire.Response
			for _, r := range reqs {
				if err := c.recvChecked(r, &resp); err != nil {
					return err
				}
				if resp.Status != wire.StatusOK && resp.Status != wire.StatusInsufficientFunds {
					return fmt.Errorf("transfer %d→%d of %d: status %v", r.Account, r.To, r.Amount, resp.Status)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, nil, addr, e.codec)
	total := &wire.Request{ID: 1, Op: wire.OpTotal}
	if err := c.send(total); err != nil {
		t.Fatal(err)
	}
	var resp wire.Response
	if err := c.recv(&resp); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(ledgerAccounts * ledgerInitial); resp.Status != wire.StatusOK || string(resp.Payload) != want {
		t.Fatalf("total after concurrent transfers: status %v, %q; want %s (money not conserved)", resp.Status, resp.Payload, want)
	}
}

// testLedgerLimits drives the ledger to its limit: a deposit that would
// take the ledger's money above math.MaxInt64 is refused with
// StatusOverflow and changes nothing, /total stays exact (never wraps) at
// the limit, transfers there succeed, and the test gives back what it
// deposited, so the suite's shared ledger is as it found it.
func testLedgerLimits(t *testing.T, e *env) {
	srv := e.startServer(t)
	c := connect(t, nil, srv.Addr().String(), e.codec)
	var id uint64
	do := func(r wire.Request) (wire.Status, int64) {
		t.Helper()
		id++
		r.ID = id
		if err := c.send(&r); err != nil {
			t.Fatal(err)
		}
		var resp wire.Response
		if err := c.recvChecked(&r, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Status != wire.StatusOK {
			return resp.Status, 0
		}
		v, err := strconv.ParseInt(string(resp.Payload), 10, 64)
		if err != nil {
			t.Fatalf("%v: payload %q: %v", r.Op, resp.Payload, err)
		}
		return resp.Status, v
	}
	expect := func(what string, r wire.Request, want wire.Status) {
		t.Helper()
		if st, _ := do(r); st != want {
			t.Fatalf("%s: status %v, want %v", what, st, want)
		}
	}
	total := func() int64 {
		t.Helper()
		st, v := do(wire.Request{Op: wire.OpTotal})
		if st != wire.StatusOK {
			t.Fatalf("total: status %v", st)
		}
		return v
	}
	const first, last = 0, ledgerAccounts - 1 // on different shards where a model shards the ledger
	t0 := total()
	room := int64(math.MaxInt64) - t0
	expect("deposit up to the limit", wire.Request{Op: wire.OpDeposit, Account: first, Amount: room}, wire.StatusOK)
	expect("deposit past the limit", wire.Request{Op: wire.OpDeposit, Account: last, Amount: 1}, wire.StatusOverflow)
	if got := total(); got != math.MaxInt64 {
		t.Fatalf("total at the limit: %d, want %d", got, int64(math.MaxInt64))
	}
	expect("transfer at the limit", wire.Request{Op: wire.OpTransfer, Account: first, To: last, Amount: room / 2}, wire.StatusOK)
	if got := total(); got != math.MaxInt64 {
		t.Fatalf("total after a transfer at the limit: %d, want %d", got, int64(math.MaxInt64))
	}
	expect("transfer back", wire.Request{Op: wire.OpTransfer, Account: last, To: first, Amount: room / 2}, wire.StatusOK)
	expect("withdraw the deposit", wire.Request{Op: wire.OpWithdraw, Account: first, Amount: room}, wire.StatusOK)
	if got := total(); got != t0 {
		t.Fatalf("total after giving the deposit back: %d, want %d", got, t0)
	}
}

func testClose(t *testing.T, e *env) {
	srv := e.startServer(t)
	addr := srv.Addr().String()
	var clients []*client
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	open := func(raw []byte) {
		c, err := dial(addr, e.codec)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if raw != nil {
			if err := c.sendRaw(raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	full := e.codec.AppendRequest(nil, workRequest(3, 10))
	busy := e.codec.AppendRequest(nil, &wire.Request{ID: 4, Op: wire.OpWork, Block: 100 * time.Millisecond})
	for range 8 {
		open(nil) // idle
	}
	for range 8 {
		open(full[:len(full)/2]) // half a request
	}
	for range 2 {
		open(busy) // a thread is in the blocking work when Close comes
	}
	if !Settle(func() bool { return srv.Stats().ConnsAccepted == uint64(len(clients)) }) {
		t.Fatalf("server accepted %d of %d connections", srv.Stats().ConnsAccepted, len(clients))
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Every client sees its connection end.
	for i, c := range clients {
		c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 4096)
		for {
			_, err := c.c.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					break
				}
				t.Fatalf("client %d: connection still open after Close", i)
			}
		}
	}
	// The cleanup registered by startServer checks for leaks (Close again is a no-op).
}
