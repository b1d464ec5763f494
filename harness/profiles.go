package harness

import (
	"fmt"
	"strings"
	"time"

	"concbench/models"
	"concbench/results"
)

// ProfileNames lists the named experiments, the default first.
var ProfileNames = []string{"default", "load", "thesis", "gate", "chain", "connections", "threads"}

// Profile returns the named experiment:
//
//   - default: what "make bench" runs — the workload suite
//     (SuiteWorkloads, each workload justified in the package
//     documentation): every model and variant under the profiles'
//     workload ("cpu"), one configuration per model family
//     (SuiteFamilies) under four more ("tiny", "block", "bimodal",
//     "ledger"). Per configuration, workload and repetition: its
//     closed-loop capacity; its capacity at the workload's p99 objective
//     (SuiteSLOs), a search of at most DefaultSLOProbes (3) open-loop
//     probes of DefaultSLOWarmup + DefaultSLODuration (100 ms + 300 ms)
//     on the same server; and one open-loop point at an absolute rate
//     shared by every configuration of the workload,
//     SuiteRateFromSlowest of the slowest one's median capacity
//     (RatesFromSlowest). 5 repetitions (the fewest with which
//     results.RatioCI gives the report's 95% intervals: 4 per side); the
//     capacity and equal-load points have 200 ms of warm-up and 700 ms
//     windows (shorter than the other profiles' 250 ms and 1 s, to fit
//     the search in: the windows still hold 10 000-30 000 responses at
//     the equal loads of cpu, tiny and ledger, about 1 000 under block);
//     the CPU work calibrated once for every server. 340 points, at most
//     510 probes and 170 search results (34 configurations × 5). The
//     report opens with the who-wins-where table. Wall time measured:
//     9 min 14 s ("/usr/bin/time -v make bench" in a fresh clone at
//     commit e56f634 on the otherwise idle 2-vCPU VM it was written on,
//     warm build cache): 994 points (340 capacity and equal-load points,
//     484 probes, 170 results) in 8 min 52 s, the chain check and the
//     figures the rest. An empty build cache adds the build's 16 s.
//   - load: the comparison under one workload across load: every model
//     and variant, HTTP, 64 connections, CPU work exponential with mean
//     10 µs; capacity, then 10, 50, 75 and 90% of it (each
//     configuration's own); 6 repetitions; 250 ms warm-up and 1 s
//     windows; the CPU work calibrated once for every server. Its report
//     has the latency-vs-load figure with the M/M/c ideal from measured
//     inputs, which the default's equal-load points cannot draw. This
//     was the default profile until the suite replaced it. Measured:
//     6 min 44 s ("make bench PROFILE=load" in a fresh clone at commit
//     95e8634 on the otherwise idle 2-vCPU VM, warm build cache), its
//     300 points 6 min 26 s, all valid, plus the chain check and the
//     figures.
//   - thesis: the same models under a connection sweep (16, 64 and 256
//     connections), capacity and 11 fractions from 10 to 95%, 7
//     repetitions, 1 s warm-up and 5 s windows: 2520 points, about 4¼
//     hours on a 2-CPU machine (estimated from the default profile's
//     per-point overhead; not run end to end) (the progress line's ETA says how long).
//     It scales with the machine: the server gets the first half of the
//     CPUs and the load generator the rest with one worker per CPU
//     (LoadWorkersPerCPU; the package documentation says what that is on
//     2, 4 and 8 CPUs).
//   - gate: the CI regression gate's short fixed suite: 3 models
//     (leaderfollowers/lifo, halfsynchalfreactive, netpoll), capacity and
//     50% of it, 6 repetitions (benchstat's minimum for a confidence
//     interval), 500 ms warm-up and 2 s windows: 36 points, measured 1 min
//     32 s.
//   - chain: the two-process chain of models/frontend (ChainConfigs):
//     the front end in each hand-off mode at 1, 2 and 4 multiplexed
//     connections in front of a netpoll back end, both on the server
//     CPUs; the default workload, capacity and 50% of it, 6 repetitions,
//     250 ms warm-up and 1 s windows: 84 points, about 3 minutes on a
//     2-CPU machine (estimated from the default profile's per-point
//     overhead; not run end to end).
//   - connections: connection scaling at one absolute rate. One
//     configuration per model (leaderfollowers/lifo,
//     halfsynchalfreactive, proactor, activeobject, threadperconn,
//     netpoll) under ConnCounts connections (16 to 10 000, one workload
//     each, named "conns=N"), open loop at ConnRate req/s — low enough
//     for every model to sustain at every count (a point that does not
//     fails the generator's rate check and is shown invalid), so costs
//     are compared at equal load, and no capacity is measured
//     (results.KindRate) — 5
//     repetitions, 1 s warm-up and 3 s windows (15 000 requests, above
//     the ~10 000 that allocation counts need). Thread per connection
//     gets a thread and a P per connection, and stops at its thread cap
//     (MaxConns: its points past models.MaxThreads connections are
//     recorded as unavailable, with the reason). A control workload,
//     "conns=256,idle=9744", drives 256 connections while 9744 more are
//     held idle by another server (netpoll) on the server's CPUs: the
//     figure plots it at 10 000 connections beside the real point, since
//     idle connections anywhere on the machine raise the tail (measured
//     with scripts/connscale -idle, commit 38bb814), and without it the
//     machine's cost of connections would be read as the models'.
//     180 points, 5 of them not run. Wall time: ESTIMATED, not run end
//     to end, at about 14 minutes on a 2-CPU machine: 175 points × about
//     4.7 s — the 4 s of warm-up and window, plus the per-point overhead
//     (a fresh server, opening and priming up to 10 000 connections,
//     closing them, the control's second server and idle connections):
//     a sanity run of this profile on the loaded 2-vCPU VM it was written
//     on ("concbench bench --profile connections --models netpoll --reps
//     1 --warmup 200ms --duration 300ms": 6 points, 16 to 10 000
//     connections and the control) took 5 s, about 0.35 s per point
//     beyond its windows; thread per connection's thousands of threads
//     are assumed to double that. The progress line's ETA says how long.
//   - threads: the thread sweep (make bench PROFILE=threads). The pool
//     models with their thread count swept over ThreadCounts (1, 2, 4,
//     8; ThreadsConfigs): Leader/Followers (lifo) with n threads,
//     Half-Sync/Half-Reactive with n workers, Active Object with n
//     active objects (scheduler threads), each with GOMAXPROCS by the
//     one rule (the OS threads the model runs: n, n + the reactor, n +
//     the I/O thread); the Proactor and netpoll as references, one
//     configuration each. Two workloads (ThreadsWorkloads): "cpu" (the
//     profiles' CPU work alone) and "block" (the same plus a 300 µs
//     blocking call); per configuration and workload its capacity and
//     one open-loop point at SuiteRateFromSlowest of the slowest
//     configuration's capacity under the workload (RatesFromSlowest);
//     5 repetitions, 250 ms warm-up and 1 s windows: 280 points (14
//     configurations × 2 workloads × 2 loads × 5). Wall time measured:
//     6 min 21 s ("make bench PROFILE=threads" in a fresh clone at
//     commit 95e8634 on the otherwise idle 2-vCPU VM, warm build cache):
//     the 280 points 6 min 3 s, all valid, plus the chain check and the
//     figures. (Estimated before from the per-point cost: 6½ minutes.)
//
// Every profile but gate calibrates the CPU work once per run, on the
// server CPUs, and gives the value to every server (CalibrateOnce); the
// gate's servers calibrate themselves, as they always have.
//
// Every field can be overridden afterwards (concbench bench's flags).
func Profile(name string) (Experiment, error) {
	base := Experiment{
		Profile:   name,
		Configs:   AllConfigs(),
		Workloads: []Workload{{Workload: DefaultWorkload()}},
		Fractions: []float64{0.1, 0.5, 0.75, 0.9},
		// 6: the fewest samples for which x/perf benchmath gives a 95 %
		// confidence interval of the median; figures need one.
		Repetitions:         6,
		Warmup:              Duration(250 * time.Millisecond),
		Duration:            Duration(time.Second),
		CapacityOutstanding: 1,
		LoadWorkers:         1,
		Seed:                1,
		// One calibration of the CPU work for every server (fairness:
		// equal work per request in every process).
		CalibrateOnce: true,
	}
	switch name {
	case "load":
		return base, nil
	case "default":
		base.Workloads = SuiteWorkloads()
		base.Fractions = nil
		base.RatesFromSlowest = []float64{SuiteRateFromSlowest}
		base.Repetitions = 5
		base.Warmup = Duration(200 * time.Millisecond)
		base.Duration = Duration(700 * time.Millisecond)
		base.SLOProbes = DefaultSLOProbes
		base.SLOWarmup = Duration(DefaultSLOWarmup)
		base.SLODuration = Duration(DefaultSLODuration)
		return base, nil
	case "thesis":
		base.Workloads = nil
		for _, conns := range []int{16, 64, 256} {
			w := DefaultWorkload()
			w.Conns = conns
			base.Workloads = append(base.Workloads, Workload{Name: fmt.Sprintf("conns=%d", conns), Workload: w})
		}
		base.Fractions = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95}
		base.Repetitions = 7
		base.Warmup = Duration(time.Second)
		base.Duration = Duration(5 * time.Second)
		base.LoadWorkersPerCPU = true
		return base, nil
	case "threads":
		base.Configs = ThreadsConfigs()
		base.Workloads = ThreadsWorkloads()
		base.Fractions = nil
		base.RatesFromSlowest = []float64{SuiteRateFromSlowest}
		base.Repetitions = 5
		return base, nil
	case "gate":
		var cs []Config
		for _, c := range AllConfigs() {
			switch c.Name {
			case "leaderfollowers/lifo", "halfsynchalfreactive", "netpoll":
				cs = append(cs, c)
			}
		}
		base.Configs = cs
		// The gate's servers calibrate themselves, as before
		// CalibrateOnce: its behaviour is fixed.
		base.CalibrateOnce = false
		base.Fractions = []float64{0.1, 0.5}
		base.Repetitions = 7
		base.Warmup = Duration(300 * time.Millisecond)
		base.Duration = Duration(2 * time.Second)
		return base, nil
	case "chain":
		base.Configs = ChainConfigs()
		base.Fractions = []float64{0.5}
		return base, nil
	case "connections":
		var cs []Config
		for _, c := range AllConfigs() {
			switch c.Name {
			case "leaderfollowers/lifo", "halfsynchalfreactive", "proactor", "activeobject", "netpoll":
				cs = append(cs, c)
			case "threadperconn":
				c.ThreadsPerConn = true
				c.MaxConns = models.MaxThreads
				c.MaxConnsReason = fmt.Sprintf("thread per connection runs one OS thread per connection, at most %d (models.MaxThreads), and refuses the next client with status unavailable (HTTP 503)", models.MaxThreads)
				cs = append(cs, c)
			}
		}
		base.Configs = cs
		base.Workloads = nil
		for _, conns := range ConnCounts {
			w := DefaultWorkload()
			w.Conns = conns
			base.Workloads = append(base.Workloads, Workload{Name: fmt.Sprintf("conns=%d", conns), Workload: w})
		}
		ctl := DefaultWorkload()
		ctl.Conns, ctl.Idle = ConnControlActive, ConnCounts[len(ConnCounts)-1]-ConnControlActive
		base.Workloads = append(base.Workloads, Workload{Name: fmt.Sprintf("conns=%d,idle=%d", ctl.Conns, ctl.Idle), Workload: ctl})
		base.Fractions = nil
		base.Rates = []float64{ConnRate}
		base.Repetitions = 5
		base.Warmup = Duration(time.Second)
		base.Duration = Duration(3 * time.Second)
		return base, nil
	}
	return Experiment{}, fmt.Errorf("harness: unknown profile %q (accepted: %s)", name, strings.Join(ProfileNames, ", "))
}

