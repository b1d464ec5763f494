package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"concbench/harness"
	"concbench/internal/cli"
	"concbench/programs/bench"
)

var benchUsage = expand(`usage: concbench bench [--profile NAME] [flags]
       concbench bench --resume DIR

Runs an experiment: every configuration (a model and its settings) under
every workload; per configuration and repetition one server process
("concbench serve", pinned to --server-cpus) whose capacity is measured
closed-loop, then open-loop points, the load generator running in this
process, pinned to --load-cpus. Repetitions are interleaved across
configurations. Each point is written to <out>/bench-<UTC time>/points/
as soon as it is measured; run.json describes the run. At the start the
load generator's own ceiling is measured against a server that answers
at once, and every point whose rate reaches {ceiling}% of it is reported as
beyond what the generator measures here, never as a model's number.

Every model is sized from the server's CPUs by one rule (a thread per
CPU; more for blocking work, by Little's law), recorded in every point;
the load generator gets a busy-polling worker per load CPU but the first.
--print-experiment shows both for the CPUs given, without running.

A progress line per point goes to standard error; at the end, the run's
summary and its folder go to standard output (preceded by a warning when
most of the run is invalid), and the figures and the report (report.md,
report.html) are rendered into the folder (--no-figures skips it). A
model that cannot run here is recorded as unavailable with its reason; a
point whose server died is recorded as failed; neither stops the run.
Ctrl-C stops after the current point; --resume DIR continues it.

Profiles (--profile; docs/profiles.md has what each measures and why):
  default      the workload suite: cpu, tiny, block, bimodal, ledger; every
               model family under each; capacity, capacity at the latency
               objective, one equal absolute rate; {default.reps} repetitions; an A/A
               twin of Leader/Followers (lifo)
  aa           the A/A campaign's experiment (concbench aarate): LF (lifo,
               twinned), netpoll, proactor under cpu and tiny
  load         every family under cpu at its capacity and {load.fractions}% of it
  variants     the Leader/Followers promotion orders, Half-Sync/Half-
               Reactive pooled, under cpu and bimodal
  practised    Leader/Followers as servers practise it (nginx's accept
               modes, the partitioned server, Cherokee, boost.asio)
               beside the textbook pool, under cpu, tiny and churn
               (a new connection per request)
  dispersion   the shared handle set against the partitioned server at one
               equal load as the service time's dispersion grows (needs
               ≥ 4 server CPUs)
  cores        every family on 1, 2, 4, … server CPUs under cpu, tiny and
               block: capacity and its speed-up against CPUs
  threads      the thread sweep: the pools at 1, 2, 4, … up to 2× the
               server CPUs (at least 8) under cpu and block
  thesis       default, cores and threads in turn at {thesis.reps} repetitions and
               {thesis.duration} windows, into one folder; its duration estimated first
  gate         the CI regression gate's fixed suite
  chain        the front end in front of a back end
  connections  every family at {conns.first} to {conns.last} connections at one rate
  nginx        real nginx beside the nginx-style model in each accept mode
               (mutex, exclusive, reuseport), no work per request:
               capacity, one equal rate, connection balance (make nginx)
  asio         real boost.asio beside the sharedqueue model, the nginx
               profile's loads and a mechanisms point (make asio)
  lean         real nginx, the nginx-style model, the Proactor and
               Leader/Followers, one worker each, under a quota of half
               a server CPU: what each serves with nginx's CPU (root)
Flags override the profile's fields; --experiment FILE reads a whole
experiment (JSON, as in run.json's "experiment"; print one with
--print-experiment).

From many hosts: --agents host:port,… with --agent-token runs every point's
load through those agents ("concbench agent" on each load host; see "help
load") instead of this process: connections and rate are split over them,
their histograms merged exactly, a point invalid if any agent's is; each
point's warnings record every agent's share, clock offset and window
skew. The server must then listen on an address the agents reach
(--server-addr, e.g. 10.0.0.1:0; the agents' --allow must include it);
the server's costs are still measured over the common window, with every
agent's connections open. --load-cpus does not pin the agents (each has
its own --cpus).

Flags:
`, benchValues)

