package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"concbench/models"
	"concbench/models/registry"
	"concbench/results"
)

// ProfileNames lists the named experiments, the default first. The
// package documentation ("Profiles") says what each measures and why;
// docs/findings.md how long each took where it was run.
var ProfileNames = []string{"default", "aa", "load", "variants", "practised", "dispersion", "cores", "threads", "thesis", "gate", "chain", "connections", "nginx", "asio", "lean"}

// Profile returns the named experiment (see "Profiles" in the package
// documentation). Every configuration but the gate's and the chain's is
// sized by the sizing rule (SizeRule) when the run resolves its CPUs;
// the cores and threads profiles are sweeps that Resolve expands by the
// server's CPU count (Experiment.Sweep). Profile "thesis" is a sequence
// of experiments (ThesisParts), not one: Profile returns its first part.
// Every profile but gate calibrates the CPU work once per run, on the
// server CPUs, and gives the value to every server (CalibrateOnce).
// Every field can be overridden afterwards (concbench bench's flags).
func Profile(name string) (Experiment, error) {
	base := baseExperiment(name)
	switch name {
	case "default":
		e := suite(base)
		e.Budget = Duration(SuiteBudget)
		e.Twin = &Twin{Of: e.Configs[0].Name}
		return e, nil
	case "aa":
		return aaProfile(base), nil
	case "load":
		return base, nil
	case "variants":
		base.Configs = Variants()
		e := suite(base)
		e.Workloads = slices.DeleteFunc(e.Workloads, func(w Workload) bool { return w.Name != "cpu" && w.Name != "bimodal" })
		return e, nil
	case "practised":
		base.Configs = Practised()
		e := suite(base)
		e.Workloads = append(slices.DeleteFunc(e.Workloads, func(w Workload) bool { return w.Name != "cpu" && w.Name != "tiny" }), ChurnWorkload())
		e.Budget = Duration(SuiteBudget)
		return e, nil
	case "dispersion":
		return dispersionProfile(base), nil
	case "cores":
		e := suite(base)
		e.Sweep = SweepCores
		e.RatesFromSlowest = nil // capacity and the capacity at the objective, against CPUs
		e.Mechanisms, e.MechanismsWarmup, e.MechanismsDuration = 0, 0, 0
		e.Repetitions = 3
		e.Workloads = slices.DeleteFunc(e.Workloads, func(w Workload) bool { return w.Name != "cpu" && w.Name != "tiny" && w.Name != "block" })
		return e, nil
	case "thesis":
		return ThesisParts()[0], nil
	case "threads":
		base.Sweep = SweepThreads
		base.Workloads = ThreadsWorkloads()
		base.Fractions = nil
		base.RatesFromSlowest = []float64{SuiteRateFromSlowest}
		base.Repetitions = 5
		return base, nil
	case "gate":
		return gateProfile(base), nil
	case "chain":
		base.Configs = ChainConfigs()
		base.Fractions = []float64{0.5}
		return base, nil
	case "connections":
		return connectionsProfile(base), nil
	case "nginx":
		return nginxProfile(base), nil
	case "asio":
		return asioProfile(base), nil
	case "lean":
		return leanProfile(base), nil
	}
	return Experiment{}, fmt.Errorf("harness: unknown profile %q (accepted: %s)", name, strings.Join(ProfileNames, ", "))
}

// baseExperiment is the experiment the profile name starts from: every
// family at four fractions of capacity, six repetitions.
func baseExperiment(name string) Experiment {
	return Experiment{
		Profile:   name,
		Configs:   Families(),
		Workloads: []Workload{{Workload: DefaultWorkload()}},
		Fractions: []float64{0.1, 0.5, 0.75, 0.9},
		// 6: the fewest samples for which x/perf benchmath gives a 95 %
		// confidence interval of the median; figures need one.
		Repetitions:         6,
		Warmup:              Duration(250 * time.Millisecond),
		Duration:            Duration(time.Second),
		CapacityOutstanding: 1,
		Seed:                1,
		// One calibration of the CPU work for every server (fairness:
		// equal work per request in every process).
		CalibrateOnce: true,
	}
}

