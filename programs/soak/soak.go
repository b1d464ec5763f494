package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/programs/internal/override"
	"concbench/programs/serverconf"
	"concbench/results"
	"concbench/service"
	"concbench/wire"
)

// Chain is the chain configuration the default soak runs: the front end
// (bound, two upstream connections) in front of a netpoll back end.
const Chain = "frontend/bound/m=2"

// Config is a soak's settings ("concbench soak"'s flags).
type Config struct {
	// ServerBinary is the concbench that serves; "": this executable.
	ServerBinary string
	// Configs are the configurations soaked; nil: DefaultConfigs.
	Configs []harness.Config
	// Requests is the requests per configuration.
	Requests int64
	// Protocol, Conns, Depth, CPU, Block, Size and Ops are the workload
	// (as harness.Workload has them); Outstanding the requests in flight
	// per connection.
	Protocol               string
	Conns, Depth           int
	Outstanding            int
	CPU, Block, Size, Ops  string
	Accounts               int
	InitialBalance, Amount int64
	WithdrawWait           time.Duration
	KillEvery              int
	Timeout, Progress      time.Duration
	Seed                   uint64
	// ServerCPUs and LoadCPUs are where the server and the generator are
	// pinned; both empty: this process's CPUs split in half
	// (serverconf.SplitCPUs).
	ServerCPUs, LoadCPUs string
}

// Configs returns the configurations list names (comma-separated, by
// name or model: soak --models), looked up in DefaultConfigs, then every
// configuration and the chain's; empty: DefaultConfigs.
func Configs(list string) ([]harness.Config, error) {
	def := DefaultConfigs()
	if list == "" {
		return def, nil
	}
	cs, err := override.From(list, def, harness.AllConfigs(), harness.ChainConfigs())
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	return cs, nil
}

// Default returns the defaults of every setting (make soak's).
func Default() Config {
	return Config{Requests: 10_000_000, Protocol: "http", Conns: 32, Depth: 4, Outstanding: 16,
		CPU: "exp:2us", Block: "0", Size: "bimodal:0.99:64:20000", Ops: "work=6,balance=1,deposit=3,withdraw=2,transfer=2,total=0.05",
		Accounts: 256, InitialBalance: 10, Amount: 1, WithdrawWait: time.Millisecond, KillEvery: 10_000,
		Timeout: 30 * time.Second, Progress: 10 * time.Second, Seed: 1}
}

// DefaultConfigs are the configurations soaked by default: one per model
// as the comparison has them (harness.Families), and Chain.
func DefaultConfigs() []harness.Config {
	chains := harness.ChainConfigs()
	i := slices.IndexFunc(chains, func(c harness.Config) bool { return c.Name == Chain })
	return append(harness.Families(), chains[i])
}

// plan is a checked Config: what the servers are sized for and the load,
// but for the address and the ledger's money.
type plan struct {
	Config
	workload harness.Workload
	load     loadgen.Config
}

// Check checks c's settings and returns c with its defaults filled in
// (the configurations, the binary, the CPU split) and the load each
// configuration gets, but for the address and the ledger's money.
func (c Config) Check() (Config, loadgen.Config, error) {
	p, err := c.plan()
	if err != nil {
		return c, loadgen.Config{}, err
	}
	return p.Config, p.load, nil
}

