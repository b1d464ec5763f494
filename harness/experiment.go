package harness

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/results"
	"concbench/wire"
)

// Duration is a time.Duration that an experiment file writes and reads as
// a Go duration string ("1.5s"), so that the file is readable and editable.
type Duration time.Duration

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText formats d as String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a Go duration string ("500ms", "2s").
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// Config is one server configuration of an experiment: a model and its
// serve flags. Name labels it in results and figures and is unique within
// an experiment.
type Config struct {
	Name  string   `json:"name"`           // e.g. "leaderfollowers/lifo"
	Model string   `json:"model"`          // concbench serve --model
	Args  []string `json:"args,omitempty"` // the model's own serve flags, e.g. ["--promotion", "lifo"]
	// Threads is serve's --threads; 0 leaves the model's default (the
	// point's ServerInfo has the effective count).
	Threads int `json:"threads,omitempty"`
	// GOMAXPROCS is serve's --gomaxprocs; 0 leaves the server's default,
	// the number of CPUs it is pinned to. GOMAXPROCSPerConn sets it to the
	// workload's connections + 2 instead (thread per connection: a P for
	// every connection thread and the acceptor, and registry.SpareProcs).
	// The profiles choose one
	// or the other for every configuration (see the package
	// documentation); the effective value is in every point's ServerInfo.
	GOMAXPROCS        int  `json:"gomaxprocs,omitempty"`
	GOMAXPROCSPerConn bool `json:"gomaxprocs_per_conn,omitempty"`
	// Sizing is SizeRule for a configuration whose threads, workers,
	// dispatchers, active objects and GOMAXPROCS follow the sizing rule
	// from the server's CPUs and the workload (Pool; Threads then stays
	// 0, and a GOMAXPROCS overrides the rule's: bench --gomaxprocs);
	// empty for the values given here — a
	// profile's fixed values, or the model's defaults. Every point
	// records what it ran with (ModelConfig.Sizing).
	Sizing string `json:"sizing,omitempty"`
	// MinPool, with SizeRule, is the fewest threads the rule may give:
	// a profile's floor, named in every point's sizing (the promotion
	// orders need followers to choose among).
	MinPool int `json:"min_pool,omitempty"`
	// Pool, with SizeRule, is the pool size T the configuration gets in
	// place of the rule's (the thread sweep's dimension); the rule still
	// maps T onto threads, GOMAXPROCS and active objects as it maps its
	// own, so that a swept configuration differs from the rule's in T
	// alone. 0: the rule's T.
	Pool int `json:"pool,omitempty"`
	// CPUs, if positive, runs the server on the first CPUs of the
	// experiment's server CPUs only, and sizes it for them (the cores
	// profile); 0: all of them.
	CPUs int `json:"cpus,omitempty"`
	// ThreadsPerConn sets serve's --threads to the workload's connections
	// instead of Threads (thread per connection: a thread for every
	// connection; its default bound of 1024 threads would refuse clients
	// past that). It needs MaxConns at most models.MaxThreads, or
	// workloads within it.
	ThreadsPerConn bool `json:"threads_per_conn,omitempty"`
	// ServerBinary, if set, is the concbench executable that serves this
	// configuration instead of the experiment's ServerBinary: the CI gate
	// runs a base commit's build and the current tree's as two
	// configurations of one experiment, so that its repetitions
	// interleave them (A B A B). Each point's provenance names the
	// commit of the binary that served it.
	ServerBinary string `json:"server_binary,omitempty"`
	// RatesFrom, if set, names another configuration of the experiment
	// whose capacity sets this configuration's open-loop rates, so that
	// the two are compared at equal absolute load: the CI gate's head is
	// offered the rates derived from its base's capacity, and a head that
	// got slower is not offered less load (which would hide its latency
	// regression). The named configuration must not have a RatesFrom of
	// its own.
	RatesFrom string `json:"rates_from,omitempty"`
	// Backend, if set, makes the configuration a two-process chain: before
	// the configuration's server (a front end, e.g. model frontend) the
	// harness starts this back end, pinned to the same server CPUs and
	// serving the binary protocol, and passes its address to the server
	// as --backend. The measured server is the front end: its costs are
	// the point's; the back end is started and stopped with it.
	Backend *Backend `json:"backend,omitempty"`
	// MaxConns, if set, is the most connections the configuration's model
	// serves by design (thread per connection: models.MaxThreads
	// connection threads; it refuses the next client). Under a workload
	// with more connections its points are not run: they are recorded as
	// unavailable with MaxConnsReason, so that a figure shows the model's
	// limit, with its reason, instead of an error or a gap.
	MaxConns       int    `json:"max_conns,omitempty"`
	MaxConnsReason string `json:"max_conns_reason,omitempty"`
}

