package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/results"
	"concbench/service"
	"concbench/wire"
)

const soakUsage = `usage: concbench soak [flags]

Runs each configuration (--models; default: one per model, as the
comparison has them, and the front end in front of a netpoll back end)
on a fresh server, sized by the rule and pinned to --server-cpus, under
a long mixed workload, and checks that nothing is lost: --requests
requests, closed loop over --conns connections, --outstanding in flight
on each in pipelined batches of --depth, with CPU work (--cpu), bodies
of every size (--size) and the ledger's balances, deposits, guarded
withdrawals (--withdraw-wait), transfers and totals (--ops) on a ledger
of --accounts accounts of --initial-balance.

Every response is verified: its id and order, its checksum, an OpWork
body byte for byte, a ledger answer a balance, and a total within what
the deposits and withdrawals acknowledged around it allow. About every
--kill-every responses the generator kills one of its connections (a
reset) and opens it again; a connection chosen to die first waits until
it has no deposit, withdrawal or transfer in flight, so that every
money operation has a known outcome, and the requests it abandons are
counted, never as lost or failed. At the end the ledger's total (read
before and after the run) must have moved by exactly the acknowledged
deposits minus the acknowledged withdrawals.

Prints a progress line every --progress, then a table, one row per
configuration:
  requests    requests sent
  ok          answered correctly: ok, or the ledger's normal refusal
              (insufficient funds, a guarded withdrawal's timeout)
  errors      answered with another status (503, 500, …), or failed
              otherwise (connect, a response to no request)
  mismatches  answered with another id, out of order, a bad checksum, a
              wrong body or balance, a total out of its bounds
  duplicates  a second answer to a request answered already
  lost        sent and never answered (a timeout, a reset, a response
              that does not decode)
  abandoned   cut off by a kill
  reconnects  connections opened again (the kills', and any other)
  money       expected (the total before plus the acknowledged flow)
              and found (the total after)
A configuration passes with no errors, mismatches, duplicates or lost
requests, every money operation's outcome known, the money found equal
to the money expected, and a clean server stop. The exit status is 1 if
any fails; a model this machine cannot run (the Proactor without
io_uring) is reported unavailable, with its reason, and fails nothing.

  concbench soak                          (make soak: 10^7 requests per configuration)
  concbench soak --requests 100000 --models frontend/bound/m=2

Flags:
`

// soakChain is the chain configuration the default soak runs: the front
// end (bound, two upstream connections) in front of a netpoll back end.
const soakChain = "frontend/bound/m=2"

// soakFlags are the soak command's settings.
type soakFlags struct {
	bin, models, serverCPUs, loadCPUs string
	protocol, cpu, block, size, ops   string
	requests                          int64
	conns, depth, outstanding         int
	accounts                          int
	initial, amount                   int64
	withdrawWait, timeout, progress   time.Duration
	killEvery                         int
	seed                              uint64
	cfgs                              []harness.Config
	workload                          harness.Workload // what the servers are sized for
	load                              loadgen.Config   // the load, but for the address and the ledger's money
}

