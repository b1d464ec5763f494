package harness

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
)

// Limits of an experiment.
const (
	MaxConfigs     = 64
	MaxWorkloads   = 16
	MaxFractions   = 32
	MaxFraction    = 1.0
	MaxRates       = 32
	MaxRepetitions = 100
	MinWindow      = 100 * time.Millisecond
	MaxWindow      = time.Hour
	MaxBudget      = 24 * time.Hour
	// MaxCapacityRequests bounds Experiment.CapacityRequests, and
	// MinRequestsRate is the slowest a window sized by request count may
	// go before the point is stopped (the watchdog's bound).
	MaxCapacityRequests = 100_000_000
	MinRequestsRate     = 100
	// MinNsPerIter and MaxNsPerIter bound NsPerIter as serve's
	// --ns-per-iter (service.Config) does.
	MinNsPerIter = 1e-3
	MaxNsPerIter = 1e6
)

// reservedArgs are serve flags the harness sets itself.
var reservedArgs = []string{"model", "protocol", "addr", "cpus", "threads", "gomaxprocs", "ns-per-iter"}

// validName is the character set of configuration and workload names:
// they become file names (results.PointFileName).
func validName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/-_.=,+", r)) {
			return false
		}
	}
	return true
}

// Validate reports every setting of e outside its accepted range, each
// message naming the value and the range (errors.Join of them; nil if e
// is valid).
func (e *Experiment) Validate() error {
	var p problems
	if e.Sweep != "" && e.Sweep != SweepThreads && e.Sweep != SweepCores {
		p.add("sweep %q unknown (accepted: %s, %s)", e.Sweep, SweepThreads, SweepCores)
	}
	names := e.validateConfigs(&p)
	if t := e.Twin; t != nil && (!names[t.Of] || t.Of == t.Name) {
		p.add("twin %q of %q: not a configuration of the experiment (accepted: the name of a configuration to measure twice)", t.Name, t.Of)
	}
	e.validateWorkloads(&p, names)
	e.validateLoads(&p)
	e.validateSLOs(&p)
	e.validateMechanisms(&p)
	e.validateRuns(&p)
	e.validateCPUs(&p)
	return errors.Join(p...)
}

// problems are the invalid settings Validate finds, in order.
type problems []error

// add adds a problem.
func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Errorf("experiment: "+format, args...))
}

// window adds a problem for a warm-up or a measured window out of range;
// prefix names the windows ("SLO ", "mechanisms ", or "" for the points').
func (p *problems) window(prefix string, warmup, duration Duration) {
	if w := time.Duration(warmup); w < loadgen.MinWarmup || w > MaxWindow {
		p.add("%swarmup %v out of range (accepted: %v..%v; the load generator calls a shorter warm-up invalid)", prefix, w, loadgen.MinWarmup, MaxWindow)
	}
	if d := time.Duration(duration); d < MinWindow || d > MaxWindow {
		p.add("%sduration %v out of range (accepted: %v..%v)", prefix, d, MinWindow, MaxWindow)
	}
}

// count adds a problem for a number n of things (what: "configurations")
// outside least..most: an experiment's lists of configurations,
// workloads and rates are bounded alike.
func (p *problems) count(n, least, most int, what string) {
	if n < least || n > most {
		p.add("%d %s (accepted: %d..%d)", n, what, least, most)
	}
}

// name adds a problem for the name of the ith thing of a kind
// ("configuration", "workload") that is not a validName (the accepted
// set, then more, a further condition) or that seen holds already, and
// adds it to seen: configurations and workloads are named by one rule.
func (p *problems) name(kind string, i int, name, more string, seen map[string]bool) {
	switch {
	case !validName(name):
		p.add("%s %d: name %q invalid (accepted: 1..100 of a-z A-Z 0-9 / - _ . = , +%s)", kind, i, name, more)
	case seen[name]:
		p.add("%s %d: name %q used twice (accepted: unique names)", kind, i, name)
	}
	seen[name] = true
}

// validateConfigs validates the configurations, adding to p, and returns
// their names.
func (e *Experiment) validateConfigs(p *problems) map[string]bool {
	p.count(len(e.Configs), 1, MaxConfigs, "configurations")
	names := map[string]bool{}
	for i := range e.Configs {
		c := &e.Configs[i]
		p.name("configuration", i, c.Name, "", names)
		c.validate(p)
		e.validateConfigRefs(p, c)
	}
	return names
}

