package harness

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/results"
	"concbench/service"
)

// configAt returns the i-th configuration of repetition rep: in
// reverse order in every other repetition when the experiment
// counterbalances.
func (r *runner) configAt(rep, i int) *runConfig {
	switch {
	case r.exp.Counterbalance && rep%2 == 1:
		return &r.cfgs[len(r.cfgs)-1-i]
	case r.exp.Shuffle:
		return &r.cfgs[r.order(rep, len(r.cfgs))[i]]
	}
	return &r.cfgs[i]
}

// order returns round rep's permutation of n items (Experiment.Shuffle),
// seeded by the experiment's seed and the round alone, so that a resumed
// run measures in the same order; it records the round's order of the
// run's configurations in run.json's orders.
func (r *runner) order(rep, n int) []int {
	perm := rand.New(rand.NewPCG(r.exp.Seed, uint64(rep)+orderStream)).Perm(n)
	if n == len(r.cfgs) {
		if r.run.Orders == nil {
			r.run.Orders = map[int][]string{}
		}
		if _, ok := r.run.Orders[rep]; !ok {
			names := make([]string, n)
			for i, k := range perm {
				names[i] = r.cfgs[k].name
			}
			r.run.Orders[rep] = names
		}
	}
	return perm
}

// orderStream separates the orders' random stream from the load
// generator's, which the same seed seeds.
const orderStream = 1 << 32

// runPlan measures every repetition of every configuration at each of
// loads, and, with searches, its latency objective's search, until ctx
// is done (then the summary says interrupted).
func (r *runner) runPlan(ctx context.Context, loads []pointLoad, searches bool) error {
	if r.exp.Budget > 0 && r.run.Decisions == nil {
		r.run.Decisions = r.newPlan()
	}
	for rep := 0; rep < r.exp.Repetitions; rep++ {
		start := time.Now()
		for i := range r.cfgs {
			rc := r.configAt(rep, i)
			for _, l := range loads {
				if ctx.Err() != nil {
					r.sum.Interrupted = true
					return nil
				}
				if err := r.point(rc, l, rep); err != nil {
					return err
				}
			}
			if searches && rc.wl.SLO != nil && !r.sum.Interrupted {
				// On the same server process as the capacity point.
				if err := r.search(ctx, rc, rep); err != nil {
					return err
				}
			}
			r.stopServer() // the next configuration gets a fresh process
		}
		if r.enoughRounds(rep, time.Since(start)) {
			// The budget's share for the extra rounds: fewer planned ones.
			left := r.exp.Repetitions - (rep + 1)
			r.sum.Points -= left * len(r.cfgs) * (len(loads) + len(r.exp.RatesFromSlowest))
			for _, rc := range r.cfgs {
				if searches && rc.wl.SLO != nil {
					r.sum.Points -= left * (r.mostProbes() + 1)
					r.searches.left -= left
				}
			}
			r.exp.Repetitions = rep + 1
			r.run.Experiment = r.exp
			if r.opt.Progress != nil {
				fmt.Fprintf(r.opt.Progress, "planned rounds: %d of %d, so that %.0f%% of the %v budget is left for the extra rounds (a round took %v here)\n",
					r.exp.Repetitions, r.run.Decisions.Planned, 100*results.ExtraShare, time.Duration(r.exp.Budget), time.Since(start).Round(time.Second))
			}
			if err := results.WriteRun(r.dir, r.run); err != nil {
				return fmt.Errorf("harness: %w", err)
			}
		}
	}
	return nil
}

