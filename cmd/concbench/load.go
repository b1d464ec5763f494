package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"concbench/internal/cli"
	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/loadgen/agent"
	"concbench/results"
)

const loadUsage = `usage: concbench load --addr HOST:PORT (--rate R | --closed) [flags]

Drives a server with load and measures it: open loop by default (requests
on a Poisson schedule at --rate, latency corrected for coordinated
omission: measured from each request's intended send time, with the
uncorrected latency beside it), or closed loop with --closed (each
connection keeps --outstanding requests in flight; labelled closed-loop
everywhere). Every response is verified; failures are counted by kind and
kept out of the latency.

Prints a summary (percentile table, target and achieved rate, errors,
send lag, the generator's own CPU and GC, and a verdict) on standard
output; --json writes the full result, --hlog the per-interval histograms.
A run that cannot be trusted is marked INVALID, each reason with its code:
generator-lag (the generator's own lateness may account for more than
--max-lag-share of p50, p90 or p99), over-capacity (the requests in flight
grew through the window, or a schedule debt was left), rate (under 99% of
the scheduled requests sent and answered inside the window), generator-busy
(the generator's workers busy over 90%), generator-cpu (its threads waited
for a CPU over 10% of the time, or the hypervisor stole over 5%),
send-process (the requests as sent are not the arrival process: KS test
and lag-1 correlation of the gaps), unsent, errors (any failed request),
warm-up, out-of-range, clock (the wall clock stepped), aborted. It warns
without invalidating when the lateness passes a tenth of a percentile,
when p99.9 or p99.99 is untrusted (printed marked), when only latency
trends upward, when the machine stalled the generator over 5% of the
time, and for held requests and GC pauses. An INVALID run exits with
status 3 after printing its results (--allow-invalid: status 0), so that a
script cannot take an invalid measurement for a valid one. A run that
cannot be made (no connection, a failed priming request) exits with
status 1.

Distributions (--cpu, --block, --size, --prio): V or fixed:V, exp:MEAN,
bimodal:P:A:B (A with probability P, else B). Durations for --cpu and
--block (10us, 1.5ms), numbers for --size (bytes) and --prio (0..255).

Its defaults are for driving a server by hand, and differ from the
experiment's that "concbench bench" runs (its default profile): 16
connections (bench 64), a 1s warm-up (250ms) and a 10s window (1s, repeated
6 times), no CPU work per request (exponential, mean 10us), and no CPU
pinning unless --cpus is given (bench pins the generator to its own CPU,
--load-cpus). To reproduce one bench point by hand: --conns 64 --cpu
exp:10us --warmup 250ms --duration 1s --cpus 1, with the server on CPU 0.

From many hosts: with --agents the command coordinates agents ("concbench
agent", started on each host by ssh or your orchestrator) instead of
generating load itself: it splits --conns and --rate over them (workers
are per agent), measures each agent's clock offset (refusing above 1 ms of
uncertainty or 1 s of offset), starts them together --agent-lead from
now, and merges their HDR histograms exactly into one result, invalid if
any agent's is or if an agent is lost (see package loadgen/agent). Pin
each agent with its own --cpus (this command's --cpus is refused then).
The JSON result is the merged one with the common start and, per agent,
its share, clock offset, start skew and own result ("agents").

Examples:
  concbench load --addr 127.0.0.1:8080 --rate 20000 --conns 64 --duration 10s --json out.json
  concbench load --addr 10.0.0.1:8080 --rate 40000 --conns 128 --duration 10s --agents h1:7070,h2:7070 --agent-token "$TOKEN"
  concbench load --addr 127.0.0.1:8080 --closed --conns 64 --duration 10s
  concbench load --addr 127.0.0.1:80 --rate 5000 --verify auto     (nginx)

Flags:
`

// loadFlags holds the load command's settings that are not Config fields.
type loadFlags struct {
	cpu, block, size, prio, ops, arrival, cpus, jsonPath, poll string
	prioClasses                                                string
	allowInvalid                                               bool
	agents, agentToken                                         string
	agentLead                                                  time.Duration
}