// suite turns e into a suite experiment: the suite's workloads at the
// rate from the slowest configuration, with the latency objectives'
// searches and a mechanisms point in the first repetition, in shorter
// windows.
func suite(e Experiment) Experiment {
	e.Workloads = SuiteWorkloads()
	e.Fractions = nil
	e.RatesFromSlowest = []float64{SuiteRateFromSlowest}
	e.Repetitions = 5
	e.Warmup = Duration(200 * time.Millisecond)
	e.Duration = Duration(700 * time.Millisecond)
	e.SLOProbes = DefaultSLOProbes
	e.SLOWarmup = Duration(DefaultSLOWarmup)
	e.SLODuration = Duration(DefaultSLODuration)
	e.Mechanisms = DefaultMechanisms
	e.MechanismsWarmup = Duration(DefaultMechanismsWarmup)
	e.MechanismsDuration = Duration(DefaultMechanismsDuration)
	e.Shuffle = true
	return e
}

// SuiteBudget is the default profile's time budget (Experiment.Budget):
// its planned points take about 8 minutes on a 2-CPU machine, and make
// bench, which also builds the binary and renders the report, is meant
// to end within 10.
const SuiteBudget = 9 * time.Minute

// AABudget is the aa profile's time budget: the default's rule (planned
// rounds that leave a third of it for extra rounds) at the aa profile's
// size.
const AABudget = 3 * time.Minute

// aaProfile returns the A/A campaign's experiment (concbench aarate) made
// from base: the suite's cpu and tiny workloads, every column of the
// who-wins table, for Leader/Followers (lifo, twinned), netpoll and the
// Proactor, decided as the default profile decides, within AABudget.
func aaProfile(base Experiment) Experiment {
	e := suite(base)
	e.Configs = slices.DeleteFunc(e.Configs, func(c Config) bool {
		return c.Name != "leaderfollowers/lifo" && c.Name != "netpoll" && c.Name != "proactor"
	})
	e.Workloads = slices.DeleteFunc(e.Workloads, func(w Workload) bool { return w.Name != "cpu" && w.Name != "tiny" })
	e.Twin = &Twin{Of: "leaderfollowers/lifo"}
	e.Budget = Duration(AABudget)
	return e
}

// gateProfile returns the gate's experiment made from base.
func gateProfile(base Experiment) Experiment {
	// The gate's fixed suite: its sizes are named here, not the
	// rule's, so that what it compares does not move with the
	// machine it happens to run on (its thresholds were measured
	// with these).
	base.Configs = []Config{
		{Name: "leaderfollowers/lifo", Model: "leaderfollowers", Args: []string{"--promotion", "lifo"}, Threads: 4, GOMAXPROCS: 4},
		{Name: "halfsynchalfreactive", Model: "halfsynchalfreactive", Threads: 4, GOMAXPROCS: 5},
		{Name: "netpoll", Model: "netpoll"},
	}
	// The gate's servers calibrate themselves, as before
	// CalibrateOnce: its behaviour is fixed.
	base.CalibrateOnce = false
	base.Fractions = []float64{0.1, 0.5}
	base.Repetitions = 7
	base.Warmup = Duration(300 * time.Millisecond)
	base.Duration = Duration(2 * time.Second)
	return base
}