// Backend is the back-end server of a chain configuration.
type Backend struct {
	Model string   `json:"model"`          // concbench serve --model
	Args  []string `json:"args,omitempty"` // its serve flags besides --model, --protocol and --cpus
}

// maxGOMAXPROCS is serve's --gomaxprocs limit.
const maxGOMAXPROCS = 4096

// overCap returns why c does not run under w — w has more connections
// than c's MaxConns —, or "" if it runs.
func (c *Config) overCap(w *Workload) string {
	if c.MaxConns <= 0 || w.Conns <= c.MaxConns {
		return ""
	}
	return fmt.Sprintf("%d connections exceed the model's limit of %d: %s", w.Conns, c.MaxConns, c.MaxConnsReason)
}

// Workload is one workload of an experiment: what the load generator
// sends, in its flag syntax (results.Workload), with a Name that labels it
// when an experiment has several (a connection sweep, both protocols).
type Workload struct {
	Name string `json:"name,omitempty"`
	// Configs, if set, names the configurations of the experiment that
	// run under this workload (the others do not, and have no points
	// under it); empty: all of them. The default profile's extra
	// workloads run one configuration per model family.
	Configs []string `json:"configs,omitempty"`
	// SLO, if set, is the workload's latency objective: every
	// configuration under it gets a search for its highest open-loop rate
	// that meets it (Experiment.SLOProbes), after each repetition's
	// capacity point. Nil: no search.
	SLO *SLO `json:"slo,omitempty"`
	results.Workload
}

// runs reports whether configuration name runs under w.
func (w *Workload) runs(name string) bool {
	return len(w.Configs) == 0 || slices.Contains(w.Configs, name)
}

// DerivedRates are the absolute rates that Experiment.RatesFromSlowest
// gave one workload: the slowest configuration, its capacity, and the
// rates, in RatesFromSlowest's order.
type DerivedRates struct {
	// From is the run name of the slowest configuration (the lowest
	// median capacity); empty, with no rates, when no configuration had
	// a valid capacity, and Reason says so.
	From     string  `json:"from,omitempty"`
	Capacity float64 `json:"capacity,omitempty"` // req/s
	// Bound is set when Capacity is a lower bound: every capacity of
	// From was beyond the load generator's ceiling, so it counts as the
	// ceiling's bound (the rate past which a point is the generator's,
	// as for a latency-objective search), and the rates lie below every
	// configuration's capacity by at least their fraction.
	Bound  bool      `json:"bound,omitempty"`
	Rates  []float64 `json:"rates,omitempty"` // req/s
	Reason string    `json:"reason,omitempty"`
}

