package leaderfollowers

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/service"
	"concbench/wire"
)

// testConfig returns a configuration for a test server with the given
// number of threads, speaking the binary protocol.
func testConfig(t testing.TB, threads int) models.Config {
	t.Helper()
	codec, err := wire.New("binary", wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{Accounts: 64, NsPerIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	return models.Config{Addr: "127.0.0.1:0", Threads: threads, Codec: codec, Service: svc}
}

// startTest starts a server with hooks and closes it, checking that its
// threads exited, when t ends.
func startTest(t testing.TB, cfg models.Config, opts Options, hk hooks) *Server {
	t.Helper()
	srv, err := start(cfg, opts, hk)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		tids := threadIDs(srv)
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		modeltest.WaitFor(t, "every pool thread has exited", func() bool { return !anyAlive(tids) })
	})
	return srv
}

// threadIDs returns the TIDs srv reports for its pool threads.
func threadIDs(srv *Server) []int {
	var tids []int
	for _, th := range srv.Stats().PerThread {
		tids = append(tids, th.TID)
	}
	return tids
}

// anyAlive reports whether any of the threads still exists.
func anyAlive(tids []int) bool {
	for _, tid := range tids {
		if tid == os.Getpid() {
			continue // the main thread cannot exit (see modeltest)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
			return true
		}
	}
	return false
}

// testClient is a synchronous client over one connection.
type testClient struct {
	c     net.Conn
	codec wire.Codec
	out   []byte
	in    []byte
	off   int
}

func dialTest(addr string, codec wire.Codec) (*testClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &testClient{c: c, codec: codec, in: make([]byte, 0, 16<<10)}, nil
}

// roundTrip writes reqs in one write (pipelined) and reads and verifies
// their responses, in order.
func (c *testClient) roundTrip(reqs []*wire.Request) error {
	c.out = c.out[:0]
	for _, r := range reqs {
		c.out = c.codec.AppendRequest(c.out, r)
	}
	if _, err := c.c.Write(c.out); err != nil {
		return err
	}
	var resp wire.Response
	for _, r := range reqs {
		if err := c.recv(&resp); err != nil {
			return fmt.Errorf("request %d: %w", r.ID, err)
		}
		if resp.Status != wire.StatusOK {
			return fmt.Errorf("request %d: status %v", r.ID, resp.Status)
		}
		if err := wire.Verify(r, &resp); err != nil {
			return err
		}
	}
	return nil
}

// recv reads until one response is decoded; its payload aliases the
// client's buffer until the next recv.
func (c *testClient) recv(resp *wire.Response) error {
	for {
		if c.off < len(c.in) {
			n, err := c.codec.DecodeResponse(c.in[c.off:], resp)
			if err != nil {
				return err
			}
			if n > 0 {
				c.off += n
				return nil
			}
		}
		n := copy(c.in[:cap(c.in)], c.in[c.off:])
		c.in, c.off = c.in[:n], 0
		if n == cap(c.in) {
			c.in = append(c.in, make([]byte, n)...)[:n]
		}
		m, err := c.c.Read(c.in[n:cap(c.in)])
		c.in = c.in[:n+m]
		if m == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

func (c *testClient) close() { c.c.Close() }

// load runs conns connections, each making rounds round trips of depth
// pipelined requests, and returns the first error.
func load(addr string, codec wire.Codec, conns, rounds, depth int) error {
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialTest(addr, codec)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.close()
			reqs := make([]*wire.Request, depth)
			for r := range rounds {
				for k := range reqs {
					id := uint64(i)<<32 | uint64(r*depth+k)
					reqs[k] = &wire.Request{ID: id, Op: wire.OpWork, Size: int(id % 700)}
				}
				if err := c.roundTrip(reqs); err != nil {
					errs[i] = fmt.Errorf("connection %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// receive returns the next value from ch; after 30 s it fails t (a lost
// promotion would otherwise hang the test).
func receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