func runLoad(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var cfg loadgen.Config
	var f loadFlags
	var verify string
	fs.StringVar(&cfg.Addr, "addr", "", "server address host:port (required)")
	fs.StringVar(&cfg.Protocol, "protocol", "http", "wire protocol: http or binary")
	fs.IntVar(&cfg.Conns, "conns", loadgen.DefaultConns, "connections")
	fs.IntVar(&cfg.Workers, "workers", 1, "event-loop threads the connections are spread over (with --cpus: one per CPU but the first, each pinned to its CPU, at most one per connection)")
	fs.IntVar(&cfg.Depth, "depth", 1, "pipelining depth: requests written together per batch (1: no pipelining)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop: global offered load in requests/s, split exactly over the connections (required unless --closed; for onoff, the rate while on)")
	fs.StringVar(&f.arrival, "arrival", string(loadgen.Poisson), "open loop: arrival process: poisson, constant, or onoff (Poisson bursts; see --on, --off)")
	fs.DurationVar(&cfg.On, "on", 0, "onoff: length of each burst (required with --arrival onoff)")
	fs.DurationVar(&cfg.Off, "off", 0, "onoff: idle time between bursts (required with --arrival onoff)")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", loadgen.DefaultMaxInFlight, "open loop: bound on requests in flight per connection; arrivals beyond it wait (counted as held), never skipped")
	fs.BoolVar(&cfg.Closed, "closed", false, "closed loop: each connection keeps --outstanding requests in flight (default: open loop)")
	fs.IntVar(&cfg.Outstanding, "outstanding", 0, "closed loop: requests in flight per connection (default: --depth)")
	fs.IntVar(&cfg.ConnRequests, "conn-requests", 0, "requests a connection carries before it is closed and another opened (1: a new connection per request, no keep-alive; 0: keep-alive)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time after the warm-up (ignored when --requests is given)")
	fs.Int64Var(&cfg.Requests, "requests", 0, "measure this many requests instead of a duration (default 0: use --duration)")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "unmeasured warm-up before the measurement")
	fs.DurationVar(&cfg.Timeout, "timeout", loadgen.DefaultTimeout, "a request unanswered this long after its send fails (with the requests behind it)")
	fs.StringVar(&f.cpu, "cpu", "0", "CPU work per request (distribution of durations)")
	fs.StringVar(&f.block, "block", "0", "blocking work per request (distribution of durations)")
	fs.StringVar(&f.size, "size", "0", "response payload bytes (distribution)")
	fs.StringVar(&f.prio, "prio", "0", "request priority 0..255 (distribution)")
	fs.StringVar(&f.prioClasses, "prio-classes", "", "also report latency per priority class: increasing boundaries 1..255, e.g. 128 for classes 0-127 and 128-255 (default: none)")
	fs.StringVar(&f.ops, "ops", "work=1", "operation mix: op=weight,… over work, balance, deposit, withdraw, transfer, total")
	fs.IntVar(&cfg.Accounts, "accounts", 0, "ledger accounts the server has (its --accounts; default 0: the service's default, 1024)")
	fs.Int64Var(&cfg.Amount, "amount", 1, "amount each deposit, withdrawal or transfer moves")
	fs.StringVar(&verify, "verify", string(loadgen.VerifyFull), "response checks: full (id, order, checksum, body), auto (what the response carries), status, or none; use auto, status or none for servers that are not concbench's (nginx)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the schedule and the request mix")
	fs.DurationVar(&cfg.HistLowest, "hist-lowest", loadgen.DefaultHistLowest, "latency histograms: lowest discernible value")
	fs.DurationVar(&cfg.HistHighest, "hist-highest", loadgen.DefaultHistHighest, "latency histograms: highest value (larger ones are clamped and counted)")
	fs.IntVar(&cfg.HistDigits, "hist-digits", loadgen.DefaultHistDigits, "latency histograms: significant decimal digits, 1..5")
	fs.StringVar(&f.jsonPath, "json", "", "write the result as JSON to this file (- for standard output; default: none)")
	fs.StringVar(&cfg.HlogPath, "hlog", "", "write per-interval latency histograms to this HdrHistogram log (.hlog; default: none)")
	fs.DurationVar(&cfg.HlogInterval, "hlog-interval", loadgen.DefaultHlogInterval, "interval of the --hlog histograms")
	fs.Float64Var(&cfg.Limits.MaxLagShare, "max-lag-share", loadgen.DefaultLimits.MaxLagShare, "the verdict's bound on the share of each reported latency percentile that the generator's own lateness may account for")
	fs.StringVar(&f.poll, "poll", "", "how the workers wait: busy (poll without sleeping; needs a CPU per worker) or sleep (default: busy with --cpus, else sleep)")
	fs.DurationVar(&cfg.Spin, "spin", 0, "sleep polling: poll instead of sleeping this long before each scheduled send (0: measured from how late this machine wakes timed waits; negative: never)")
	fs.StringVar(&f.cpus, "cpus", "", "pin the generator to these CPUs (cpulist, e.g. 1 or 2-3; default: no pinning)")
	fs.StringVar(&f.agents, "agents", "", "coordinate these agents (host:port,…; each a \"concbench agent\") instead of generating load here: the connections and rate are split over them")
	fs.StringVar(&f.agentToken, "agent-token", "", "the token the agents were started with (required with --agents; default: $CONCBENCH_AGENT_TOKEN)")
	fs.DurationVar(&f.agentLead, "agent-lead", agent.DefaultLead, "with --agents: how far ahead the common start lies (time for the agents to open their connections)")
	fs.BoolVar(&f.allowInvalid, "allow-invalid", false, "exit with status 0 even if the verdict is invalid (default: status 3)")
	if err := cli.Parse(fs, args, stdout, loadUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("load: unexpected argument %q (flags only)", fs.Arg(0))
	}
	set := cli.Set(fs)
	if cfg.Requests > 0 && !set["duration"] {
		cfg.Duration = 0
	}
	// loadgen.Config reads 0 as "the default" in these fields; from the
	// command line a 0 (or less) is a mistake, not a request for the
	// default, and must not run as one.
	for _, c := range []struct {
		name string
		v    int
	}{{"conns", cfg.Conns}, {"workers", cfg.Workers}, {"depth", cfg.Depth}, {"max-in-flight", cfg.MaxInFlight}} {
		if set[c.name] && c.v < 1 {
			return fmt.Errorf("load: --%s %d out of range (accepted: 1 or more)", c.name, c.v)
		}
	}
	cfg.Arrival = loadgen.Arrival(f.arrival)
	cfg.Poll = loadgen.Poll(f.poll)
	if f.poll == "" {
		// A generator pinned to CPUs of its own busy-polls: a thread woken
		// by a timer arrives late on a VM whose idle vCPUs halt (loadgen's
		// "Keeping the schedule").
		cfg.Poll = loadgen.PollSleep
		if f.cpus != "" {
			cfg.Poll = loadgen.PollBusy
		}
	}
	cfg.Verify = loadgen.VerifyMode(verify)
	var err error
	for _, d := range []struct {
		name  string
		val   string
		dst   *loadgen.Dist
		parse func(string) (loadgen.Dist, error)
	}{
		{"cpu", f.cpu, &cfg.CPU, loadgen.ParseDurationDist},
		{"block", f.block, &cfg.Block, loadgen.ParseDurationDist},
		{"size", f.size, &cfg.Size, loadgen.ParseIntDist},
		{"prio", f.prio, &cfg.Priority, loadgen.ParseIntDist},
	} {
		if *d.dst, err = d.parse(d.val); err != nil {
			return fmt.Errorf("load: --%s: %w", d.name, err)
		}
	}
	if cfg.PriorityClasses, err = loadgen.ParsePriorityClasses(f.prioClasses); err != nil {
		return fmt.Errorf("load: --prio-classes: %w", err)
	}
	if cfg.Ops, err = loadgen.ParseOpMix(f.ops); err != nil {
		return fmt.Errorf("load: --ops: %w", err)
	}
	if f.cpus != "" {
		cpus, err := cpuset.Parse(f.cpus)
		if err != nil {
			return fmt.Errorf("load: --cpus: %w", err)
		}
		// The harness's placement (loadgen.Placement): a CPU of its own
		// per worker, the first CPU left to the process's other threads.
		n, pinned := loadgen.Placement(cpus, max(cfg.Conns, 1))
		if !set["workers"] {
			cfg.Workers = n
		}
		if cfg.Workers <= len(pinned) {
			cfg.WorkerCPUs = pinned
		}
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if f.agents != "" {
		return runLoadAgents(ctx, cfg, &f, stdout, stderr)
	}
	if err := cli.PinCPUs("load", f.cpus, 0); err != nil {
		return err
	}
	// Ps beyond the workers', as the harness does (loadgen.Procs): a
	// locked worker must not wait for its P to come back from the
	// process's other goroutines or the collector.
	if p := loadgen.Procs(cfg.Workers); runtime.GOMAXPROCS(0) < p {
		runtime.GOMAXPROCS(p)
	}

	res, runErr := loadgen.Run(ctx, cfg)
	if res == nil {
		return fmt.Errorf("load: %w", runErr)
	}
	return finishLoad(&f, stdout, stderr, res, res, nil, runErr)
}