// validate validates the configuration's own settings: its model, its
// threads and CPUs, its connection limit and its sizing.
func (c *Config) validate(p *problems) {
	if c.Model == "" {
		p.add("configuration %q: no model (accepted: a concbench serve --model name)", c.Name)
	}
	if c.Threads < 0 || c.Threads > models.MaxThreads {
		p.add("configuration %q: threads %d out of range (accepted: 0 for the model's default, or 1..%d)", c.Name, c.Threads, models.MaxThreads)
	}
	if c.GOMAXPROCS < 0 || c.GOMAXPROCS > maxGOMAXPROCS {
		p.add("configuration %q: gomaxprocs %d out of range (accepted: 0 for the server's default, or 1..%d)", c.Name, c.GOMAXPROCS, maxGOMAXPROCS)
	}
	if c.MaxConns < 0 || c.MaxConns > loadgen.MaxConns {
		p.add("configuration %q: max_conns %d out of range (accepted: 0 for no limit, or 1..%d)", c.Name, c.MaxConns, loadgen.MaxConns)
	}
	if c.MaxConns > 0 && strings.TrimSpace(c.MaxConnsReason) == "" {
		p.add("configuration %q: max_conns %d without max_conns_reason (accepted: the reason the model stops there, for the figures)", c.Name, c.MaxConns)
	}
	switch {
	case c.Sizing != "" && c.Sizing != SizeRule:
		p.add("configuration %q: sizing %q unknown (accepted: empty for the values given, or %q)", c.Name, c.Sizing, SizeRule)
	case c.Sizing == SizeRule && (c.Threads != 0 || c.ThreadsPerConn || c.GOMAXPROCSPerConn):
		p.add("configuration %q: sizing %q with threads or a per-connection form set (accepted: the rule, or the values, not both; gomaxprocs may override the rule's)", c.Name, SizeRule)
	case c.Sizing == SizeRule && !hasShape(c.Model):
		p.add("configuration %q: model %q has no shape for the sizing rule: it is not in the model table, models/registry (accepted: %s)", c.Name, c.Model, strings.Join(shapeNames(), ", "))
	case c.MinPool < 0 || c.MinPool > models.MaxThreads || c.MinPool > 0 && c.Sizing != SizeRule:
		p.add("configuration %q: min_pool %d out of range (accepted: 0, or 1..%d with sizing %q)", c.Name, c.MinPool, models.MaxThreads, SizeRule)
	case c.CPUs < 0 || c.CPUs > maxGOMAXPROCS:
		p.add("configuration %q: cpus %d out of range (accepted: 0 for all the server CPUs, or 1..%d)", c.Name, c.CPUs, maxGOMAXPROCS)
	}
	if c.ThreadsPerConn && c.Threads != 0 {
		p.add("configuration %q: threads %d and threads_per_conn both set (accepted: one of them)", c.Name, c.Threads)
	}
	if c.GOMAXPROCSPerConn && c.GOMAXPROCS != 0 {
		p.add("configuration %q: gomaxprocs %d and gomaxprocs_per_conn both set (accepted: one of them)", c.Name, c.GOMAXPROCS)
	}
}

// validateConfigRefs validates what configuration c refers to: the
// configuration it takes its rates from, and the flags its and its back
// end's arguments set.
func (e *Experiment) validateConfigRefs(p *problems, c *Config) {
	if c.RatesFrom != "" {
		i := slices.IndexFunc(e.Configs, func(o Config) bool { return o.Name == c.RatesFrom })
		switch {
		case c.RatesFrom == c.Name:
			p.add("configuration %q: rates_from names itself (accepted: another configuration)", c.Name)
		case i < 0:
			p.add("configuration %q: rates_from %q is not a configuration of the experiment", c.Name, c.RatesFrom)
		case e.Configs[i].RatesFrom != "":
			p.add("configuration %q: rates_from %q takes its own rates from %q (accepted: a configuration without rates_from)", c.Name, c.RatesFrom, e.Configs[i].RatesFrom)
		}
	}
	for _, a := range c.Args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(reservedArgs, name) {
			p.add("configuration %q: argument %q sets a flag the harness sets itself (--%s; accepted: the model's own flags; use the field instead)", c.Name, a, name)
		}
	}
	if b := c.Backend; b != nil {
		if b.Model == "" {
			p.add("configuration %q: back end has no model (accepted: a concbench serve --model name)", c.Name)
		}
		for _, a := range c.Args {
			if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "backend" {
				p.add("configuration %q: argument %q sets --backend, which the harness sets for a chain (accepted: the back end in the backend field)", c.Name, a)
			}
		}
		for _, a := range b.Args {
			if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && slices.Contains([]string{"model", "protocol", "cpus", "addr"}, name) {
				p.add("configuration %q: back end argument %q sets a flag the harness sets itself (--%s; accepted: the back-end model's own flags)", c.Name, a, name)
			}
		}
	}
}