// Experiment is what a run measures: every configuration under every
// workload, its capacity and then open-loop points at fractions of it,
// repeated. It is stored in run.json, so a run can be resumed and
// reproduced from it alone.
type Experiment struct {
	// Profile names the profile the experiment came from ("custom" for an
	// experiment file that names none).
	Profile string `json:"profile"`
	// Configs are the server configurations, in report order.
	Configs []Config `json:"configs"`
	// Workloads are the load generator's workloads; with more than one,
	// each needs a distinct Name and a configuration under a workload is
	// labelled "<config>/<workload>".
	Workloads []Workload `json:"workloads"`
	// Fractions are the open-loop load points, as fractions of the
	// configuration's capacity, in (0, MaxFraction].
	Fractions []float64 `json:"fractions"`
	// Rates are open-loop load points at absolute offered rates (req/s),
	// the same for every configuration and workload (results.KindRate),
	// measured after the fraction points. Capacity is measured only for
	// the fractions: an experiment with Rates and no Fractions measures
	// none (the connections profile).
	Rates []float64 `json:"rates,omitempty"`
	// RatesFromSlowest are open-loop loads at absolute rates derived in
	// the run, each a fraction in (0, 1] of the slowest configuration's
	// capacity under the workload: the lowest, over the workload's
	// configurations, of the median of each one's valid capacity
	// measurements over all repetitions. Every configuration of the
	// workload is measured at the same rates (results.KindRate), so that
	// latencies and costs compare at equal absolute load. They are
	// measured after every other point of the run (in interleaved
	// repetitions of their own), when every capacity is known; the run
	// records the rates in DerivedRates. They make the run measure
	// capacity even without Fractions.
	RatesFromSlowest []float64 `json:"rates_from_slowest,omitempty"`
	// DerivedRates are the rates RatesFromSlowest gave each workload, by
	// workload name ("" for a single unnamed workload). The run sets
	// them once every capacity is measured; a resumed run keeps them.
	DerivedRates map[string]DerivedRates `json:"derived_rates,omitempty"`
	// Budget is the run's time budget, from its start to its last
	// measurement: after the planned points, a run with a budget and a
	// who-wins table (a suite run) decides the table's cells on them and
	// spends what is left of the budget on extra rounds for the cells it
	// could not decide ("Deciding within a budget" in the package
	// documentation); 0: no extra rounds, and one look.
	Budget Duration `json:"budget,omitempty"`
	// Repetitions is how often every point is measured (≥ 5 for figures
	// that are reported); repetitions are interleaved across
	// configurations: repetition 0 of every configuration, then 1, ….
	Repetitions int `json:"repetitions"`
	// Warmup and Duration are each point's unmeasured warm-up and
	// measured window.
	Warmup   Duration `json:"warmup"`
	Duration Duration `json:"duration"`
	// CapacityOutstanding is the closed loop's requests in flight per
	// connection when measuring capacity.
	CapacityOutstanding int `json:"capacity_outstanding"`
	// CapacityRequests, if positive, sizes each capacity point's window
	// by request count instead of Duration: the closed loop measures
	// that many requests, however long they take (at least
	// MinRequestsRate a second, else the point fails). A window that
	// must hold a number of requests — the gate's allocation rows need
	// 20 000 — then holds them on any machine, fast or loaded.
	CapacityRequests int64 `json:"capacity_requests,omitempty"`
	// LoadWorkers is the load generator's event-loop threads; 0 (every
	// profile) places them by loadgen.Placement once the CPUs are
	// resolved — a worker per load CPU but the first, each pinned to its
	// CPU, at most one per connection of the smallest workload — and
	// Resolve records the count here.
	LoadWorkers int `json:"load_workers"`
	// LoadWorkerCPUs are the CPUs the workers are pinned to
	// (loadgen.Config.WorkerCPUs); Resolve sets them with the automatic
	// placement, empty otherwise.
	LoadWorkerCPUs []int `json:"load_worker_cpus,omitempty"`
	// Sweep, if set, makes Resolve expand the configurations by the
	// server's CPU count n, and clears it: SweepThreads replaces them by
	// ThreadsConfigs(n); SweepCores runs each on CoreCounts(n) CPUs
	// ("<name>/cpus=k", Config.CPUs), sized by the rule for each count.
	Sweep string `json:"sweep,omitempty"`
	// Sizes are what every configuration runs with under every workload
	// (its threads, GOMAXPROCS and the sizing rule's numbers), by run
	// name ("<config>/<workload>"); Resolve sets them.
	Sizes map[string]Size `json:"sizes,omitempty"`
	// ServerCPUs and LoadCPUs are the CPU lists the server and the load
	// generator are pinned to; empty means automatic (see Resolve). They
	// must be disjoint.
	ServerCPUs string `json:"server_cpus,omitempty"`
	// MinServerCPUs, if set, is the fewest server CPUs the experiment's
	// comparison needs to show what it is for (the dispersion profile's
	// c queues); with fewer the run still measures, and warns why its
	// answer cannot be the one the profile is about.
	MinServerCPUs int    `json:"min_server_cpus,omitempty"`
	LoadCPUs      string `json:"load_cpus,omitempty"`
	// ServerCPUQuota, if positive, limits the measured server — all its
	// processes and threads together — to that share of one CPU's time
	// (0.5: half a CPU), by a cgroup's CPU bandwidth limit, for every
	// configuration alike (Linux, root). A capacity is then what that much
	// CPU serves, below the load generator's ceiling on a small machine;
	// latencies include the quota's throttled stretches and mean nothing
	// beyond it. A run that asks for a quota it cannot set fails at its
	// start.
	ServerCPUQuota float64 `json:"server_cpu_quota,omitempty"`
	// ServerBinary is the concbench executable that runs "serve"; empty
	// means the running executable (os.Executable). A configuration's own
	// ServerBinary overrides it.
	ServerBinary string `json:"server_binary,omitempty"`
	// Seed seeds the load generator: repetition r at fraction index i uses
	// the same schedule seed for every configuration (common random
	// numbers, so configurations differ by their own doing).
	Seed uint64 `json:"seed"`
	// LoadLimits are the load generator's limits on its own health (its
	// verdict; zero fields: loadgen.DefaultLimits). Relaxing them is for
	// tests that run on a machine busy with other tests: every point of
	// such a run carries the load generator's warning that it was done.
	LoadLimits loadgen.Limits `json:"load_limits"`
	// CalibrateOnce makes the run measure the CPU work's calibration once,
	// at its start, on the server CPUs (the service's own calibration, in
	// the harness process), record it in NsPerIter, and give it to every
	// server it starts (serve --ns-per-iter): a request's CPU work is then
	// the same number of iterations in every process, where servers that
	// calibrate themselves each convert it with their own measurement.
	// The gate profile leaves it unset (its servers calibrate themselves).
	CalibrateOnce bool `json:"calibrate_once,omitempty"`
	// NsPerIter, if positive, is the calibration given to every server
	// (serve --ns-per-iter, ns per iteration); with CalibrateOnce the run
	// sets it, so that a resumed run keeps it. 0 without CalibrateOnce:
	// every server measures its own.
	NsPerIter float64 `json:"ns_per_iter,omitempty"`
	// SLOProbes is the most probes of each latency-objective search (one
	// per configuration, workload with an SLO and repetition; see
	// sloSearch), and SLOWarmup and SLODuration each probe's warm-up and
	// window, which may be shorter than the other points' (a probe asks
	// only whether one percentile stays within a bound). WithDefaults sets
	// them (DefaultSLOProbes, DefaultSLOWarmup, DefaultSLODuration) when a
	// workload has an SLO; they are unused otherwise.
	SLOProbes   int      `json:"slo_probes,omitempty"`
	SLOWarmup   Duration `json:"slo_warmup,omitempty"`
	SLODuration Duration `json:"slo_duration,omitempty"`
	// Mechanisms is how many repetitions, the first ones, measure a
	// mechanisms point (results.KindMechanisms) right after each of
	// their rates from the slowest, on the same server at the same rate:
	// a window of MechanismsDuration after a warm-up of MechanismsWarmup
	// that counts the server's system calls by kind, futex wake calls
	// and cross-CPU wake-ups, and nothing else (counting slows every
	// system call, so no other point carries the counters). 0: none; it
	// needs RatesFromSlowest. WithDefaults sets the warm-up and window
	// (DefaultMechanismsWarmup, DefaultMechanismsDuration) when it is
	// positive.
	Mechanisms         int      `json:"mechanisms,omitempty"`
	MechanismsWarmup   Duration `json:"mechanisms_warmup,omitempty"`
	MechanismsDuration Duration `json:"mechanisms_duration,omitempty"`
	// Counterbalance reverses the order of the configurations in every
	// odd repetition (A B, B A, A B, …), so that no configuration is
	// measured first, or right after another one, more often than the
	// others: the CI gate's base and head share the machine's drift and
	// warm-up effects alike.
	Counterbalance bool `json:"counterbalance,omitempty"`
	// Shuffle measures the configurations of every round in a random
	// order, a permutation seeded by Seed and the round (the run records
	// each in run.json, results.Run.Orders), so that no configuration is
	// measured in the same place of the round, or after the same one,
	// every time (randomised multiple interleaved trials: Abedi & Brecht,
	// ICPE 2017). Counterbalance, where set, takes precedence.
	Shuffle bool `json:"shuffle,omitempty"`
	// Twin, if set, is the run's A/A control: the configuration Of
	// measured a second time as configuration Name (its own server
	// processes, interleaved like any other). WithDefaults adds it to
	// Configs (and to the workloads that run Of). Its truth is Of's, so
	// a decision that separates the two is false; the who-wins table
	// leaves it out of its answers and reports the control beside them
	// (results.Control).
	Twin *Twin `json:"twin,omitempty"`
}