// ConnCounts are the connections profile's connection counts.
var ConnCounts = []int{16, 256, 1000, 4000, 10000}

// ConnControlActive is the active connections of the connections
// profile's control workload, which holds the rest of the largest count
// idle, to another server (Workload.Idle).
const ConnControlActive = 256

// ConnRate is the connections profile's offered rate, req/s: 5000,
// scripts/connscale's default rate; at 10 µs of CPU work per request it
// keeps the server's CPU about 5% busy with the service, so that what
// grows with connections is the model's own cost.
const ConnRate = 5000

// SuiteFamilies are the configurations the default profile runs under
// its extra workloads: one per model family.
var SuiteFamilies = []string{"leaderfollowers/lifo", "halfsynchalfreactive", "proactor", "activeobject", "threadperconn", "netpoll"}

// SuiteRateFromSlowest is the default profile's one open-loop load, as a
// fraction of the slowest configuration's capacity under each workload
// (Experiment.RatesFromSlowest): high enough that queueing shows, low
// enough that every configuration can sustain it.
const SuiteRateFromSlowest = 0.7

// SuiteSLOs are the suite's latency objectives, the bound of each
// workload's p99, by workload name: a user's statements of what is fast
// enough, not measurements (justified in the package documentation,
// "The workload suite"). cpu, tiny and ledger: 1 ms, a hundred times the
// default workload's mean work; block: 2 ms, its 300 µs blocking call
// and room for queueing behind it; bimodal: 5 ms, since its 1 ms
// requests (1%) put its p99 at 1 ms or more by construction.
var SuiteSLOs = map[string]time.Duration{
	"cpu": time.Millisecond, "tiny": time.Millisecond, "ledger": time.Millisecond,
	"block": 2 * time.Millisecond, "bimodal": 5 * time.Millisecond,
}