// runDerived derives the rates from the slowest configuration (written
// to run.json) and measures every repetition of every configuration at
// them — each followed, in the first Experiment.Mechanisms repetitions,
// by its mechanisms point on the same server —, until ctx is done.
func (r *runner) runDerived(ctx context.Context) error {
	r.deriveRates()
	if err := results.WriteRun(r.dir, r.run); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	for rep := range r.exp.Repetitions {
		kinds := []results.Kind{results.KindRate}
		if rep < r.exp.Mechanisms {
			kinds = append(kinds, results.KindMechanisms)
		}
		for i := range r.cfgs {
			rc := r.configAt(rep, i)
			dr := r.exp.DerivedRates[rc.wl.Name]
			for j := range r.exp.RatesFromSlowest {
				for _, kind := range kinds {
					if ctx.Err() != nil {
						r.sum.Interrupted = true
						return nil
					}
					if len(dr.Rates) == 0 {
						// No rate to measure at: counted, not written
						// (run.json's derived_rates and warnings say why).
						r.pointIdx++
						r.sum.Failed++
						continue
					}
					// A mechanisms point has its rate point's arrivals.
					l := pointLoad{kind: kind, rate: dr.Rates[j], seedIdx: 1 + len(r.exp.Fractions) + len(r.exp.Rates) + j}
					if err := r.point(rc, l, rep); err != nil {
						return err
					}
				}
			}
			r.stopServer()
		}
	}
	return nil
}

// placeGenerator pins this process, which runs the load generator, to
// the load CPUs, sizes its GOMAXPROCS, chooses how the workers poll and
// records both in the provenance. It returns what undoes the pinning.
func (r *runner) placeGenerator() (restore func(), err error) {
	restore = func() {}
	// The load generator runs in this process: pin it, and size
	// GOMAXPROCS to its CPUs as "concbench load --cpus" does.
	if r.exp.LoadCPUs != "" {
		set, _ := cpuset.Parse(r.exp.LoadCPUs) // validated
		prev, err := cpuset.Current()
		if err != nil {
			return restore, fmt.Errorf("harness: %w", err)
		}
		if err := cpuset.Pin(0, set); err != nil {
			return restore, fmt.Errorf("harness: pin the load generator to CPUs %s: %w", r.exp.LoadCPUs, err)
		}
		// Note: Ps beyond the generator's workers (loadgen.Procs). Each
		// worker is a locked thread that lends its P while it sleeps in
		// epoll_pwait2; with GOMAXPROCS = 1 the harness's other goroutines
		// (snapshots, progress, GC) take it and the worker waits to get it
		// back (measured: docs/findings.md).
		prevProcs := runtime.GOMAXPROCS(max(len(set), loadgen.Procs(r.exp.LoadWorkers)))
		restore = func() {
			runtime.GOMAXPROCS(prevProcs)
			cpuset.Pin(0, prev)
		}
	}
	// A generator with a CPU per worker busy-polls: on a VM whose idle
	// vCPUs halt, a thread woken by a timer arrives tens of µs late, and
	// a sleeping generator would add that to every send (loadgen.PollBusy).
	r.poll = loadgen.PollSleep
	if set, _ := cpuset.Parse(r.exp.LoadCPUs); len(set) >= r.exp.LoadWorkers {
		r.poll = loadgen.PollBusy
	}
	r.prov.LoadGOMAXPROCS = runtime.GOMAXPROCS(0)
	r.prov.LoadWorkers, r.prov.LoadWorkerCPUs = r.exp.LoadWorkers, cpuset.Set(r.exp.LoadWorkerCPUs).String()
	return restore, nil
}

// deriveRates sets the experiment's DerivedRates (Experiment.
// RatesFromSlowest) for every workload that has none yet (a resumed run
// keeps the rates it recorded), from the median capacities over all
// repetitions, and records them in run.json's experiment. A
// configuration whose capacity was beyond the load generator's ceiling
// in every repetition counts as the ceiling's bound, a lower bound on
// its capacity (DerivedRates.Bound): the rates stay below it, where the
// generator can measure them.
func (r *runner) deriveRates() {
	if r.exp.DerivedRates == nil {
		r.exp.DerivedRates = map[string]DerivedRates{}
	}
	for _, w := range r.exp.Workloads {
		if _, ok := r.exp.DerivedRates[w.Name]; ok {
			continue
		}
		var dr DerivedRates
		var bound float64
		if c := r.ceilingFor(w.Protocol); c != nil {
			bound = c.Bound()
		}
		for _, rc := range r.cfgs {
			if rc.wl.Name != w.Name {
				continue
			}
			c, beyond := r.capacity(rc.name, r.exp.Repetitions-1), false
			if c <= 0 && bound > 0 && len(r.beyondIn[rc.name]) > 0 {
				c, beyond = bound, true
			}
			if c > 0 && (dr.From == "" || c < dr.Capacity) {
				dr.From, dr.Capacity, dr.Bound = rc.name, c, beyond
			}
		}
		if dr.Bound {
			r.run.Warnings = append(r.run.Warnings, fmt.Sprintf("workload %s: %s's capacity was beyond the load generator's ceiling in every repetition: its rates from the slowest are fractions of the ceiling's bound, %.0f req/s, a lower bound on every configuration's capacity", w.label(), dr.From, dr.Capacity))
		}
		if dr.From == "" {
			dr.Reason = fmt.Sprintf("no configuration under workload %s has a valid capacity measurement: its %d rates from the slowest were not measured", w.label(), len(r.exp.RatesFromSlowest))
			r.run.Warnings = append(r.run.Warnings, dr.Reason)
		}
		for _, f := range r.exp.RatesFromSlowest {
			if dr.From != "" {
				dr.Rates = append(dr.Rates, math.Round(f*dr.Capacity))
			}
		}
		r.exp.DerivedRates[w.Name] = dr
	}
	r.run.Experiment = r.exp
}