func (c Config) plan() (*plan, error) {
	switch {
	case c.Requests < 1:
		return nil, fmt.Errorf("soak: --requests %d out of range (accepted: 1 or more)", c.Requests)
	case c.Progress < 0:
		return nil, fmt.Errorf("soak: --progress %v out of range (accepted: 0 for never, or more)", c.Progress)
	case c.KillEvery < 0:
		return nil, fmt.Errorf("soak: --kill-every %d out of range (accepted: 0 for never, or 1 or more)", c.KillEvery)
	}
	svc := service.Config{Accounts: c.Accounts, InitialBalance: c.InitialBalance}
	if err := svc.Validate(); err != nil || c.Accounts == 0 || c.InitialBalance == 0 {
		return nil, fmt.Errorf("soak: --accounts %d, --initial-balance %d: %v (each must be given, not 0)", c.Accounts, c.InitialBalance, err)
	}
	if c.ServerCPUs == "" && c.LoadCPUs == "" {
		c.ServerCPUs, c.LoadCPUs = serverconf.SplitCPUs()
	}
	for _, s := range []struct{ name, v string }{{"server-cpus", c.ServerCPUs}, {"load-cpus", c.LoadCPUs}} {
		if _, err := cpuset.Parse(s.v); err != nil {
			return nil, fmt.Errorf("soak: --%s: %w", s.name, err)
		}
	}
	p := &plan{workload: harness.Workload{Workload: results.Workload{Protocol: c.Protocol, Conns: c.Conns, Depth: c.Depth,
		CPU: c.CPU, Block: c.Block, Size: c.Size, Ops: c.Ops}}}
	lc, err := p.workload.LoadConfig()
	if err != nil {
		return nil, fmt.Errorf("soak: the workload (--protocol, --conns, --depth, --cpu, --block, --size, --ops): %w", err)
	}
	lc.Closed, lc.Rate, lc.Outstanding = true, 0, c.Outstanding
	lc.Duration, lc.Warmup, lc.Requests = 0, 0, c.Requests
	lc.Timeout, lc.Accounts, lc.Amount, lc.WithdrawWait = c.Timeout, c.Accounts, c.Amount, c.WithdrawWait
	lc.KillEvery, lc.Seed = c.KillEvery, c.Seed
	if load, err := cpuset.Parse(c.LoadCPUs); err == nil && len(load) > 0 {
		lc.Workers, lc.WorkerCPUs = loadgen.Placement(load, c.Conns)
	}
	if err := lc.Validate(); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	p.load = lc
	if c.Configs == nil {
		c.Configs = DefaultConfigs()
	}
	if c.ServerBinary, err = serverconf.Executable(c.ServerBinary); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	p.Config = c
	return p, nil
}

// Run soaks every configuration of c, printing a progress line now and
// then and the table at the end to stdout; it fails if any
// configuration fails (an unavailable one fails nothing).
func Run(ctx context.Context, c Config, stdout, _ io.Writer) error {
	p, err := c.plan()
	if err != nil {
		return err
	}
	// The generator runs in this process, as the harness's does (its
	// workers pinned by the load's WorkerCPUs); the affinity is restored
	// at the end.
	restore, err := serverconf.PinLoad(p.LoadCPUs)
	if err != nil {
		return fmt.Errorf("soak: --load-cpus %s: %w", p.LoadCPUs, err)
	}
	defer restore()
	fmt.Fprintf(stdout, "soak: %d requests per configuration, %s, %s over %d connections; server CPUs %s, load CPUs %s\n",
		p.Requests, p.load.Mode(), p.Protocol, p.Conns, orAll(p.ServerCPUs), orAll(p.LoadCPUs))
	fmt.Fprintf(stdout, "  ops %s, cpu %s, block %s, size %s; %d accounts of %d, amount %d, withdrawals wait up to %v; a kill every ~%d responses\n",
		p.Ops, p.CPU, p.Block, p.Size, p.Accounts, p.InitialBalance, p.Amount, p.WithdrawWait, p.KillEvery)
	var rows []row
	for _, hc := range p.Configs {
		rows = append(rows, p.soakOne(ctx, hc, stdout))
		if ctx.Err() != nil {
			break
		}
	}
	writeTable(stdout, rows)
	failed := 0
	for _, r := range rows {
		if r.failed() {
			failed++
		}
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("soak: interrupted: %w", ctx.Err())
	case failed > 0:
		return fmt.Errorf("soak: %d of %d configurations failed", failed, len(rows))
	}
	return nil
}

// orAll names a CPU list, or says there is none.
func orAll(cpus string) string {
	if cpus == "" {
		return "unpinned"
	}
	return cpus
}

// row is one configuration's outcome.
type row struct {
	name                          string
	unavailable, failure          string // why it did not run; why it failed without a result
	requests, ok, errs, mismatch  int64
	dups, lost, abandoned, reconn int64
	unknown                       int64 // money operations of unknown outcome
	kills, refused                int64 // connections killed; refused at the server's limit
	expected, found               int64
	reasons                       []string // why it failed, if it did
	detail                        string   // the errors by kind
}

