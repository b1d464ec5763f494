package modeltest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"concbench/wire"
)

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
