package loadgen

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"concbench/internal/sysstat"
)

// sockets counts this process's open sockets (the test server's and the
// generator's).
func sockets(t *testing.T) int {
	n, err := sysstat.OpenSockets(0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOnWindowBracketsTheWindow checks that Config.OnWindow is called once
// with true before the window and once with false after the drain, in
// that order: with one connection and one request outstanding (closed
// loop), no measured request has been served when the start call comes
// (it comes during the warm-up's end, so that the caller's work there
// does not fall in the window), and every request of the run has been
// served when the end call comes — while the generator's connection is
// still open (its teardown is not in the window).
func TestOnWindowBracketsTheWindow(t *testing.T) {
	s := startServer(t, "http", nil)
	var calls []bool
	var servedAtStart, servedAtEnd int64
	var socketsAtStart, socketsAtEnd int
	r := mustRun(t, Config{
		Addr: s.addr(), Conns: 1, Closed: true, Outstanding: 1,
		Warmup: 150 * time.Millisecond, Requests: 200, Seed: 1,
		OnWindow: func(start bool) {
			calls = append(calls, start)
			if start {
				servedAtStart = s.served.Load()
				socketsAtStart = sockets(t)
			} else {
				servedAtEnd = s.served.Load()
				socketsAtEnd = sockets(t)
			}
		},
	})
	if socketsAtEnd != socketsAtStart {
		t.Errorf("%d sockets open at the window's end, %d at its start: the generator closed its connection before the end call", socketsAtEnd, socketsAtStart)
	}
	if !slices.Equal(calls, []bool{true, false}) {
		t.Fatalf("OnWindow calls %v, want [true false]", calls)
	}
	if r.Requests.Warmup < 10 {
		// A precondition, not a property of the code: one connection, one
		// request at a time, did not turn round 10 times in 150 ms here.
		t.Skipf("only %d warm-up responses on this machine: the test needs a real warm-up", r.Requests.Warmup)
	}
	// 1 priming request, then the warm-up's: the start call comes before
	// any measured request is served (the window's first is sent at its
	// start), and after the warm-up has begun.
	if servedAtStart > 1+r.Requests.Warmup || servedAtStart < 2 {
		t.Errorf("%d requests served when the window started, want 2..%d (priming + warm-up, no measured one)", servedAtStart, 1+r.Requests.Warmup)
	}
	if want := 1 + r.Requests.Warmup + r.Requests.Completed; servedAtEnd != want {
		t.Errorf("%d requests served when the window ended, want %d (priming + warm-up + measured)", servedAtEnd, want)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("a Result whose Config has OnWindow does not marshal: %v", err)
	}
}

// TestOnWindowNotCalledWithoutWindow checks that a run that fails before
// its window (here: at priming) never calls OnWindow.
func TestOnWindowNotCalledWithoutWindow(t *testing.T) {
	s := startServer(t, "http", func(s *testServer) { s.fault = faultAt(1, faultKill) })
	called := false
	_, err := Run(t.Context(), Config{
		Addr: s.addr(), Conns: 1, Rate: 100, Warmup: 100 * time.Millisecond, Duration: 100 * time.Millisecond,
		Timeout: time.Second, OnWindow: func(bool) { called = true },
	})
	if err == nil {
		t.Fatal("Run succeeded against a server that dies at the priming request")
	}
	if called {
		t.Error("OnWindow was called for a run that never reached its window")
	}
}