// failed reports whether the row is a failure.
func (r *row) failed() bool {
	return r.unavailable == "" && (r.failure != "" || len(r.reasons) > 0)
}

// soakOne soaks configuration c: its server started, the ledger's total
// read, the load run with a progress line now and then, the total read
// again, the server stopped; and judges it.
func (p *plan) soakOne(ctx context.Context, c harness.Config, stdout io.Writer) row {
	rw := row{name: c.Name}
	extra := []string{"--accounts", strconv.Itoa(p.Accounts), "--initial-balance", strconv.FormatInt(p.InitialBalance, 10)}
	srv, _, err := harness.StartConfig(p.ServerBinary, c, p.workload, p.ServerCPUs, extra)
	if err != nil {
		if errors.Is(err, harness.ErrNotStarted) {
			rw.unavailable = strings.TrimPrefix(err.Error(), harness.ErrNotStarted.Error()+": ")
		} else {
			rw.failure = err.Error()
		}
		fmt.Fprintf(stdout, "%s: not run: %v\n", c.Name, err)
		return rw
	}
	before, err := ledgerTotal(srv)
	if err == nil {
		err = waitIdle(ctx, srv)
	}
	if err != nil {
		rw.failure = "before the run: " + err.Error()
		rw.failure += stopText(srv.Stop())
		return rw
	}
	lc := p.load
	lc.Addr, lc.LedgerMoney = srv.Addr(), before
	start := time.Now()
	stopProgress := p.progress(srv, c.Name, stdout)
	r, runErr := loadgen.Run(ctx, lc)
	stopProgress()
	after, totalErr := ledgerTotal(srv)
	stopErr := srv.Stop()
	if r == nil {
		rw.failure = fmt.Sprintf("the load: %v%s", runErr, stopText(stopErr))
		return rw
	}
	rw.judge(r, before, after, errors.Join(runErr, totalErr, stopErr))
	fmt.Fprintf(stdout, "%s: %d requests in %v, %d connections killed, %d refused at the server's limit (their requests resent): %s\n",
		c.Name, rw.requests, time.Since(start).Round(time.Millisecond), rw.kills, rw.refused, rw.verdict())
	return rw
}

// stopText is an unclean stop's error as a suffix of a failure.
func stopText(err error) string {
	if err == nil {
		return ""
	}
	return "; " + err.Error()
}

// ledgerTotal asks srv for the ledger's total.
func ledgerTotal(srv *harness.Server) (int64, error) {
	resp, err := srv.Do(wire.Request{ID: 1, Op: wire.OpTotal})
	if err != nil {
		return 0, err
	}
	if resp.Status != wire.StatusOK {
		return 0, fmt.Errorf("total: status %s: %q", resp.Status, resp.Payload)
	}
	v, err := strconv.ParseInt(string(resp.Payload), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("total: %q: %w", resp.Payload, err)
	}
	return v, nil
}

// idleWait bounds waitIdle.
const idleWait = 10 * time.Second