// SuiteWorkloads returns the default profile's workload suite, each
// chosen so that some pattern should win it and another lose (see the
// package documentation): "cpu", DefaultWorkload, under every
// configuration; and under SuiteFamilies, "tiny" (exp:1us of CPU work:
// the per-request overhead of each model decides), "block" (exp:10us of
// CPU work and a 300 µs blocking back-end call per request), "bimodal"
// (CPU work 5 µs, or 1 ms for 1% of requests: head-of-line blocking),
// and "ledger" (the monitor's ledger: equal weights of work, deposits,
// guarded withdrawals, transfers and totals over every account); each
// with its p99 objective (SuiteSLOs).
func SuiteWorkloads() []Workload {
	tiny, block, bimodal, ledger := DefaultWorkload(), DefaultWorkload(), DefaultWorkload(), DefaultWorkload()
	tiny.CPU = "exp:1us"
	block.Block = "300us"
	bimodal.CPU = "bimodal:0.99:5us:1ms"
	ledger.Ops = "work=1,deposit=1,withdraw=1,transfer=1,total=1"
	slo := func(bound time.Duration) *SLO { return &SLO{Percentile: DefaultSLOPercentile, Bound: Duration(bound)} }
	return []Workload{
		{Name: "cpu", SLO: slo(SuiteSLOs["cpu"]), Workload: DefaultWorkload()},
		{Name: "tiny", Configs: SuiteFamilies, SLO: slo(SuiteSLOs["tiny"]), Workload: tiny},
		{Name: "block", Configs: SuiteFamilies, SLO: slo(SuiteSLOs["block"]), Workload: block},
		{Name: "bimodal", Configs: SuiteFamilies, SLO: slo(SuiteSLOs["bimodal"]), Workload: bimodal},
		{Name: "ledger", Configs: SuiteFamilies, SLO: slo(SuiteSLOs["ledger"]), Workload: ledger},
	}
}

