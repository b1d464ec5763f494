package frontend

import (
	"net"
	"sync"
	"testing"

	"concbench/models/modeltest"
	"concbench/wire"
)

// scriptedBackend is a back end that answers the requests it has read
// only when told, in order, each with the OpWork body its id calls for.
type scriptedBackend struct {
	ln    net.Listener
	codec wire.Codec
	reqs  chan wire.Request // requests read, in order
	conn  chan net.Conn     // the one connection, once accepted
}

func newScriptedBackend(t *testing.T) *scriptedBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &scriptedBackend{ln: ln, codec: newCodec(t, "binary"), reqs: make(chan wire.Request, 16), conn: make(chan net.Conn, 1)}
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		b.conn <- c
		readRequests(c, b.codec, func(r wire.Request) { b.reqs <- r })
	})
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-b.conn:
			c.Close()
		default:
		}
		wg.Wait()
	})
	return b
}

// TestBoundHandoff scripts the paper's bound hand-off over one
// connection to an in-order back end: A sends and leads; B, then C, send
// and park as followers. A reads its own response and promotes the most
// recent follower, C; C reads B's response and hands it to B (specific
// notification), keeps leading, and reads its own.
func TestBoundHandoff(t *testing.T) {
	back := newScriptedBackend(t)
	cfg := testConfig(t, "binary")
	codec := cfg.Codec
	srv := modeltest.Start(t, func() (*Server, error) {
		return Start(cfg, Options{Backend: back.ln.Addr().String(), Handoff: Bound, UpstreamConns: 1})
	})
	conn := <-back.conn
	l := srv.shared[0].cur.Load()
	pool := func() (leader bool, followers int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.leader, len(l.followers)
	}
	sizes := map[string]int{"A": 10, "B": 20, "C": 30}
	results := make(chan error, 3)
	var reqs []wire.Request
	for i, name := range []string{"A", "B", "C"} {
		go func() {
			results <- wantResponse(srv.Addr().String(), codec, wire.Request{ID: uint64(i + 1), Op: wire.OpWork, Size: sizes[name]})
		}()
		reqs = append(reqs, <-back.reqs) // it has been sent: it registered first
		modeltest.WaitFor(t, name+" in the pool", func() bool { ld, f := pool(); return ld && f == i })
	}
	answer := func(r wire.Request) {
		if _, err := conn.Write(codec.AppendResponse(nil, &wire.Response{ID: r.ID, Status: wire.StatusOK, Payload: wire.AppendBody(nil, r.ID, r.Size)})); err != nil {
			t.Fatal(err)
		}
	}
	answer(reqs[0])
	if err := <-results; err != nil { // A's
		t.Fatal(err)
	}
	modeltest.WaitFor(t, "C promoted, B still a follower", func() bool { ld, f := pool(); return ld && f == 1 })
	answer(reqs[1])
	answer(reqs[2])
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	c := srv.Stats().Counters
	if c["own_responses"] != 2 || c["handoffs"] != 1 || c["leader_turns"] != 2 {
		t.Errorf("own %d, hand-offs %d, leader turns %d: want 2, 1, 2", c["own_responses"], c["handoffs"], c["leader_turns"])
	}
}

// wantResponse sends req on a new connection and checks its response
// (OK, verified, checksummed: modeltest.Client.RoundTrip).
func wantResponse(addr string, codec wire.Codec, req wire.Request) error {
	c, err := modeltest.Dial(addr, codec)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.RoundTrip(&req)
}
