package agent

import (
	"context"
	"testing"
	"time"

	"concbench/loadgen"
	"concbench/models"
	"concbench/models/netpoll"
	"concbench/service"
	"concbench/wire"
)

// startNetpoll starts the netpoll model on addr.
func startNetpoll(t testing.TB, addr string) *netpoll.Server {
	t.Helper()
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := netpoll.Start(models.Config{Addr: addr, Codec: codec, Service: svc}, netpoll.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// e2eConfig is the run both end-to-end tests make: short, light, with the
// generator's health checks on (the verdicts are compared, not asserted).
func e2eConfig(addr string) loadgen.Config {
	return loadgen.Config{Addr: addr, Rate: 600, Conns: 4, Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond}
}

// TestAgentsOnLoopback runs two in-process agents with the real load
// generator against a server on loopback and checks that the merged
// result is what they measured, and that Config.OnWindow is called as
// loadgen.Run calls it: once before the window, once after every agent
// has drained its requests and before any has closed a connection.
func TestAgentsOnLoopback(t *testing.T) {
	srv := startNetpoll(t, "127.0.0.1:0")
	a1 := startAgent(t, &Agent{Token: token})
	a2 := startAgent(t, &Agent{Token: token})
	cfg := e2eConfig(srv.Addr().String())
	var calls []bool
	var openAtEnd int64
	cfg.OnWindow = func(start bool) {
		calls = append(calls, start)
		if !start {
			st := srv.Stats()
			openAtEnd = int64(st.ConnsAccepted) - int64(st.ConnsClosed)
		}
	}
	co := &Coordinator{Agents: []string{a1, a2}, Token: token, Lead: 500 * time.Millisecond,
		MaxUncertainty: loaded}
	res, err := co.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkMerged(t, cfg, res)
	if len(calls) != 2 || !calls[0] || calls[1] {
		t.Errorf("OnWindow called with %v, want [true false]", calls)
	}
	if openAtEnd != int64(cfg.Conns) {
		t.Errorf("%d connections open at the window's end, want all %d", openAtEnd, cfg.Conns)
	}
}
