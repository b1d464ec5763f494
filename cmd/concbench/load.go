package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/programs/bench"
	"concbench/programs/load"
)

var loadUsage = expand(`usage: concbench load --addr HOST:PORT (--rate R | --closed) [flags]

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
experiment's that "concbench bench" runs (its default profile): {conns}
connections (bench {bench.conns}), a {warmup} warm-up ({bench.warmup}) and a {duration} window
({bench.duration}, repeated {bench.reps} times), no CPU work per request ({bench.cpu}), and no
CPU pinning unless --cpus is given (bench pins the generator to its own
CPUs, --load-cpus). To reproduce one bench point by hand: --conns {bench.conns}
--cpu {bench.cpu} --warmup {bench.warmup} --duration {bench.duration} --cpus {load.cpus}, with the server
on CPU {server.cpus} (this machine's split).

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
`, loadValues())

// loadValues are the numbers load's usage quotes: its defaults beside
// the default profile's, and this machine's CPU split.
func loadValues() map[string]string {
	d := load.Defaults()
	p, _ := harness.Profile("default")
	server, cpus := bench.CPUSplit()
	if server == "" {
		server, cpus = "0", "0" // one CPU: nothing to split
	}
	return map[string]string{
		"conns": strconv.Itoa(d.Gen.Conns), "warmup": d.Gen.Warmup.String(), "duration": d.Gen.Duration.String(),
		"bench.conns": strconv.Itoa(p.Workloads[0].Conns), "bench.warmup": time.Duration(p.Warmup).String(),
		"bench.duration": time.Duration(p.Duration).String(), "bench.reps": strconv.Itoa(p.Repetitions),
		"bench.cpu": p.Workloads[0].CPU, "load.cpus": cpus, "server.cpus": server,
	}
}