// connectionsProfile returns the connections experiment made from base:
// every family at one rate over ConnCounts connections, and the idle
// connections' control.
func connectionsProfile(base Experiment) Experiment {
	var cs []Config
	for _, c := range Families() {
		if c.Name == "threadperconn" {
			c.MaxConns = models.MaxThreads
			c.MaxConnsReason = fmt.Sprintf("thread per connection runs one OS thread per connection, at most %d (models.MaxThreads), and refuses the next client with status unavailable (HTTP 503)", models.MaxThreads)
		}
		cs = append(cs, c)
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
	return base
}

// ThesisParts returns the thesis profile's experiments, run one after
// another (concbench bench --profile thesis): the workload suite
// (default), the cores sweep and the thread sweep, each at thesis-grade
// repetitions and windows — 10 repetitions, 1 s of warm-up and 3 s
// windows (the probes of the latency-objective search 200 ms and 1 s):
// windows that hold tens of thousands of responses, so that a p99 rests
// on hundreds of them, and enough repetitions for intervals that decide.
func ThesisParts() []Experiment {
	var parts []Experiment
	for _, name := range []string{"default", "cores", "threads"} {
		e, _ := Profile(name) // known names
		e.Profile = "thesis/" + name
		// Every planned round: a budget (default's) would cut the ten
		// rounds to the few that fit its minutes.
		e.Budget = 0
		e.Repetitions = 10
		e.Warmup = Duration(time.Second)
		e.Duration = Duration(3 * time.Second)
		if e.SLOProbes > 0 {
			e.SLOProbes = 4
			e.SLOWarmup = Duration(200 * time.Millisecond)
			e.SLODuration = Duration(time.Second)
		}
		parts = append(parts, e)
	}
	return parts
}

// ConnCounts are the connections profile's connection counts.
var ConnCounts = []int{16, 256, 1000, 4000, 10000}

// ConnControlActive is the active connections of the connections
// profile's control workload, which holds the rest of the largest count
// idle, to another server (Workload.Idle).
const ConnControlActive = 256

// ConnRate is the connections profile's offered rate, req/s: 5000; at
// 10 µs of CPU work per request it
// keeps the server's CPU about 5% busy with the service, so that what
// grows with connections is the model's own cost.
const ConnRate = 5000

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
	"block": 2 * time.Millisecond, "bimodal": 5 * time.Millisecond, "churn": 2 * time.Millisecond,
}

// ChurnWorkload is the practised profile's "churn": the cpu workload with
// a new connection per request (Workload.ConnRequests 1), as in the
// published accept-balancing measurements (a client without keep-alive):
// the server accepts, registers and closes a connection for every
// request, so how its threads share the listener is first-order. Its
// objective, p99 ≤ 2 ms, leaves room for the connect that a request
// finding no open connection waits for.
func ChurnWorkload() Workload {
	w := DefaultWorkload()
	w.ConnRequests = 1
	return Workload{Name: "churn", SLO: &SLO{Percentile: DefaultSLOPercentile, Bound: Duration(SuiteSLOs["churn"])}, Workload: w}
}

// SuiteWorkloads returns the default profile's workload suite, each
// chosen so that some pattern should win it and another lose (see the
// package documentation), each under every configuration of the
// profile: "cpu", DefaultWorkload; "tiny" (exp:1us of CPU work:
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
		{Name: "tiny", SLO: slo(SuiteSLOs["tiny"]), Workload: tiny},
		{Name: "block", SLO: slo(SuiteSLOs["block"]), Workload: block},
		{Name: "bimodal", SLO: slo(SuiteSLOs["bimodal"]), Workload: bimodal},
		{Name: "ledger", SLO: slo(SuiteSLOs["ledger"]), Workload: ledger},
	}
}

// ThreadCounts returns the thread sweep's counts for a server of n
// CPUs: 1, 2, 4, … up to max(8, 2n), so that the sweep passes the
// rule's one thread per CPU by a factor of two on any machine.
func ThreadCounts(n int) []int {
	var cs []int
	for k := 1; k <= max(8, 2*n); k *= 2 {
		cs = append(cs, k)
	}
	return cs
}

// CoreCounts returns the cores sweep's server CPU counts for a server of
// n CPUs: 1, 2, 4, … up to n, and n itself.
func CoreCounts(n int) []int {
	var cs []int
	for k := 1; k < n; k *= 2 {
		cs = append(cs, k)
	}
	return append(cs, max(n, 1))
}

// ThreadsSuffix ends the name of a configuration of a thread sweep,
// followed by its thread count: "leaderfollowers/lifo/threads=4". The
// thread-sweep figure (package plots) reads the count from it, and the
// rest of the name is the series: must match plots' threadsKey.
const ThreadsSuffix = "/threads="