// Twin names an experiment's A/A twin (Experiment.Twin).
type Twin struct {
	Of   string `json:"of"`
	Name string `json:"name"`
}

// TwinSuffix ends the name of an A/A twin: "leaderfollowers/lifo/twin".
const TwinSuffix = "/twin"

// WithoutTwinConfig returns e without its twin's configuration (Twin
// stays): what a change of the configurations starts from, so that
// WithDefaults adds the twin again for the configurations that remain.
func (e Experiment) WithoutTwinConfig() Experiment {
	if e.Twin == nil || e.Twin.Name == "" {
		return e
	}
	name := e.Twin.Name
	e.Configs = slices.DeleteFunc(slices.Clone(e.Configs), func(c Config) bool { return c.Name == name })
	e.Workloads = slices.Clone(e.Workloads)
	for i := range e.Workloads {
		if w := &e.Workloads[i]; len(w.Configs) > 0 {
			w.Configs = slices.DeleteFunc(slices.Clone(w.Configs), func(c string) bool { return c == name })
		}
	}
	return e
}

// withTwin returns e with its twin's configuration added, once.
func (e Experiment) withTwin() Experiment {
	t := e.Twin
	if t == nil {
		return e
	}
	if t.Name == "" {
		tw := *t
		tw.Name = t.Of + TwinSuffix
		e.Twin, t = &tw, &tw
	}
	if slices.ContainsFunc(e.Configs, func(c Config) bool { return c.Name == t.Name }) {
		return e
	}
	i := slices.IndexFunc(e.Configs, func(c Config) bool { return c.Name == t.Of })
	if i < 0 {
		return e // Validate says so
	}
	c := e.Configs[i]
	c.Args = slices.Clone(c.Args)
	c.Name = t.Name
	e.Configs = append(slices.Clone(e.Configs), c)
	for k := range e.Workloads {
		if w := &e.Workloads[k]; len(w.Configs) > 0 && slices.Contains(w.Configs, t.Of) {
			w.Configs = append(slices.Clone(w.Configs), t.Name)
		}
	}
	return e
}