func runLoad(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	d := load.Defaults()
	c := d
	fs.StringVar(&c.Gen.Addr, "addr", "", "server address host:port (required)")
	fs.StringVar(&c.Gen.Protocol, "protocol", d.Gen.Protocol, "wire protocol: http or binary")
	fs.IntVar(&c.Gen.Conns, "conns", d.Gen.Conns, "connections")
	fs.IntVar(&c.Gen.Workers, "workers", d.Gen.Workers, "event-loop threads the connections are spread over (with --cpus: one per CPU but the first, each pinned to its CPU, at most one per connection)")
	fs.IntVar(&c.Gen.Depth, "depth", d.Gen.Depth, "pipelining depth: requests written together per batch (1: no pipelining)")
	fs.Float64Var(&c.Gen.Rate, "rate", 0, "open loop: global offered load in requests/s, split exactly over the connections (required unless --closed; for onoff, the rate while on)")
	fs.StringVar(&c.Arrival, "arrival", d.Arrival, "open loop: arrival process: poisson, constant, or onoff (Poisson bursts; see --on, --off)")
	fs.DurationVar(&c.Gen.On, "on", 0, "onoff: length of each burst (required with --arrival onoff)")
	fs.DurationVar(&c.Gen.Off, "off", 0, "onoff: idle time between bursts (required with --arrival onoff)")
	fs.IntVar(&c.Gen.MaxInFlight, "max-in-flight", d.Gen.MaxInFlight, "open loop: bound on requests in flight per connection; arrivals beyond it wait (counted as held), never skipped")
	fs.BoolVar(&c.Gen.Closed, "closed", false, "closed loop: each connection keeps --outstanding requests in flight (default: open loop)")
	fs.IntVar(&c.Gen.Outstanding, "outstanding", 0, "closed loop: requests in flight per connection (default: --depth)")
	fs.IntVar(&c.Gen.ConnRequests, "conn-requests", 0, "requests a connection carries before it is closed and another opened (1: a new connection per request, no keep-alive; 0: keep-alive)")
	fs.DurationVar(&c.Gen.Duration, "duration", d.Gen.Duration, "measured time after the warm-up (ignored when --requests is given)")
	fs.Int64Var(&c.Gen.Requests, "requests", 0, "measure this many requests instead of a duration (default 0: use --duration)")
	fs.DurationVar(&c.Gen.Warmup, "warmup", d.Gen.Warmup, "unmeasured warm-up before the measurement")
	fs.DurationVar(&c.Gen.Timeout, "timeout", d.Gen.Timeout, "a request unanswered this long after its send fails (with the requests behind it)")
	fs.StringVar(&c.CPU, "cpu", d.CPU, "CPU work per request (distribution of durations)")
	fs.StringVar(&c.Block, "block", d.Block, "blocking work per request (distribution of durations)")
	fs.StringVar(&c.Size, "size", d.Size, "response payload bytes (distribution)")
	fs.StringVar(&c.Prio, "prio", d.Prio, "request priority 0..255 (distribution)")
	fs.StringVar(&c.PrioClasses, "prio-classes", "", "also report latency per priority class: increasing boundaries 1..255, e.g. 128 for classes 0-127 and 128-255 (default: none)")
	fs.StringVar(&c.Ops, "ops", d.Ops, "operation mix: op=weight,… over work, balance, deposit, withdraw, transfer, total")
	fs.IntVar(&c.Gen.Accounts, "accounts", 0, "ledger accounts the server has (its --accounts; default 0: the service's default, 1024)")
	fs.Int64Var(&c.Gen.Amount, "amount", d.Gen.Amount, "amount each deposit, withdrawal or transfer moves")
	fs.StringVar(&c.Verify, "verify", d.Verify, "response checks: full (id, order, checksum, body), auto (what the response carries), status, or none; use auto, status or none for servers that are not concbench's (nginx)")
	fs.Uint64Var(&c.Gen.Seed, "seed", d.Gen.Seed, "seed of the schedule and the request mix")
	fs.DurationVar(&c.Gen.HistLowest, "hist-lowest", d.Gen.HistLowest, "latency histograms: lowest discernible value")
	fs.DurationVar(&c.Gen.HistHighest, "hist-highest", d.Gen.HistHighest, "latency histograms: highest value (larger ones are clamped and counted)")
	fs.IntVar(&c.Gen.HistDigits, "hist-digits", d.Gen.HistDigits, "latency histograms: significant decimal digits, 1..5")
	fs.StringVar(&c.JSON, "json", "", "write the result as JSON to this file (- for standard output; default: none)")
	fs.StringVar(&c.Gen.HlogPath, "hlog", "", "write per-interval latency histograms to this HdrHistogram log (.hlog; default: none)")
	fs.DurationVar(&c.Gen.HlogInterval, "hlog-interval", d.Gen.HlogInterval, "interval of the --hlog histograms")
	fs.Float64Var(&c.Gen.Limits.MaxLagShare, "max-lag-share", d.Gen.Limits.MaxLagShare, "the verdict's bound on the share of each reported latency percentile that the generator's own lateness may account for")
	fs.StringVar(&c.Poll, "poll", "", "how the workers wait: busy (poll without sleeping; needs a CPU per worker) or sleep (default: busy with --cpus, else sleep)")
	fs.DurationVar(&c.Gen.Spin, "spin", 0, "sleep polling: poll instead of sleeping this long before each scheduled send (0: measured from how late this machine wakes timed waits; negative: never)")
	fs.StringVar(&c.CPUs, "cpus", "", "pin the generator to these CPUs (cpulist, e.g. 1 or 2-3; default: no pinning)")
	fs.StringVar(&c.Agents, "agents", "", "coordinate these agents (host:port,…; each a \"concbench agent\") instead of generating load here: the connections and rate are split over them")
	fs.StringVar(&c.AgentToken, "agent-token", "", "the token the agents were started with (required with --agents; default: $CONCBENCH_AGENT_TOKEN)")
	fs.DurationVar(&c.AgentLead, "agent-lead", d.AgentLead, "with --agents: how far ahead the common start lies (time for the agents to open their connections)")
	fs.BoolVar(&c.AllowInvalid, "allow-invalid", false, "exit with status 0 even if the verdict is invalid (default: status 3)")
	if err := cli.Parse(fs, args, stdout, loadUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("load: unexpected argument %q (flags only)", fs.Arg(0))
	}
	c.Given = cli.Set(fs)
	return load.Run(ctx, c, stdout, stderr)
}
