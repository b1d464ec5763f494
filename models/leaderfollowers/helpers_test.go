package leaderfollowers

import (
	"errors"
	"fmt"
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
	return modeltest.Config(t, "binary", threads, service.Config{Accounts: 64, NsPerIter: 1})
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

// load runs conns connections, each making rounds round trips of depth
// pipelined requests, and returns the first error.
func load(addr string, codec wire.Codec, conns, rounds, depth int) error {
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for i := range conns {
		wg.Go(func() {
			c, err := modeltest.Dial(addr, codec)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close()
			reqs := make([]*wire.Request, depth)
			for r := range rounds {
				for k := range reqs {
					id := uint64(i)<<32 | uint64(r*depth+k)
					reqs[k] = &wire.Request{ID: id, Op: wire.OpWork, Size: int(id % 700)}
				}
				if err := c.RoundTrip(reqs...); err != nil {
					errs[i] = fmt.Errorf("connection %d: %w", i, err)
					return
				}
			}
		})
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