func runSoak(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	f, err := parseSoakFlags(args, stdout)
	if err != nil {
		return err
	}
	if f.loadCPUs != "" {
		// The generator runs in this process, as the harness's does
		// (its workers pinned by the load's WorkerCPUs); the affinity is
		// restored at the end.
		set, _ := cpuset.Parse(f.loadCPUs) // validated
		prev, err := cpuset.Current()
		if err != nil {
			return fmt.Errorf("soak: %w", err)
		}
		if err := cpuset.Pin(0, set); err != nil {
			return fmt.Errorf("soak: --load-cpus %s: %w", f.loadCPUs, err)
		}
		defer cpuset.Pin(0, prev)
	}
	fmt.Fprintf(stdout, "soak: %d requests per configuration, %s, %s over %d connections; server CPUs %s, load CPUs %s\n",
		f.requests, f.load.Mode(), f.protocol, f.conns, orAll(f.serverCPUs), orAll(f.loadCPUs))
	fmt.Fprintf(stdout, "  ops %s, cpu %s, block %s, size %s; %d accounts of %d, amount %d, withdrawals wait up to %v; a kill every ~%d responses\n",
		f.ops, f.cpu, f.block, f.size, f.accounts, f.initial, f.amount, f.withdrawWait, f.killEvery)
	var rows []soakRow
	for _, c := range f.cfgs {
		row := soakOne(ctx, f, c, stdout)
		rows = append(rows, row)
		if ctx.Err() != nil {
			break
		}
	}
	writeSoakTable(stdout, rows)
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

// parseSoakFlags reads and checks the command line; every setting is
// checked before any server starts.
func parseSoakFlags(args []string, stdout io.Writer) (*soakFlags, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	f := &soakFlags{}
	fs.StringVar(&f.bin, "server-binary", "", "the concbench executable that serves; default: this one")
	fs.StringVar(&f.models, "models", "", "comma-separated configurations, by name (leaderfollowers/lifo, "+soakChain+") or by model; default: one per model and "+soakChain)
	fs.Int64Var(&f.requests, "requests", 10_000_000, "requests per configuration")
	fs.StringVar(&f.protocol, "protocol", "http", "wire protocol: http or binary")
	fs.IntVar(&f.conns, "conns", 32, "connections")
	fs.IntVar(&f.depth, "depth", 4, "pipelining depth: requests written together per batch")
	fs.IntVar(&f.outstanding, "outstanding", 16, "requests in flight per connection")
	fs.StringVar(&f.cpu, "cpu", "exp:2us", "CPU work per request (distribution of durations)")
	fs.StringVar(&f.block, "block", "0", "blocking work per request (distribution of durations)")
	fs.StringVar(&f.size, "size", "bimodal:0.99:64:20000", "OpWork response bytes (distribution): bodies over 4 KiB are streamed")
	fs.StringVar(&f.ops, "ops", "work=6,balance=1,deposit=3,withdraw=2,transfer=2,total=0.05", "operation mix: op=weight,… over work, balance, deposit, withdraw, transfer, total")
	fs.IntVar(&f.accounts, "accounts", 256, "ledger accounts (the server's --accounts)")
	fs.Int64Var(&f.initial, "initial-balance", 10, "each account's initial balance (the server's --initial-balance): small, so that withdrawals wait")
	fs.Int64Var(&f.amount, "amount", 1, "what each deposit, withdrawal and transfer moves")
	fs.DurationVar(&f.withdrawWait, "withdraw-wait", time.Millisecond, "how long a withdrawal waits for funds (the guarded withdrawal's timeout)")
	fs.IntVar(&f.killEvery, "kill-every", 10_000, "kill a connection about every this many responses (0: never)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "a request unanswered this long after its send is lost")
	fs.DurationVar(&f.progress, "progress", 10*time.Second, "how often a progress line is printed (0: never)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the request mix and the kills")
	fs.StringVar(&f.serverCPUs, "server-cpus", "", "CPUs the server is pinned to and sized for (default: the first half of this process's)")
	fs.StringVar(&f.loadCPUs, "load-cpus", "", "CPUs the load generator is pinned to (default: the rest)")
	if err := cli.Parse(fs, args, stdout, soakUsage); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("soak: unexpected argument %q (flags only)", fs.Arg(0))
	}
	set := cli.Set(fs)
	if err := f.check(set); err != nil {
		return nil, err
	}
	var err error
	if f.cfgs, err = soakConfigs(f.models); err != nil {
		return nil, err
	}
	if f.bin, err = executable(f.bin); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	return f, nil
}

// check checks the settings, fills in the CPU split and makes the load's
// configuration (f.load).
func (f *soakFlags) check(set map[string]bool) error {
	switch {
	case f.requests < 1:
		return fmt.Errorf("soak: --requests %d out of range (accepted: 1 or more)", f.requests)
	case f.progress < 0:
		return fmt.Errorf("soak: --progress %v out of range (accepted: 0 for never, or more)", f.progress)
	case f.killEvery < 0:
		return fmt.Errorf("soak: --kill-every %d out of range (accepted: 0 for never, or 1 or more)", f.killEvery)
	}
	svc := service.Config{Accounts: f.accounts, InitialBalance: f.initial}
	if err := svc.Validate(); err != nil || f.accounts == 0 || f.initial == 0 {
		return fmt.Errorf("soak: --accounts %d, --initial-balance %d: %v (each must be given, not 0)", f.accounts, f.initial, err)
	}
	if !set["server-cpus"] && !set["load-cpus"] {
		if cur, err := cpuset.Current(); err == nil {
			srv, load := harness.SplitCPUs(cur)
			f.serverCPUs, f.loadCPUs = srv.String(), load.String()
		}
	}
	for _, c := range []struct{ name, v string }{{"server-cpus", f.serverCPUs}, {"load-cpus", f.loadCPUs}} {
		if _, err := cpuset.Parse(c.v); err != nil {
			return fmt.Errorf("soak: --%s: %w", c.name, err)
		}
	}
	f.workload = harness.Workload{Workload: results.Workload{Protocol: f.protocol, Conns: f.conns, Depth: f.depth,
		CPU: f.cpu, Block: f.block, Size: f.size, Ops: f.ops}}
	lc, err := f.workload.LoadConfig()
	if err != nil {
		return fmt.Errorf("soak: the workload (--protocol, --conns, --depth, --cpu, --block, --size, --ops): %w", err)
	}
	lc.Closed, lc.Rate, lc.Outstanding = true, 0, f.outstanding
	lc.Duration, lc.Warmup, lc.Requests = 0, 0, f.requests
	lc.Timeout, lc.Accounts, lc.Amount, lc.WithdrawWait = f.timeout, f.accounts, f.amount, f.withdrawWait
	lc.KillEvery, lc.Seed = f.killEvery, f.seed
	if load, err := cpuset.Parse(f.loadCPUs); err == nil && len(load) > 0 {
		lc.Workers, lc.WorkerCPUs = loadgen.Placement(load, f.conns)
	}
	if err := lc.Validate(); err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	f.load = lc
	return nil
}

// orAll names a CPU list, or says there is none.
func orAll(cpus string) string {
	if cpus == "" {
		return "unpinned"
	}
	return cpus
}

// soakConfigs returns the configurations list names (empty: the
// default): one per model as the comparison has them, and soakChain.
func soakConfigs(list string) ([]harness.Config, error) {
	chains := harness.ChainConfigs()
	i := slices.IndexFunc(chains, func(c harness.Config) bool { return c.Name == soakChain })
	def := append(harness.Families(), chains[i])
	if list == "" {
		return def, nil
	}
	cs, err := selectFrom(list, def, harness.AllConfigs(), chains)
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	return cs, nil
}

// soakRow is one configuration's outcome.
type soakRow struct {
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
func (r *soakRow) failed() bool {
	return r.unavailable == "" && (r.failure != "" || len(r.reasons) > 0)
}

// soakOne soaks configuration c: its server started, the ledger's total
// read, the load run with a progress line now and then, the total read
// again, the server stopped; and judges it.
func soakOne(ctx context.Context, f *soakFlags, c harness.Config, stdout io.Writer) soakRow {
	row := soakRow{name: c.Name}
	extra := []string{"--accounts", strconv.Itoa(f.accounts), "--initial-balance", strconv.FormatInt(f.initial, 10)}
	srv, _, err := harness.StartConfig(f.bin, c, f.workload, f.serverCPUs, extra)
	if err != nil {
		if errors.Is(err, harness.ErrNotStarted) {
			row.unavailable = strings.TrimPrefix(err.Error(), harness.ErrNotStarted.Error()+": ")
		} else {
			row.failure = err.Error()
		}
		fmt.Fprintf(stdout, "%s: not run: %v\n", c.Name, err)
		return row
	}
	before, err := ledgerTotal(srv)
	if err == nil {
		err = waitIdle(ctx, srv)
	}
	if err != nil {
		row.failure = "before the run: " + err.Error()
		row.failure += stopText(srv.Stop())
		return row
	}
	lc := f.load
	lc.Addr, lc.LedgerMoney = srv.Addr(), before
	start := time.Now()
	stopProgress := progress(f, srv, c.Name, stdout)
	r, runErr := loadgen.Run(ctx, lc)
	stopProgress()
	after, totalErr := ledgerTotal(srv)
	stopErr := srv.Stop()
	if r == nil {
		row.failure = fmt.Sprintf("the load: %v%s", runErr, stopText(stopErr))
		return row
	}
	row.judge(r, before, after, errors.Join(runErr, totalErr, stopErr))
	fmt.Fprintf(stdout, "%s: %d requests in %v, %d connections killed, %d refused at the server's limit (their requests resent): %s\n",
		c.Name, row.requests, time.Since(start).Round(time.Millisecond), row.kills, row.refused, row.verdict())
	return row
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

// progress prints a line every f.progress with the requests srv has
// served, until the returned function is called (which waits for it).
// It alone uses srv's control channel meanwhile.
func progress(f *soakFlags, srv *harness.Server, name string, stdout io.Writer) func() {
	if f.progress <= 0 {
		return func() {}
	}
	start := time.Now()
	return every(f.progress, func() {
		if s, err := srv.Snapshot(); err == nil {
			fmt.Fprintf(stdout, "  %s: %d requests served (%.0f%% of %d), %v\n", name, s.Stats.Requests,
				100*float64(s.Stats.Requests)/float64(f.requests), f.requests, time.Since(start).Round(time.Second))
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
func (row *soakRow) judge(r *loadgen.Result, before, after int64, err error) {
	q := &r.Requests
	row.requests, row.abandoned, row.reconn = q.Sent, q.Abandoned, q.Reconnects
	row.kills, row.refused = q.Kills, q.Refused
	row.lost = q.Sent - q.Completed - q.Abandoned
	row.ok = q.OK
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		n := r.Errors[k]
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		switch {
		case loadgen.ExpectedOutcome(k):
			row.ok += n
		case k == "verify_duplicate":
			row.dups += n
		case strings.HasPrefix(k, "verify_"):
			row.mismatch += n
		case slices.Contains(transport, k):
		default:
			row.errs += n
		}
	}
	row.detail = strings.Join(kinds, ", ")
	row.expected, row.found = before, after
	if l := r.Ledger; l != nil {
		row.expected += l.Delta()
		row.unknown = l.Unknown
	}
	fail := func(format string, args ...any) { row.reasons = append(row.reasons, fmt.Sprintf(format, args...)) }
	if err != nil {
		fail("%v", err)
	}
	for _, c := range []struct {
		n    int64
		what string
	}{{row.errs, "errors"}, {row.mismatch, "mismatches"}, {row.dups, "duplicates"}, {row.lost, "lost"},
		{row.unknown, "money operations of unknown outcome"}, {q.Unsent, "requests never sent"}} {
		if c.n != 0 {
			fail("%d %s", c.n, c.what)
		}
	}
	if row.expected != row.found {
		fail("money: the ledger holds %d, expected %d (%+d)", row.found, row.expected, row.found-row.expected)
	}
}

// verdict is the row's last column.
func (row *soakRow) verdict() string {
	switch {
	case row.unavailable != "":
		return "unavailable: " + firstLine(row.unavailable)
	case row.failure != "":
		return "FAIL: " + firstLine(row.failure)
	case len(row.reasons) > 0:
		return "FAIL: " + strings.Join(row.reasons, "; ")
	}
	return "ok"
}

// writeSoakTable prints the table of rows, and under it each failed
// row's errors by kind.
func writeSoakTable(w io.Writer, rows []soakRow) {
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