// benchValues are the numbers bench's usage quotes from the profiles,
// so that the help cannot drift from them.
var benchValues = func() map[string]string {
	def, _ := harness.Profile("default")
	load, _ := harness.Profile("load")
	thesis, _ := harness.Profile("thesis")
	pct := make([]string, len(load.Fractions))
	for i, f := range load.Fractions {
		pct[i] = strconv.FormatFloat(100*f, 'g', -1, 64)
	}
	return map[string]string{
		"ceiling":         strconv.FormatFloat(100*harness.CeilingFraction, 'g', -1, 64),
		"default.reps":    strconv.Itoa(def.Repetitions),
		"load.fractions":  strings.Join(pct, "/"),
		"thesis.reps":     strconv.Itoa(thesis.Repetitions),
		"thesis.duration": time.Duration(thesis.Duration).String(),
		"conns.first":     strconv.Itoa(harness.ConnCounts[0]),
		"conns.last":      strconv.Itoa(harness.ConnCounts[len(harness.ConnCounts)-1]),
	}
}()

// expand replaces every {key} in s by its value.
func expand(s string, values map[string]string) string {
	var kv []string
	for k, v := range values {
		kv = append(kv, "{"+k+"}", v)
	}
	return strings.NewReplacer(kv...).Replace(s)
}