// CPUsSuffix ends the name of a configuration of a cores sweep, followed
// by its server CPUs: "netpoll/cpus=4". The cores figure (package plots)
// reads the count from it: must match plots' coresKey.
const CPUsSuffix = "/cpus="

// The sweeps Resolve expands (Experiment.Sweep).
const (
	SweepThreads = "threads"
	SweepCores   = "cores"
)

// ThreadsConfigs returns the thread sweep's configurations for a server
// of n CPUs, from the model table: for each model whose row sweeps its
// pool (registry.SweepPool: Leader/Followers lifo's threads,
// Half-Sync/Half-Reactive's workers, Active Object's active objects), its
// first configuration at each of ThreadCounts(n) k, sized by the rule
// with T = k (Config.Pool: threads, GOMAXPROCS with its spare P, the
// reactor and the I/O threads as the rule gives them); then the
// references (registry.SweepReference: the Proactor and netpoll) sized by
// the rule. Each model's configurations are adjacent, in ascending k.
func ThreadsConfigs(n int) []Config {
	var cs []Config
	ks := ThreadCounts(n)
	for _, m := range registry.Models {
		if m.ThreadSweep != registry.SweepPool || len(m.Configs) == 0 {
			continue
		}
		c := m.Configs[0]
		for _, k := range ks {
			ck := ruleConfig(m, c)
			ck.Name, ck.Pool = fmt.Sprintf("%s%s%d", c.Name, ThreadsSuffix, k), k
			cs = append(cs, ck)
		}
	}
	for _, m := range registry.Models {
		if m.ThreadSweep == registry.SweepReference && len(m.Configs) > 0 {
			cs = append(cs, ruleConfig(m, m.Configs[0]))
		}
	}
	return cs
}