// WithDefaults returns e with unset fields that have a default replaced
// by it: profile "custom", each workload's depth 1, arrival poisson, CPU,
// blocking work and size "0", ops "work=1"; one request outstanding per
// connection for capacity; the search's probes, warm-up and window when a
// workload has an SLO; the mechanisms point's warm-up and window when it
// has one. Everything else must be given (or is resolved: Resolve).
func (e Experiment) WithDefaults() Experiment {
	e.Profile = cmp.Or(e.Profile, "custom")
	e.Workloads = slices.Clone(e.Workloads)
	for i := range e.Workloads {
		w := &e.Workloads[i]
		w.Depth = cmp.Or(w.Depth, 1)
		w.Arrival = cmp.Or(w.Arrival, string(loadgen.Poisson))
		for _, s := range []*string{&w.CPU, &w.Block, &w.Size} {
			if *s == "" {
				*s = "0"
			}
		}
		w.Ops = cmp.Or(w.Ops, "work=1")
	}
	e = e.withTwin()
	e.CapacityOutstanding = cmp.Or(e.CapacityOutstanding, 1)
	if e.Mechanisms > 0 {
		e.MechanismsWarmup = cmp.Or(e.MechanismsWarmup, Duration(DefaultMechanismsWarmup))
		e.MechanismsDuration = cmp.Or(e.MechanismsDuration, Duration(DefaultMechanismsDuration))
	}
	if e.hasSLO() {
		e.SLOProbes = cmp.Or(e.SLOProbes, DefaultSLOProbes)
		e.SLOWarmup = cmp.Or(e.SLOWarmup, Duration(DefaultSLOWarmup))
		e.SLODuration = cmp.Or(e.SLODuration, Duration(DefaultSLODuration))
	}
	return e
}