// waitIdle waits until srv has closed every connection it accepted (the
// readiness probe's, the total's) and their threads have ended, so that
// the load finds every thread free: thread per connection has exactly
// one per load connection, and refuses one more.
func waitIdle(ctx context.Context, srv *harness.Server) error {
	deadline := time.Now().Add(idleWait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := srv.Snapshot()
		if err != nil {
			return err
		}
		open := s.Stats.ConnsAccepted - s.Stats.ConnsClosed
		if open == 0 && s.Stats.Counters["conn_threads"] == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server still has %d connections open and %d connection threads after %v", open, s.Stats.Counters["conn_threads"], idleWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// progress prints a line every p.Progress with the requests srv has
// served, until the returned function is called (which waits for it).
// It alone uses srv's control channel meanwhile.
func (p *plan) progress(srv *harness.Server, name string, stdout io.Writer) func() {
	if p.Progress <= 0 {
		return func() {}
	}
	start := time.Now()
	return serverconf.Every(p.Progress, func() {
		if s, err := srv.Snapshot(); err == nil {
			fmt.Fprintf(stdout, "  %s: %d requests served (%.0f%% of %d), %v\n", name, s.Stats.Requests,
				100*float64(s.Stats.Requests)/float64(p.Requests), p.Requests, time.Since(start).Round(time.Second))
		}
	})
}

// transport are the error kinds of a request that was sent and never
// answered (the generator's own counts: read, write, timeout,
// unexpected_close, interrupted), or answered with a response that does
// not decode: the row's lost requests.
var transport = []string{"read", "write", "timeout", "unexpected_close", "interrupted", "malformed_response"}

// judge fills the row from r, the ledger's totals before and after the
// run, and what failed around it (err: the run's, the total's, the
// server's stop).
func (rw *row) judge(r *loadgen.Result, before, after int64, err error) {
	q := &r.Requests
	rw.requests, rw.abandoned, rw.reconn = q.Sent, q.Abandoned, q.Reconnects
	rw.kills, rw.refused = q.Kills, q.Refused
	rw.lost = q.Sent - q.Completed - q.Abandoned
	rw.ok = q.OK
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		n := r.Errors[k]
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		switch {
		case loadgen.ExpectedOutcome(k):
			rw.ok += n
		case k == "verify_duplicate":
			rw.dups += n
		case strings.HasPrefix(k, "verify_"):
			rw.mismatch += n
		case slices.Contains(transport, k):
		default:
			rw.errs += n
		}
	}
	rw.detail = strings.Join(kinds, ", ")
	rw.expected, rw.found = before, after
	if l := r.Ledger; l != nil {
		rw.expected += l.Delta()
		rw.unknown = l.Unknown
	}
	fail := func(format string, args ...any) { rw.reasons = append(rw.reasons, fmt.Sprintf(format, args...)) }
	if err != nil {
		fail("%v", err)
	}
	for _, c := range []struct {
		n    int64
		what string
	}{{rw.errs, "errors"}, {rw.mismatch, "mismatches"}, {rw.dups, "duplicates"}, {rw.lost, "lost"},
		{rw.unknown, "money operations of unknown outcome"}, {q.Unsent, "requests never sent"}} {
		if c.n != 0 {
			fail("%d %s", c.n, c.what)
		}
	}
	if rw.expected != rw.found {
		fail("money: the ledger holds %d, expected %d (%+d)", rw.found, rw.expected, rw.found-rw.expected)
	}
}

// verdict is the row's last column.
func (rw *row) verdict() string {
	switch {
	case rw.unavailable != "":
		return "unavailable: " + serverconf.FirstLine(rw.unavailable)
	case rw.failure != "":
		return "FAIL: " + serverconf.FirstLine(rw.failure)
	case len(rw.reasons) > 0:
		return "FAIL: " + strings.Join(rw.reasons, "; ")
	}
	return "ok"
}

// writeTable prints the table of rows, and under it each failed row's
// errors by kind.
func writeTable(w io.Writer, rows []row) {
	fmt.Fprintf(w, "\n%-24s %10s %10s %7s %10s %10s %6s %9s %10s %14s %14s  %s\n", "configuration", "requests", "ok", "errors",
		"mismatches", "duplicates", "lost", "abandoned", "reconnects", "money expected", "money found", "verdict")
	for i := range rows {
		r := &rows[i]
		if r.unavailable != "" || r.failure != "" {
			fmt.Fprintf(w, "%-24s %10s %10s %7s %10s %10s %6s %9s %10s %14s %14s  %s\n", r.name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", r.verdict())
			continue
		}
		fmt.Fprintf(w, "%-24s %10d %10d %7d %10d %10d %6d %9d %10d %14d %14d  %s\n", r.name, r.requests, r.ok, r.errs,
			r.mismatch, r.dups, r.lost, r.abandoned, r.reconn, r.expected, r.found, r.verdict())
	}
	for i := range rows {
		if r := &rows[i]; r.failed() && r.detail != "" {
			fmt.Fprintf(w, "%s: errors by kind: %s\n", r.name, r.detail)
		}
	}
}