// commonGOMAXPROCS is the servers' GOMAXPROCS for the run's provenance
// when every configuration runs with the same one, else 0 (each point's
// provenance has its server's).
func (r *runner) commonGOMAXPROCS() int {
	v := -1
	for _, rc := range r.cfgs {
		n := rc.size.GOMAXPROCS
		n = cmp.Or(n, rc.size.CPUs) // serve's default: the CPUs it runs on
		if v >= 0 && n != v {
			return 0
		}
		v = n
	}
	return max(v, 0)
}

// seed is the load generator's seed for repetition rep and load index k
// (pointLoad.seedIdx): the same for every configuration, different for
// every point of one.
func (r *runner) seed(rep, k int) uint64 {
	return r.exp.Seed*1_000_003 + uint64(rep)*1009 + uint64(k)
}

// pointLoad is one load point that every configuration is measured at:
// capacity, a fraction of it, or an absolute rate.
type pointLoad struct {
	kind     results.Kind
	fraction float64 // KindOpen
	rate     float64 // KindRate: req/s
	// seedIdx selects the load generator's seed (runner.seed): 0 for
	// capacity, 1.. for the fractions, then the rates, the rates from the
	// slowest and the probes.
	seedIdx int
	probe   int // KindProbe: the probe's index; rate is its rate
	// capacity is a probe's search's upper bracket, for its Fraction.
	capacity float64
}

// loads returns the load points of every configuration in the order they
// are measured: capacity — with fractions, rates from the slowest, or a
// latency objective's search to bound — and the fractions, then the
// rates.
func (e *Experiment) loads() []pointLoad {
	var ls []pointLoad
	if len(e.Fractions) > 0 || len(e.RatesFromSlowest) > 0 || len(e.Rates) == 0 && e.hasSLO() {
		ls = append(ls, pointLoad{kind: results.KindCapacity})
		for i, f := range e.Fractions {
			ls = append(ls, pointLoad{kind: results.KindOpen, fraction: f, seedIdx: i + 1})
		}
	}
	for j, rate := range e.Rates {
		ls = append(ls, pointLoad{kind: results.KindRate, rate: rate, seedIdx: 1 + len(e.Fractions) + j})
	}
	return ls
}

// calibrateOn measures the CPU work's calibration (ns per iteration, the
// service's own measurement, about 25 ms) with this process pinned to
// cpus (empty: where it runs), and restores the process's affinity.
func calibrateOn(cpus string) (float64, error) {
	if cpus != "" {
		set, _ := cpuset.Parse(cpus) // validated
		prev, err := cpuset.Current()
		if err != nil {
			return 0, err
		}
		if err := cpuset.Pin(0, set); err != nil {
			return 0, fmt.Errorf("pin the calibration to the server CPUs %s: %w", cpus, err)
		}
		defer cpuset.Pin(0, prev)
	}
	svc, err := service.New(service.Config{})
	if err != nil {
		return 0, fmt.Errorf("calibrate the CPU work: %w", err)
	}
	return svc.Calibration().NsPerIter, nil
}