// finishLoad prints res's summary (then more's lines, if set) and writes
// out, the whole result, as --json asks; it returns load's error: runErr,
// or exit status 3 for an invalid verdict without --allow-invalid.
func finishLoad(f *loadFlags, stdout, stderr io.Writer, res *loadgen.Result, out any, more func(io.Writer), runErr error) error {
	summary := stdout
	if f.jsonPath == "-" {
		summary = stderr
	}
	if err := res.WriteText(summary); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if more != nil {
		more(summary)
	}
	if f.jsonPath != "" {
		if err := results.WriteJSON(f.jsonPath, stdout, out); err != nil {
			return fmt.Errorf("load: --json: %w", err)
		}
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("load: %w", runErr)
	case !f.allowInvalid && !res.Valid:
		return cli.Exit(3, fmt.Errorf("load: invalid run: %s", strings.Join(res.Reasons, "; ")))
	}
	return nil
}

// agentMaxUncertainty bounds the agents' clock uncertainty (0: the
// coordinator's default, agent.DefaultMaxUncertainty). A variable for the
// tests, whose loaded machine may delay a pong past the default.
var agentMaxUncertainty time.Duration

// runLoadAgents is "load --agents": the run coordinated over agents, its
// merged result printed and written as load's own.
func runLoadAgents(ctx context.Context, cfg loadgen.Config, f *loadFlags, stdout, stderr io.Writer) error {
	if f.cpus != "" {
		return errors.New("load: --cpus with --agents: the coordinator generates no load; pin each agent with its own --cpus")
	}
	token := f.agentToken
	if token == "" {
		token = os.Getenv("CONCBENCH_AGENT_TOKEN")
	}
	if token == "" {
		return errors.New("load: --agents needs --agent-token (or $CONCBENCH_AGENT_TOKEN): the token the agents were started with")
	}
	var addrs []string
	for _, a := range strings.Split(f.agents, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	co := &agent.Coordinator{Agents: addrs, Token: token, Lead: f.agentLead, MaxUncertainty: agentMaxUncertainty,
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, "load: "+format+"\n", args...) }}
	res, runErr := co.Run(ctx, cfg)
	if res == nil {
		return fmt.Errorf("load: %w", runErr)
	}
	return finishLoad(f, stdout, stderr, res.Result, res, func(w io.Writer) {
		for _, a := range res.Agents {
			fmt.Fprintf(w, "%s: %d connections, %.0f req/s asked; clock offset %s ± %s, window started %s after the common start",
				a.Label, a.Conns, a.RatePerS, loadgen.FormatNs(a.Clock.OffsetNs), loadgen.FormatNs(a.Clock.UncertaintyNs), loadgen.FormatNs(a.StartSkewNs))
			if a.Result != nil {
				fmt.Fprintf(w, "; %s", a.Result)
			}
			if a.Error != "" {
				fmt.Fprintf(w, "; %s", a.Error)
			}
			fmt.Fprintln(w)
		}
	}, runErr)
}