func runBench(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	c := bench.Defaults()
	thesis, _ := harness.Profile("thesis")
	gate, _ := harness.Profile("gate")
	server, load := bench.CPUSplit()
	if server == "" {
		server, load = "none: under 2 CPUs, unpinned", "none"
	}
	fs.StringVar(&c.Profile, "profile", c.Profile, "the experiment to start from: "+strings.Join(harness.ProfileNames, ", "))
	fs.StringVar(&c.Experiment, "experiment", "", "read the experiment from this JSON file instead of a profile (the other flags still override it)")
	fs.StringVar(&c.Resume, "resume", "", "continue the interrupted run in this folder, with its own experiment (no other experiment flags)")
	fs.StringVar(&c.Out, "out", c.Out, "the folder under which the run's folder bench-<UTC time> is made")
	fs.StringVar(&c.Models, "models", "", "comma-separated configurations to run, by name (leaderfollowers/lifo) or by model (leaderfollowers: all its configurations); default: the profile's")
	fs.StringVar(&c.Twin, "twin", c.Twin, "the A/A control: the configuration measured a second time, as <name>/twin, whose decisions against its original must never separate them (the default and thesis profiles': their first configuration; none turns it off)")
	fs.IntVar(&c.Reps, "reps", c.Reps, fmt.Sprintf("repetitions of every point (the profile's; thesis %d, gate %d)", thesis.Repetitions, gate.Repetitions))
	fs.DurationVar(&c.Budget, "budget", c.Budget, "time budget of a suite run, from its start to its last measurement: after the planned points it decides the who-wins table on them and spends the rest on extra rounds for the cells still undecided (the default profile's; 0: no extra rounds)")
	fs.StringVar(&c.Fractions, "fractions", c.Fractions, "comma-separated open-loop loads as fractions of capacity, each in (0, 1] (the profile's)")
	fs.StringVar(&c.Rates, "rates", "", fmt.Sprintf("comma-separated open-loop loads as absolute rates, req/s, the same for every configuration (the profile's; connections %d)", harness.ConnRate))
	fs.StringVar(&c.RatesFromSlowest, "rates-from-slowest", c.RatesFromSlowest, "comma-separated open-loop loads as fractions in (0, 1] of the slowest configuration's median capacity under each workload, the same absolute rates for every configuration, measured after every other point (the profile's; empty for none)")
	fs.DurationVar(&c.Duration, "duration", c.Duration, fmt.Sprintf("measured window of every point (the profile's; thesis %v, gate %v)", time.Duration(thesis.Duration), time.Duration(gate.Duration)))
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, fmt.Sprintf("unmeasured warm-up before every window, at least 100ms (the profile's; thesis %v, gate %v)", time.Duration(thesis.Warmup), time.Duration(gate.Warmup)))
	fs.DurationVar(&c.SLO, "slo", 0, "latency objective of every workload, the bound of its percentile (--slo-percentile): each configuration's highest open-loop rate that meets it is searched for after every capacity point (default: the profile's per-workload objectives; suite sets them; 0 removes them)")
	fs.Float64Var(&c.SLOPercentile, "slo-percentile", c.SLOPercentile, "the percentile --slo bounds: 50, 90, 99 or 99.9")
	fs.IntVar(&c.SLOProbes, "slo-probes", c.SLOProbes, "most probes of each search (one per configuration, workload with an objective and repetition)")
	fs.DurationVar(&c.SLOWarmup, "slo-warmup", c.SLOWarmup, "warm-up of every search probe, at least 100ms")
	fs.DurationVar(&c.SLODuration, "slo-duration", c.SLODuration, "measured window of every search probe")
	fs.IntVar(&c.Mechanisms, "mechanisms", c.Mechanisms, "repetitions, the first ones, with a mechanisms point after each equal-load point (--rates-from-slowest): a short window that counts the server's system calls by kind, futex wake calls and cross-CPU wake-ups with kernel tracepoints (needs root), measuring nothing else; 0 turns it off (the profile's)")
	fs.DurationVar(&c.MechanismsDuration, "mechanisms-duration", c.MechanismsDuration, "measured window of every mechanisms point")
	fs.StringVar(&c.Conns, "conns", c.Conns, "connections; a comma-separated list makes a sweep, one workload each (the profile's)")
	fs.StringVar(&c.Protocol, "protocol", c.Protocol, "wire protocol, http or binary; a comma-separated list makes a sweep (the profile's)")
	fs.StringVar(&c.CPU, "cpu", c.CPU, "CPU work per request: V, exp:MEAN or bimodal:P:A:B durations (exponential service makes the M/M/c ideal exact)")
	fs.IntVar(&c.GOMAXPROCS, "gomaxprocs", 0, "GOMAXPROCS of every server, overriding the profile's per-model choice (0: keep the profile's)")
	fs.StringVar(&c.ServerCPUs, "server-cpus", "", "CPUs the server runs on (cpulist); default: the first half of this process's CPUs (here: "+server+")")
	fs.StringVar(&c.LoadCPUs, "load-cpus", "", "CPUs the load generator runs on, disjoint from --server-cpus; default: the second half (here: "+load+")")
	fs.Float64Var(&c.ServerCPUQuota, "server-cpu-quota", 0, "limit the measured server, all its threads together, to this share of one CPU (0.5: half a CPU) with a cgroup's CPU quota (Linux, root), so that its capacity, not the load generator's, sets the rate on a small machine; latencies then include the quota's throttling (the profile's; lean 0.5; 0: none)")
	fs.StringVar(&c.ServerBinary, "server-binary", "", "the concbench executable that serves (e.g. another commit's build); default: this one")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the load generator's schedules")
	fs.BoolVar(&c.NoFigures, "no-figures", false, "do not render the figures and the report at the end (render later with concbench figures)")
	fs.BoolVar(&c.RelaxLoadChecks, "relax-load-checks", false, "turn off the load generator's checks on its own health (only for tests on a machine busy with other work; every point then says so)")
	fs.DurationVar(&c.Validate, "validate", c.Validate, "after the run, check the measurement chain with one short concbench validate experiment (M/M/1 at ρ 0.5) of this window, ~8 s more for the floor, a closed-loop run and start-up, for the report's Measurement chain section; 0 skips it")
	fs.BoolVar(&c.Print, "print-experiment", false, "print the experiment as JSON (an --experiment file) and exit without running it")
	agentFlags(fs, &c.Agents)
	if err := cli.Parse(fs, args, stdout, benchUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q (flags only)", fs.Arg(0))
	}
	c.Given = cli.Set(fs)
	return bench.Run(ctx, c, stdout, stderr)
}