// ThreadCounts are the threads profile's thread counts.
var ThreadCounts = []int{1, 2, 4, 8}

// ThreadsSuffix ends the name of a configuration of a thread sweep,
// followed by its thread count: "leaderfollowers/lifo/threads=4". The
// thread-sweep figure (package plots) reads the count from it, and the
// rest of the name is the series: must match plots' threadsKey.
const ThreadsSuffix = "/threads="

// ThreadsConfigs returns the threads profile's configurations: for each
// of ThreadCounts n, Leader/Followers (lifo) with n threads and
// GOMAXPROCS n, Half-Sync/Half-Reactive with n workers and GOMAXPROCS
// n + 1 (the reactor), Active Object with n active objects (--ao-objects:
// its scheduler threads; one I/O thread, its default) and GOMAXPROCS
// n + 1; then the references, the Proactor and netpoll as in AllConfigs.
// Each model's configurations are adjacent, in ascending n.
func ThreadsConfigs() []Config {
	var cs []Config
	name := func(base string, n int) string { return fmt.Sprintf("%s%s%d", base, ThreadsSuffix, n) }
	for _, n := range ThreadCounts {
		cs = append(cs, Config{Name: name("leaderfollowers/lifo", n), Model: "leaderfollowers",
			Args: []string{"--promotion", "lifo"}, Threads: n, GOMAXPROCS: n})
	}
	for _, n := range ThreadCounts {
		cs = append(cs, Config{Name: name("halfsynchalfreactive", n), Model: "halfsynchalfreactive",
			Threads: n, GOMAXPROCS: n + 1})
	}
	for _, n := range ThreadCounts {
		cs = append(cs, Config{Name: name("activeobject", n), Model: "activeobject",
			Args: []string{"--ao-objects", fmt.Sprint(n)}, GOMAXPROCS: n + 1})
	}
	for _, c := range AllConfigs() {
		if c.Name == "proactor" || c.Name == "netpoll" {
			cs = append(cs, c)
		}
	}
	return cs
}