// ruleConfig is configuration c of model m, sized by the rule.
func ruleConfig(m registry.Model, c registry.Config) Config {
	return Config{Name: c.Name, Model: m.Name, Args: slices.Clone(c.Args), Sizing: SizeRule}
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

// Families returns one configuration per model (the first of its row's
// configurations in the model table, models/registry), in report order,
// each sized by the sizing rule (SizeRule; the package documentation's
// "CPUs, sizing and GOMAXPROCS"): the comparison's configurations.
func Families() []Config {
	var cs []Config
	for _, m := range registry.Models {
		if len(m.Configs) > 0 && m.Family != registry.FamilyPractised {
			cs = append(cs, ruleConfig(m, m.Configs[0]))
		}
	}
	return cs
}

// Variants returns the variants profile's configurations: every model
// with variants in the model table, all its configurations, sized by the
// rule with the row's floor (registry.Model.VariantFloor: the
// Leader/Followers promotion orders get at least 4 threads).
func Variants() []Config {
	var cs []Config
	for _, m := range registry.Models {
		if len(m.Configs) < 2 || m.Family == registry.FamilyPractised {
			continue
		}
		for _, c := range m.Configs {
			rc := ruleConfig(m, c)
			rc.MinPool = m.VariantFloor
			cs = append(cs, rc)
		}
	}
	return cs
}

// Practised returns the practised profile's configurations: the
// Leader/Followers textbook configuration (the family's first) and every
// configuration of the models as servers practise them
// (registry.FamilyPractised: nginx's accept modes, the partitioned
// server, Cherokee, boost.asio), sized by the rule with a floor of
// PractisedFloor threads.
func Practised() []Config {
	var cs []Config
	for _, m := range registry.Models {
		for i, c := range m.Configs {
			if m.Family == registry.FamilyPractised || m.Family == registry.FamilyLF && i == 0 {
				rc := ruleConfig(m, c)
				rc.MinPool = PractisedFloor
				cs = append(cs, rc)
			}
		}
	}
	return cs
}

// DispersionWorkloads are the dispersion profile's workloads: CPU work of
// the same mean, 10 µs, ever more dispersed — constant, exponential, and
// bimodal with 10 %, 1 % and 0.1 % of requests long (55 µs, 505 µs and
// 5 ms against 5 µs) — so that only the service time's shape changes.
func DispersionWorkloads() []Workload {
	var ws []Workload
	for _, d := range []struct{ name, cpu string }{
		{"const", "10us"}, {"exp", "exp:10us"},
		{"bimodal-10", "bimodal:0.9:5us:55us"}, {"bimodal-1", "bimodal:0.99:5us:505us"}, {"bimodal-0.1", "bimodal:0.999:5us:5005us"},
	} {
		w := DefaultWorkload()
		w.CPU = d.cpu
		ws = append(ws, Workload{Name: d.name, Workload: w})
	}
	return ws
}

// DispersionMinCPUs is the fewest server CPUs the dispersion profile
// needs: c queues of c ≥ 4 servers (ZygOS, Shinjuku measure at 16).
const DispersionMinCPUs = 4

// dispersionProfile returns the dispersion experiment made from base:
// the shared handle set (Leader/Followers, boost.asio's shared queue)
// against the partitioned server, one thread per CPU each, at one equal
// load under every DispersionWorkloads workload.
func dispersionProfile(base Experiment) Experiment {
	base.Configs = nil
	for _, c := range Practised() {
		// Each model's first configuration only: the shared queue's is
		// asio's (posted completions), not its inline variant.
		if (c.Model == "leaderfollowers" || c.Model == "partitioned" || c.Model == "sharedqueue") &&
			!slices.ContainsFunc(base.Configs, func(o Config) bool { return o.Model == c.Model }) {
			c.MinPool = 0
			base.Configs = append(base.Configs, c)
		}
	}
	base.Workloads = DispersionWorkloads()
	base.Fractions = nil
	base.RatesFromSlowest = []float64{SuiteRateFromSlowest}
	base.Repetitions = 5
	base.Warmup = Duration(200 * time.Millisecond)
	base.Duration = Duration(time.Second)
	base.MinServerCPUs = DispersionMinCPUs
	return base
}

// PractisedFloor is the fewest threads the practised profile gives a
// configuration: these models differ in how their threads share the
// listener and the connections, and with one thread — the rule's on a
// server of one CPU — every accept mode is the same one loop. Two
// threads on one CPU show the sharing (which thread accepts, how the
// connections spread) at the price of time-sharing the CPU; the rule
// gives more wherever the server has the CPUs.
const PractisedFloor = 2

// AllConfigs returns every named configuration of the profiles, by name
// once (a family's configuration before a variant of the same name):
// what "bench --models" looks names up in. Real nginx is not among them:
// it is no model (the nginx profile names its configurations).
func AllConfigs() []Config {
	var cs []Config
	for _, c := range slices.Concat(Families(), Variants(), Practised()) {
		if !slices.ContainsFunc(cs, func(o Config) bool { return o.Name == c.Name }) {
			cs = append(cs, c)
		}
	}
	return cs
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

// AcceptMutexModel is the nginx-style model's name in the model table
// (models/registry): worker threads that each own the connections they
// accept, sharing the listening socket in nginx's ways (--accept, one of
// NginxModes).
const AcceptMutexModel = "acceptmutex"

// NginxConfigs returns real nginx in each of its accept modes
// (NginxModes), "nginx/<mode>", a worker process per server CPU (the
// sizing rule's n), at least PractisedFloor of them.
func NginxConfigs() []Config {
	var cs []Config
	for _, mode := range NginxModes {
		cs = append(cs, Config{Name: NginxModel + "/" + mode, Model: NginxModel, Args: []string{"--accept", mode}, Sizing: SizeRule, MinPool: PractisedFloor})
	}
	return cs
}

// NginxPairs returns the nginx profile's configurations: for each accept
// mode, the nginx-style model in that mode — its configuration in the
// model table whose arguments give the mode, else "acceptmutex/<mode>"
// with --accept <mode>, sized by the rule with the practised profile's
// floor (PractisedFloor: with one thread every mode is the same loop,
// and there is no balance to compare) — then real nginx in it, with as
// many workers. A
// model not (yet) in the table is still listed, by that name and flag,
// with the model's defaults: a binary without the model reports it
// unavailable, with serve's reason, and nginx runs alone.
func NginxPairs() []Config {
	var cs []Config
	m, inTable := registry.Lookup(AcceptMutexModel)
	for i, mode := range NginxModes {
		c := Config{Name: AcceptMutexModel + "/" + mode, Model: AcceptMutexModel, Args: []string{"--accept", mode}}
		if inTable {
			c.Sizing, c.MinPool = SizeRule, PractisedFloor
		}
		for _, rc := range m.Configs {
			if got, err := nginxMode(rc.Args); inTable && err == nil && got == mode {
				c = ruleConfig(m, rc)
				c.MinPool = PractisedFloor
				break
			}
		}
		cs = append(cs, c, NginxConfigs()[i])
	}
	return cs
}

// nginxProfile returns the nginx experiment made from base: the
// nginx-style model beside real nginx in each accept mode (NginxPairs),
// on the same server CPUs, under one workload with no work at all
// (nginx does none: the comparison is at the zero-work end), at
// capacity and at one equal absolute load, 0.7 of the slowest one's
// capacity.
func nginxProfile(base Experiment) Experiment {
	base.Configs = NginxPairs()
	w := DefaultWorkload()
	w.CPU = "0"
	base.Workloads = []Workload{{Name: "zero", Workload: w}}
	base.Fractions = nil
	base.RatesFromSlowest = []float64{SuiteRateFromSlowest}
	base.Repetitions = 5
	return base
}

// LeanQuota is the lean profile's server CPU quota, in CPUs
// (Experiment.ServerCPUQuota): half of the one server CPU, so that every
// server's capacity stays below the load generator's ceiling on a 2-CPU
// machine, where all of them at a whole CPU run into it.
const LeanQuota = 0.5

// LeanConfigs returns the lean profile's configurations, one worker
// thread each (no sizing rule: the comparison is per unit of CPU, and
// one worker is where nginx's cost per request is known): real nginx
// with one worker, the nginx-style model with one, the Proactor and
// Leader/Followers with one thread, deactivating in user space (its
// default) and in the kernel.
func LeanConfigs() []Config {
	cs := []Config{
		{Name: NginxModel + "/exclusive", Model: NginxModel, Args: []string{"--accept", "exclusive"}, Threads: 1},
		{Name: AcceptMutexModel + "/exclusive", Model: AcceptMutexModel, Args: []string{"--accept", "exclusive"}, Threads: 1},
		{Name: "proactor", Model: "proactor", Threads: 1},
		{Name: "leaderfollowers/lifo", Model: "leaderfollowers", Args: []string{"--promotion", "lifo"}, Threads: 1},
		// The same pool deactivating its handles in the kernel
		// (EPOLLONESHOT): what the epoll_ctl re-arm per event costs.
		{Name: "leaderfollowers/kernel", Model: "leaderfollowers", Args: []string{"--promotion", "lifo", "--deactivation", "kernel"}, Threads: 1},
	}
	for i := range cs {
		// GOMAXPROCS as the sizing rule gives it for one thread.
		if m, ok := registry.Lookup(cs[i].Model); ok {
			cs[i].GOMAXPROCS = m.Sizing.Procs(1)
		}
	}
	return cs
}

// leanProfile returns the lean experiment made from base: the
// configurations of LeanConfigs on one server CPU under a quota of half
// of it (LeanQuota), with no work per request (nginx does none), at
// capacity and at 0.7 of the slowest one's, 7 repetitions. Its answer is
// the report's capacity × nginx column: what each model serves with the
// CPU nginx has.
func leanProfile(base Experiment) Experiment {
	e := nginxProfile(base)
	e.Configs = LeanConfigs()
	e.ServerCPUQuota = LeanQuota
	e.Repetitions = 7
	return e
}
