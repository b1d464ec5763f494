package modeltest

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"concbench/models"
	"concbench/wire"
)

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