// validateWorkloads validates the workloads, and that every
// configuration they name is one of names and gets point files of its
// own, adding to p.
func (e *Experiment) validateWorkloads(p *problems, names map[string]bool) {
	p.count(len(e.Workloads), 1, MaxWorkloads, "workloads")
	wnames := map[string]bool{}
	for i, w := range e.Workloads {
		if len(e.Workloads) > 1 || w.Name != "" {
			p.name("workload", i, w.Name, "; required with several workloads", wnames)
		}
		if _, err := w.LoadConfig(); err != nil {
			p.add("workload %d (%s): %v", i, w.label(), err)
		}
		for _, name := range w.Configs {
			if !names[name] {
				p.add("workload %s: configuration %q is not a configuration of the experiment", w.label(), name)
			}
		}
		for _, c := range e.Configs {
			if c.RatesFrom != "" && w.runs(c.Name) && !w.runs(c.RatesFrom) {
				p.add("workload %s runs configuration %q but not %q, its rates_from", w.label(), c.Name, c.RatesFrom)
			}
		}
	}

	// Every configuration under every workload must have its own point
	// files (results.PointFileName maps "/" and "_" alike).
	files := map[string]string{}
	for _, name := range e.runNames() {
		f := results.PointFileName(&results.Point{Config: results.ModelConfig{Name: name}})
		if other, ok := files[f]; ok {
			p.add("configurations %q and %q would share point files (accepted: names that differ in more than / _ space =)", other, name)
		}
		files[f] = name
	}
}

// validateLoads validates the loads the points are measured at:
// fractions of capacity, absolute rates, rates from the slowest
// configuration, and the CPU work's calibration.
func (e *Experiment) validateLoads(p *problems) {
	if n := len(e.Fractions); n > MaxFractions || n == 0 && len(e.Rates) == 0 && len(e.RatesFromSlowest) == 0 && !e.hasSLO() {
		p.add("%d fractions (accepted: 1..%d, or 0 with rates, rates from the slowest or a latency objective)", n, MaxFractions)
	}
	p.count(len(e.Rates), 0, MaxRates, "rates")
	keys := map[string]bool{}
	for _, f := range e.Fractions {
		if math.IsNaN(f) || f <= 0 || f > MaxFraction {
			p.add("fraction %g out of range (accepted: > 0 and ≤ %g of capacity)", f, MaxFraction)
		}
		k := results.PointFileName(&results.Point{Kind: results.KindOpen, Fraction: f}) // differs in the fraction alone
		if keys[k] {
			p.add("fraction %g given twice (accepted: fractions that differ in the first 3 decimals)", f)
		}
		keys[k] = true
	}
	for _, r := range e.Rates {
		if math.IsNaN(r) || r < 1 || r > loadgen.MaxRate {
			p.add("rate %g req/s out of range (accepted: 1..%g)", r, loadgen.MaxRate)
		}
		k := results.PointFileName(&results.Point{Kind: results.KindRate, OfferedRatePerS: r}) // differs in the rate alone
		if keys[k] {
			p.add("rate %g given twice (accepted: rates that differ in whole req/s)", r)
		}
		keys[k] = true
	}
	if math.IsNaN(e.NsPerIter) || e.NsPerIter != 0 && (e.NsPerIter < MinNsPerIter || e.NsPerIter > MaxNsPerIter) {
		p.add("ns per iteration %g out of range (accepted: 0, or %g..%g)", e.NsPerIter, MinNsPerIter, MaxNsPerIter)
	}
	p.count(len(e.RatesFromSlowest), 0, MaxFractions, "rates from the slowest")
	seen := map[float64]bool{}
	for _, f := range e.RatesFromSlowest {
		if math.IsNaN(f) || f <= 0 || f > MaxFraction {
			p.add("rate from the slowest %g out of range (accepted: > 0 and ≤ %g of the slowest configuration's capacity)", f, MaxFraction)
		}
		if seen[f] {
			p.add("rate from the slowest %g given twice", f)
		}
		seen[f] = true
	}
}

// validateSLOs validates the workloads' latency objectives and the
// searches for them.
func (e *Experiment) validateSLOs(p *problems) {
	for _, w := range e.Workloads {
		if w.SLO == nil {
			continue
		}
		if err := w.SLO.validate(); err != nil {
			p.add("workload %s: %v", w.label(), err)
		}
		if len(e.Rates) > 0 && len(e.Fractions) == 0 && len(e.RatesFromSlowest) == 0 {
			p.add("workload %s has an SLO but the experiment measures absolute rates only, no capacity to bound its search (accepted: an SLO without rates, or with fractions or rates from the slowest)", w.label())
		}
	}
	if e.hasSLO() {
		if e.SLOProbes < 1 || e.SLOProbes > MaxSLOProbes {
			p.add("SLO probes %d out of range (accepted: 1..%d)", e.SLOProbes, MaxSLOProbes)
		}
		p.window("SLO ", e.SLOWarmup, e.SLODuration)
	}
}

