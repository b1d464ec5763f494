package eventloop_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/models"
	"concbench/models/acceptmutex"
	"concbench/models/modeltest"
	"concbench/models/partitioned"
	"concbench/service"
	"concbench/wire"
)

// TestConnectionsStayWithTheirThread checks, for every model over the
// event loop, that a connection's requests are all served by the thread
// that accepted it: with each connection making the same number of
// requests, each thread served that many per connection it accepted.
// Large pipelined responses make connections wait for room (back-pressure)
// and be served over several events, so this holds across events too.
func TestConnectionsStayWithTheirThread(t *testing.T) {
	testenv.EndToEnd(t)
	cfg := modeltest.Config(t, "binary", 3, service.Config{Accounts: 64, NsPerIter: 1})
	codec := cfg.Codec
	starts := map[string]func() (models.Server, error){
		"acceptmutex/exclusive": func() (models.Server, error) { return acceptmutex.Start(cfg, acceptmutex.Options{}) },
		"acceptmutex/mutex/multi_accept": func() (models.Server, error) {
			return acceptmutex.Start(cfg, acceptmutex.Options{Accept: acceptmutex.Mutex, MultiAccept: true, AcceptDelay: time.Millisecond})
		},
		"acceptmutex/reuseport": func() (models.Server, error) {
			return acceptmutex.Start(cfg, acceptmutex.Options{Accept: acceptmutex.ReusePort})
		},
		"partitioned": func() (models.Server, error) { return partitioned.Start(cfg, partitioned.Options{}) },
	}
	const conns, rounds, depth = 12, 2, 4
	for name, start := range starts {
		t.Run(name, func(t *testing.T) {
			srv, err := start()
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var wg sync.WaitGroup
			errs := make([]error, conns)
			for i := range conns {
				wg.Go(func() {
					errs[i] = converse(srv.Addr().String(), codec, uint64(i)<<32, rounds, depth)
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			st := srv.Stats()
			var accepted uint64
			for i, th := range st.PerThread {
				accepted += th.Accepted
				if th.Requests != th.Accepted*rounds*depth {
					t.Errorf("thread %d accepted %d connections and served %d requests; want %d each", i, th.Accepted, th.Requests, rounds*depth)
				}
			}
			if accepted != conns || st.Requests != conns*rounds*depth {
				t.Errorf("threads accepted %d of %d connections; %d requests served", accepted, conns, st.Requests)
			}
		})
	}
}

// converse makes rounds round trips of depth pipelined requests, each
// for a body far larger than a socket buffer, on a new connection.
func converse(addr string, codec wire.Codec, base uint64, rounds, depth int) error {
	c, err := modeltest.Dial(addr, codec)
	if err != nil {
		return err
	}
	defer c.Close()
	for r := range rounds {
		reqs := make([]*wire.Request, depth)
		for k := range reqs {
			reqs[k] = &wire.Request{ID: base + uint64(r*depth+k), Op: wire.OpWork, Size: 256 << 10}
		}
		if err := c.RoundTrip(reqs...); err != nil {
			return err
		}
	}
	return nil
}
