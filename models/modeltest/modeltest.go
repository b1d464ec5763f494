package modeltest

import (
	"errors"
	"net"
	"runtime"
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