// validateMechanisms validates the mechanisms points: how many
// repetitions have them, and their windows.
func (e *Experiment) validateMechanisms(p *problems) {
	if e.Mechanisms == 0 {
		return
	}
	if e.Mechanisms < 0 || e.Mechanisms > e.Repetitions {
		p.add("mechanisms %d out of range (accepted: 0 for none, or 1..%d, the repetitions)", e.Mechanisms, e.Repetitions)
	}
	if len(e.RatesFromSlowest) == 0 {
		p.add("mechanisms %d without rates from the slowest (accepted: 0, or rates from the slowest: a mechanisms point follows each equal-load point)", e.Mechanisms)
	}
	p.window("mechanisms ", e.MechanismsWarmup, e.MechanismsDuration)
}

// validateRuns validates how each point is run: repetitions, windows,
// outstanding requests, load workers, and the per-connection forms
// under each workload.
func (e *Experiment) validateRuns(p *problems) {
	if e.Repetitions < 1 || e.Repetitions > MaxRepetitions {
		p.add("repetitions %d out of range (accepted: 1..%d)", e.Repetitions, MaxRepetitions)
	}
	p.window("", e.Warmup, e.Duration)
	if b := time.Duration(e.Budget); b < 0 || b > MaxBudget {
		p.add("budget %v out of range (accepted: 0 for none, or up to %v)", b, MaxBudget)
	}
	if e.CapacityRequests < 0 || e.CapacityRequests > MaxCapacityRequests {
		p.add("capacity requests %d out of range (accepted: 0 for a window of Duration, or 1..%d)", e.CapacityRequests, MaxCapacityRequests)
	}
	if e.CapacityOutstanding < 1 || e.CapacityOutstanding > loadgen.MaxInFlight {
		p.add("capacity outstanding %d out of range (accepted: 1..%d requests in flight per connection)", e.CapacityOutstanding, loadgen.MaxInFlight)
	}
	if e.LoadWorkers < 0 || e.LoadWorkers > loadgen.MaxWorkers {
		p.add("load workers %d out of range (accepted: 0 for the automatic placement, or 1..%d)", e.LoadWorkers, loadgen.MaxWorkers)
	}
	for _, w := range e.Workloads {
		if e.LoadWorkers > 0 && e.LoadWorkers > w.Conns {
			p.add("load workers %d exceed workload %s's %d connections (accepted: at most one worker per connection)", e.LoadWorkers, w.label(), w.Conns)
		}
		for _, c := range e.Configs {
			if c.overCap(&w) != "" {
				continue // not run: recorded as over the model's limit
			}
			if c.GOMAXPROCSPerConn && w.Conns > maxGOMAXPROCS {
				p.add("configuration %q: gomaxprocs per connection under workload %s would be %d (accepted: up to %d connections; set max_conns to record the workload as over the model's limit)", c.Name, w.label(), perConnProcs(w.Conns), maxGOMAXPROCS)
			}
			if c.ThreadsPerConn && w.Conns > models.MaxThreads {
				p.add("configuration %q: threads per connection under workload %s would be %d (accepted: up to %d; set max_conns to record the workload as over the model's limit)", c.Name, w.label(), w.Conns, models.MaxThreads)
			}
		}
	}
}

// validateCPUs validates the server's and the load generator's CPU
// lists: each valid, both or neither given, and disjoint.
func (e *Experiment) validateCPUs(p *problems) {
	srv, err1 := cpuset.Parse(e.ServerCPUs)
	if err1 != nil {
		p.add("server CPUs: %v", err1)
	}
	ld, err2 := cpuset.Parse(e.LoadCPUs)
	if err2 != nil {
		p.add("load CPUs: %v", err2)
	}
	if err1 == nil && err2 == nil {
		for _, c := range srv {
			if slices.Contains(ld, c) {
				p.add("server CPUs %q and load CPUs %q share CPU %d (accepted: disjoint lists, so that the load generator is not what is measured)", e.ServerCPUs, e.LoadCPUs, c)
				break
			}
		}
		if (len(srv) == 0) != (len(ld) == 0) {
			p.add("server CPUs %q and load CPUs %q: give both or neither (accepted: both lists, or both empty for the automatic split)", e.ServerCPUs, e.LoadCPUs)
		}
	}
	if q := e.ServerCPUQuota; q != 0 && !(q >= MinServerCPUQuota && q <= MaxServerCPUQuota) {
		p.add("server CPU quota %g out of range (accepted: 0 for none, or %g..%g of one CPU)", q, MinServerCPUQuota, MaxServerCPUQuota)
	}
}

// The server CPU quota's bounds (Experiment.ServerCPUQuota), in CPUs: at
// least the kernel's smallest quota (1 ms) per 10-ms period, at most 1024
// CPUs.
const (
	MinServerCPUQuota = 0.1
	MaxServerCPUQuota = 1024.0
)