// hasSLO reports whether a workload of e has a latency objective.
func (e *Experiment) hasSLO() bool {
	return slices.ContainsFunc(e.Workloads, func(w Workload) bool { return w.SLO != nil })
}

// runNames returns the names of the configurations under each workload,
// as points and figures label them: the configuration's name, followed by
// "/" and the workload's when there are several workloads.
func (e *Experiment) runNames() []string {
	var names []string
	for _, w := range e.Workloads {
		for _, c := range e.Configs {
			if !w.runs(c.Name) {
				continue
			}
			names = append(names, e.runName(c.Name, &w))
		}
	}
	return names
}

// label names the workload in messages.
func (w *Workload) label() string {
	if w.Name != "" {
		return w.Name
	}
	return w.Protocol + "/conns=" + strconv.Itoa(w.Conns)
}

// LoadConfig translates the workload into the load generator's settings
// (address, rate or closed loop, and timing still to be set: the
// returned ones are placeholders) and validates them as far as they go.
func (w *Workload) LoadConfig() (loadgen.Config, error) {
	c := loadgen.Config{
		Addr: "127.0.0.1:1", Protocol: w.Protocol, Conns: w.Conns, Depth: w.Depth,
		Arrival: loadgen.Arrival(w.Arrival), Rate: 1, Duration: time.Second, Warmup: loadgen.MinWarmup,
	}
	if w.Conns < 1 || w.Conns > loadgen.MaxConns {
		return c, fmt.Errorf("conns %d out of range (accepted: 1..%d)", w.Conns, loadgen.MaxConns)
	}
	if w.Idle < 0 || w.Conns+w.Idle > loadgen.MaxConns {
		return c, fmt.Errorf("idle %d out of range (accepted: 0..%d, with the %d active connections at most %d)", w.Idle, loadgen.MaxConns-w.Conns, w.Conns, loadgen.MaxConns)
	}
	if w.Depth < 1 || w.Depth > loadgen.MaxDepth {
		return c, fmt.Errorf("depth %d out of range (accepted: 1..%d)", w.Depth, loadgen.MaxDepth)
	}
	if !slices.Contains(wire.Protocols, w.Protocol) {
		return c, fmt.Errorf("protocol %q unknown (accepted: %s)", w.Protocol, strings.Join(wire.Protocols, ", "))
	}
	if c.Arrival == loadgen.OnOff {
		return c, fmt.Errorf("arrival %q not supported by the harness (accepted: poisson, constant)", w.Arrival)
	}
	var err error
	for _, d := range []struct {
		name, val string
		dst       *loadgen.Dist
		parse     func(string) (loadgen.Dist, error)
	}{
		{"cpu", w.CPU, &c.CPU, loadgen.ParseDurationDist},
		{"block", w.Block, &c.Block, loadgen.ParseDurationDist},
		{"size", w.Size, &c.Size, loadgen.ParseIntDist},
	} {
		if *d.dst, err = d.parse(d.val); err != nil {
			return c, fmt.Errorf("%s %q: %w", d.name, d.val, err)
		}
	}
	c.ConnRequests = w.ConnRequests
	if c.Ops, err = loadgen.ParseOpMix(w.Ops); err != nil {
		return c, fmt.Errorf("ops %q: %w", w.Ops, err)
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}
