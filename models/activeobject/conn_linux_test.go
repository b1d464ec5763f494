package activeobject

import (
	"runtime"
	"testing"
	"time"

	"concbench/handleset"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"

	"golang.org/x/sys/unix"
)

// TestAdmissionReopenedAfterRounds drives a connection step into the state
// that hung a slow reader: its rounds end with admission closed by pending
// output, requests buffered and none in flight; then the client drains its
// socket, so that the step's last write sends everything and reopens
// admission. Nothing will report the buffered requests — their bytes were
// read already, nothing is in flight, no output is pending — so the step
// must run the connection again itself.
//
// The afterRounds hook holds the step at that point until the client has
// taken everything the kernel held. It picks a step run from the completion
// port (one active object: one port, drained by one thread at a time) with
// the connection not queued on it again: then no other step is on its way,
// and without the fix the connection hangs every time, not by chance.
func TestAdmissionReopenedAfterRounds(t *testing.T) {
	const n, size = 24, 16 << 10
	cfg := modeltest.Config(t, "binary", 0, service.Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1})
	reached := make(chan struct{})
	// Guarded by the connection's mutex (the test makes one connection).
	shrunk, done := false, false
	opts := Options{Objects: 1, afterRounds: func(c *conn, ready handleset.Events) {
		if !shrunk {
			// A small send buffer (with the client's small receive
			// buffer), so that the server's output backs up soon.
			_ = unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<10)
			shrunk = true
		}
		if done || ready != 0 || c.posted[0].Load() ||
			c.canAdmit() || c.ring.InFlight() != 0 || c.in.Buffered() == 0 || c.out.Pending() == 0 {
			return
		}
		done = true
		// Room for all the pending output once the client has read, so
		// that the step's last write sends it all.
		_ = unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 1<<20)
		close(reached)
		for {
			q, err := unix.IoctlGetInt(c.fd, unix.SIOCOUTQ)
			if err != nil || q == 0 {
				return
			}
			runtime.Gosched()
		}
	}}
	// An output bound of one response: a request is admitted only when
	// nothing is in flight and the output is (nearly) written, so each
	// step collects at most one completion.
	cfg.MaxPendingOutput = size
	srv := modeltest.Start(t, func() (*Server, error) { return Start(cfg, opts) })
	c := modeltest.Connect(t, modeltest.SmallReceiveBuffer(4<<10), srv.Addr().String(), cfg.Codec)
	reqs := make([]*wire.Request, n)
	for i := range reqs {
		reqs[i] = &wire.Request{ID: uint64(i), Op: wire.OpWork, Size: size}
	}
	if err := c.Send(reqs...); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(waitBound):
		t.Fatalf("no step ended with admission closed by pending output and requests buffered in %v", waitBound)
	}
	if err := c.Expect(reqs...); err != nil {
		t.Fatal(err)
	}
}