// ThreadsWorkloads returns the threads profile's workloads, where threads
// should matter in opposite ways: "cpu" (DefaultWorkload: pure
// computation, on a 2-CPU machine on one server CPU, where every thread
// beyond one can only add hand-offs and context switches) and "block"
// (the suite's: the same CPU work plus a 300 µs blocking call, which
// more threads should hide until the CPU saturates). Every
// configuration runs under both.
func ThreadsWorkloads() []Workload {
	var ws []Workload
	for _, w := range SuiteWorkloads() {
		if w.Name == "cpu" || w.Name == "block" {
			// Every configuration, and no latency objective: the sweep
			// compares capacities and the equal-load costs, and its
			// stated wall time has no search in it.
			w.Configs, w.SLO = nil, nil
			ws = append(ws, w)
		}
	}
	return ws
}

// DefaultWorkload is the profiles' workload: HTTP/1.1 keep-alive, 64
// connections, no pipelining, Poisson arrivals, OpWork with CPU work drawn
// exponentially with mean 10 µs (so that the M/M/c ideal is the right
// ideal: with fixed work it would overstate an ideal server's queueing),
// no blocking work, empty response bodies.
func DefaultWorkload() results.Workload {
	return results.Workload{
		Protocol: "http", Conns: 64, Depth: 1, Arrival: "poisson",
		CPU: "exp:10us", Block: "0", Size: "0", Ops: "work=1",
	}
}

// AllConfigs returns one configuration per model and variant, in report
// order, each with its thread count and GOMAXPROCS explicit: every model
// built on locked OS threads gets one P per thread, so that a thread the
// kernel wakes never waits for the Go scheduler to hand it a P (see the
// package documentation for the measurement); netpoll, whose "threads" are
// goroutines, and the Proactor, whose dispatchers are one per server CPU,
// keep the Go default of one P per CPU. Models that the server binary does
// not have, or that cannot run on the machine, are recorded as unavailable
// by the run, never skipped silently.
func AllConfigs() []Config {
	lf := func(order string, args ...string) Config {
		return Config{
			Name: "leaderfollowers/" + order, Model: "leaderfollowers",
			Args:    append([]string{"--promotion", order}, args...),
			Threads: 4, GOMAXPROCS: 4, // the pool's 4 threads
		}
	}
	return []Config{
		lf("lifo"),
		lf("fifo"),
		lf("priority", "--nice", "0,5,10,15"),
		lf("os"),
		// 4 workers + the reactor thread.
		{Name: "halfsynchalfreactive", Model: "halfsynchalfreactive", Threads: 4, GOMAXPROCS: 5},
		{Name: "halfsynchalfreactive/pooled", Model: "halfsynchalfreactive", Args: []string{"--hshr-pooled"}, Threads: 4, GOMAXPROCS: 5},
		// One dispatcher per server CPU (its default), so the default
		// GOMAXPROCS, one per CPU, is one per thread.
		{Name: "proactor", Model: "proactor"},
		// 1 I/O thread + 2 scheduler threads (its defaults).
		{Name: "activeobject", Model: "activeobject", GOMAXPROCS: 3},
		// A thread per connection + the acceptor.
		{Name: "threadperconn", Model: "threadperconn", GOMAXPROCSPerConn: true},
		// Goroutines over the netpoller: what a Go programmer gets.
		{Name: "netpoll", Model: "netpoll"},
	}
}

// ChainConfigs returns the chain profile's configurations: the front end
// (models/frontend) with handoff bound and queue at 1, 2 and 4
// multiplexed upstream connections, and with a connection per thread
// (perthread), each in front of a netpoll back end (Config.Backend). The
// front end runs a locked thread per client connection, so it gets a P
// per connection + 1 (GOMAXPROCSPerConn; queue's M reader threads share
// them).
func ChainConfigs() []Config {
	back := &Backend{Model: "netpoll"}
	var cs []Config
	for _, h := range []string{"bound", "queue"} {
		for _, m := range []int{1, 2, 4} {
			cs = append(cs, Config{
				Name: fmt.Sprintf("frontend/%s/m=%d", h, m), Model: "frontend",
				Args:              []string{"--handoff", h, "--upstream-conns", fmt.Sprint(m)},
				GOMAXPROCSPerConn: true, Backend: back,
			})
		}
	}
	return append(cs, Config{Name: "frontend/perthread", Model: "frontend", Args: []string{"--handoff", "perthread"},
		GOMAXPROCSPerConn: true, Backend: back})
}
