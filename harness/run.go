package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	mstats "github.com/montanaflynn/stats"

	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
	"concbench/service"
)

// Options are how a run is made, as opposed to what it measures (the
// Experiment).
type Options struct {
	// Progress receives a line per point: i of N, the configuration, kind
	// and fraction, the outcome, elapsed time and ETA. Nil: no progress.
	Progress io.Writer

	// Load, if set, runs each point's load instead of loadgen.Run: bench
	// --agents gives a coordinator of agents on other hosts
	// (loadgen/agent). It must call Config.OnWindow as loadgen.Run does.
	Load func(ctx context.Context, cfg loadgen.Config) (*loadgen.Result, error)
	// ServerAddr, if set, is the address the server listens on (serve
	// --addr; default loopback): one that agents on other hosts reach.
	ServerAddr string
	// Ceilings, if set, are the load generator's ceilings measured
	// already on this machine with these CPUs (the thesis measures them
	// once for its parts); the run records them instead of measuring.
	Ceilings []results.Ceiling

	// KeepKernelThreads leaves the kernel threads that stall a CPU
	// periodically (kdamond) as they are; by default a run gives them
	// SCHED_IDLE while it lasts and restores them after (Provenance.
	// KernelThreads says what was done).
	KeepKernelThreads bool

	// throttle, if set, is every point's loadgen.Config.Throttle: tests
	// slow the generator down on purpose.
	throttle time.Duration

	// extraAll gives every cell of a budgeted run's first look one extra
	// round of every configuration of its workload (tests: the extra
	// rounds run whatever the machine measures).
	extraAll bool

	// onWindow, if set, is called when a point's measured window starts,
	// with the server's pid (tests kill the server through it).
	onWindow func(p *results.Point, pid int)
}

// Summary is what a run did.
type Summary struct {
	Dir    string // the run folder
	Points int    // points the experiment has
	// Skipped counts the points already in the folder (a resumed run);
	// the others count this invocation's points by outcome: OK (the load
	// generator's verdict valid), Invalid (measured, verdict invalid),
	// Failed and Unavailable.
	Skipped, OK, Invalid, Failed, Unavailable int
	// Interrupted is true if the run stopped early (its context was
	// cancelled); Resume continues it.
	Interrupted bool
	Elapsed     time.Duration
}

// String is the run's one-line summary.
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d points: %d ok, %d invalid, %d failed, %d unavailable", s.Points, s.OK, s.Invalid, s.Failed, s.Unavailable)
	if s.Skipped > 0 {
		fmt.Fprintf(&b, ", %d already measured", s.Skipped)
	}
	if left := s.Points - s.Skipped - s.OK - s.Invalid - s.Failed - s.Unavailable; s.Interrupted {
		fmt.Fprintf(&b, "; INTERRUPTED with %d points left (resume with --resume %s)", left, s.Dir)
	}
	fmt.Fprintf(&b, "; %s", s.Elapsed.Round(time.Second))
	return b.String()
}

// NewRunDir returns the folder for a run started at t under out:
// out/bench-<UTC timestamp>.
func NewRunDir(out string, t time.Time) string {
	return filepath.Join(out, "bench-"+t.UTC().Format("20060102T150405Z"))
}

// Run measures exp into the folder dir, which must not hold a run yet: it
// writes run.json at once, every point as soon as it is measured, and
// run.json again at the end (Finished) or when ctx is cancelled
// (Interrupted; the point being measured is finished first). Failed and
// invalid points do not stop the run; Run returns an error only when the
// run cannot be made at all (an invalid experiment, an unwritable
// folder, CPUs that cannot be pinned).
func Run(ctx context.Context, exp Experiment, dir string, opt Options) (*Summary, error) {
	exp = exp.WithDefaults()
	if err := exp.Validate(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err == nil {
		return nil, fmt.Errorf("harness: %s already holds a run (continue it with Resume)", dir)
	}
	r := &runner{exp: exp, dir: dir, opt: opt}
	// Resolve first, so that an experiment that cannot run (a server
	// binary that does not exist) leaves no empty run folder behind.
	if err := r.resolve(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	now := time.Now()
	r.run = &results.Run{
		ID:         filepath.Base(dir),
		Profile:    r.exp.Profile,
		Experiment: r.exp,
		Started:    now.UTC(),
		Warnings:   r.runWarnings(),
	}
	return r.execute(ctx, now)
}

// Resume continues the run in dir with the experiment stored in its
// run.json: points already there are skipped, the others measured.
func Resume(ctx context.Context, dir string, opt Options) (*Summary, error) {
	run, pts, err := results.ReadRun(dir)
	if err != nil {
		return nil, fmt.Errorf("harness: resume: %w", err)
	}
	// An unreadable point (a file cut short by a crash, say) is measured
	// again; its file is kept beside, renamed, for whoever wants to look.
	for _, u := range run.Unreadable {
		aside := u.File + ".unreadable"
		if err := os.Rename(u.File, aside); err != nil {
			return nil, fmt.Errorf("harness: resume: setting aside the unreadable point %s: %w", u, err)
		}
		run.Warnings = append(run.Warnings, fmt.Sprintf("point file %s could not be read (%s): kept as %s and measured again", filepath.Base(u.File), u.Reason, filepath.Base(aside)))
	}
	run.Unreadable = nil
	exp, err := ExperimentOf(run)
	if err != nil {
		return nil, fmt.Errorf("harness: resume: %s's experiment: %w", filepath.Join(dir, results.RunFile), err)
	}
	exp = exp.WithDefaults()
	if err := exp.Validate(); err != nil {
		return nil, fmt.Errorf("harness: resume: %w", err)
	}
	r := &runner{exp: exp, dir: dir, opt: opt, run: run}
	if err := r.resolve(); err != nil {
		return nil, err
	}
	for _, u := range run.Unavailable {
		r.unavailable[u.Config.Name] = u.Reason
	}
	for i := range pts {
		r.remember(&pts[i])
	}
	run.Finished, run.Interrupted = time.Time{}, false
	return r.execute(ctx, time.Now())
}

// ExperimentOf returns the experiment that run recorded (run.json's
// "experiment", which results keeps untyped), as stored: without defaults
// applied, not validated. Its errors are encoding/json's, unwrapped.
func ExperimentOf(run *results.Run) (Experiment, error) {
	b, err := json.Marshal(run.Experiment)
	if err != nil {
		return Experiment{}, err
	}
	var exp Experiment
	if err := json.Unmarshal(b, &exp); err != nil {
		return Experiment{}, err
	}
	return exp, nil
}

// runConfig is one configuration under one workload: what a point runs.
type runConfig struct {
	name  string
	cfg   Config
	wl    Workload
	model results.ModelConfig
	// bin is the server binary; commit and dirty its VCS stamp when it
	// is the configuration's own (Config.ServerBinary; "unknown" if it
	// has none), for its points' provenance.
	bin    string
	commit string
	dirty  bool
	// size is what it runs with (Experiment.Sizes), cpus the server CPUs
	// it is pinned to (Config.CPUs of the experiment's; empty: unpinned).
	size Size
	cpus string
	// workload is the workload's name in a run of several (its points'
	// WorkloadName), else empty.
	workload string
	// ratesFrom is the run name of the configuration whose capacity sets
	// the open-loop rates (Config.RatesFrom, under the same workload); the
	// configuration's own name otherwise.
	ratesFrom string
}

// runner is the state of one run.
type runner struct {
	exp  Experiment
	dir  string
	opt  Options
	run  *results.Run
	cfgs []runConfig
	prov results.Provenance
	// cpuWarning is set when the server and generator share the CPUs;
	// sweepWarning when a cores sweep has one count only.
	cpuWarning, sweepWarning string
	// poll is how the load generator's workers wait.
	poll loadgen.Poll

	stamps      map[string]stamp           // server binary → its VCS stamp, read once per run
	capacities  map[string]map[int]float64 // configuration → repetition → valid capacity (req/s)
	invalidCaps map[string]map[int]float64 // configuration → repetition → achieved rate of an invalid capacity point (req/s)
	probes      map[probeKey]*results.Point
	started     map[string]bool         // configurations that have run before
	beyondIn    map[string]map[int]bool // configuration → the repetitions whose capacity was beyond it
	unavailable map[string]string       // configuration → reason

	sp     *spawner
	srv    target
	srvFor string  // the configuration and repetition srv serves, for its warnings
	back   *server // srv's back end, for a chain configuration (Config.Backend)

	// timing is what the ceiling measurement took (zero if none ran).
	timing Timing
	// closing is closed when the last mechanisms point's counters are
	// (closeMechanisms); nil when none are being closed.
	closing chan struct{}

	sum      Summary
	begin    time.Time
	ran      int           // points that ran the load generator in this invocation
	ranTime  time.Duration // their total duration
	pointIdx int
	searches searchCount // for the ETA and the progress total: sum.Points counts a search at its most probes
}

// searchCount counts the latency-objective searches for the progress
// line: those planned and not yet done, and the probes of those done.
type searchCount struct{ left, done, probes int }

// resolve fixes what the experiment leaves automatic: the CPU split and
// the server binary; and expands configurations × workloads.
func (r *runner) resolve() error {
	r.stamps = map[string]stamp{}
	r.capacities = map[string]map[int]float64{}
	r.invalidCaps = map[string]map[int]float64{}
	r.probes = map[probeKey]*results.Point{}
	r.started = map[string]bool{}
	r.beyondIn = map[string]map[int]bool{}
	r.unavailable = map[string]string{}
	if r.exp.ServerCPUs == "" {
		cur, err := cpuset.Current()
		if err != nil {
			return fmt.Errorf("harness: %w", err)
		}
		if srv, _ := SplitCPUs(cur); len(srv) == 0 {
			r.cpuWarning = fmt.Sprintf("only %d CPU available (%s): the server and the load generator run unpinned on the same CPU, so the generator's work is in every measurement", len(cur), cur)
		}
	}
	// A cores sweep, whether Resolve expands it now or expanded it before
	// (the thesis resolves its parts first).
	if r.exp.Sweep == SweepCores || slices.ContainsFunc(r.exp.Configs, func(c Config) bool { return c.CPUs > 0 }) {
		if n := r.exp.serverCPUCount(); len(CoreCounts(n)) == 1 {
			r.sweepWarning = fmt.Sprintf("the cores sweep stops at %s: the server has %s here (server CPUs %s; the machine's CPUs are split between the server and the load generator), so there is no speed-up to measure; run it where the server gets 2 or more (--server-cpus, --load-cpus)",
				plural(n, "CPU", "CPUs"), plural(n, "CPU", "CPUs"), orAll(r.exp.ServerCPUs))
		}
	}
	var err error
	if r.exp, err = r.exp.Resolve(); err != nil {
		return err
	}
	if err := r.exp.Validate(); err != nil { // a sweep's configurations
		return err
	}
	if r.exp.ServerBinary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("harness: the server binary: %w", err)
		}
		r.exp.ServerBinary = exe
	}
	if _, err := os.Stat(r.exp.ServerBinary); err != nil {
		return fmt.Errorf("harness: the server binary: %w", err)
	}
	for _, c := range r.exp.Configs {
		if c.ServerBinary == "" {
			continue
		}
		if _, err := os.Stat(c.ServerBinary); err != nil {
			return fmt.Errorf("harness: the server binary of configuration %q: %w", c.Name, err)
		}
	}
	for _, w := range r.exp.Workloads {
		for _, c := range r.exp.Configs {
			if !w.runs(c.Name) {
				continue
			}
			name := r.exp.runName(c.Name, &w)
			ratesFrom := name
			if c.RatesFrom != "" {
				ratesFrom = r.exp.runName(c.RatesFrom, &w)
			}
			size := r.exp.Sizes[name]
			args := append(slices.Clone(c.Args), size.Args...)
			if n := size.GOMAXPROCS; n > 0 && c.overCap(&w) == "" {
				args = append(args, "--gomaxprocs", fmt.Sprint(n))
			}
			rc := runConfig{name: name, cfg: c, wl: w, bin: r.exp.ServerBinary, ratesFrom: ratesFrom, size: size, workload: w.Name,
				cpus:  r.exp.serverCPUsOf(&c),
				model: results.ModelConfig{Name: name, Model: c.Model, Args: args, Threads: size.Threads, Sizing: size.Rule}}
			if c.ServerBinary != "" {
				rc.bin = c.ServerBinary
				st := r.stampOf(c.ServerBinary)
				if rc.commit, rc.dirty = st.commit, st.dirty; !st.ok {
					rc.commit = "unknown"
				}
			}
			if len(r.exp.Workloads) == 1 {
				rc.workload = ""
			}
			r.cfgs = append(r.cfgs, rc)
		}
	}
	return nil
}

// stampOf returns binary's VCS stamp, reading it once per run (a binary
// may serve many configurations and workloads).
func (r *runner) stampOf(binary string) stamp {
	st, ok := r.stamps[binary]
	if !ok {
		st.commit, st.dirty, st.ok = vcsStamp(binary)
		r.stamps[binary] = st
	}
	return st
}

func (r *runner) runWarnings() []string {
	var ws []string
	for _, w := range []string{r.cpuWarning, r.sweepWarning} {
		if w != "" {
			ws = append(ws, w)
		}
	}
	if r.exp.LoadLimits.Relaxed() {
		ws = append(ws, fmt.Sprintf("the load generator's checks on its own health were relaxed (%+v): its verdicts do not vouch for it", r.exp.LoadLimits))
	}
	if r.exp.Repetitions < 5 {
		ws = append(ws, fmt.Sprintf("%d repetitions: reported figures need at least 5 for their confidence intervals", r.exp.Repetitions))
	}
	if set, err := cpuset.Parse(r.exp.ServerCPUs); err == nil && r.exp.MinServerCPUs > len(set) {
		ws = append(ws, fmt.Sprintf("the server has %s, and this profile's comparison needs at least %d: with one thread per CPU, a shared queue and partitioned ones are the same single queue; it measures, but shows nothing about dispersion until run with --server-cpus of %d or more (concbench theory shows the comparison at any c without a measurement)",
			plural(len(set), "CPU", "CPUs"), r.exp.MinServerCPUs, r.exp.MinServerCPUs))
	}
	if st := r.stampOf(r.exp.ServerBinary); !st.ok {
		ws = append(ws, fmt.Sprintf("the server binary %s carries no VCS stamp (built with -buildvcs=false, or outside a git checkout): the commit measured is unknown", r.exp.ServerBinary))
	}
	return ws
}

// remember records what an existing point tells later points: the
// configuration ran, its capacity, its probes and its SLO capacity.
func (r *runner) remember(p *results.Point) {
	if p.ServerInfo.PID != 0 { // a server started for it
		r.started[p.Config.Name] = true
	}
	if p.Kind == results.KindCapacity && p.Load != nil && slices.Contains(p.Load.Checks, loadgen.CheckCeiling) {
		if r.beyondIn[p.Config.Name] == nil {
			r.beyondIn[p.Config.Name] = map[int]bool{}
		}
		r.beyondIn[p.Config.Name][p.Repetition] = true
	}
	if p.Kind == results.KindCapacity && p.Status == results.StatusOK && p.Load != nil && p.Load.Valid && p.Load.AchievedRatePerS > 0 {
		if r.capacities[p.Config.Name] == nil {
			r.capacities[p.Config.Name] = map[int]float64{}
		}
		r.capacities[p.Config.Name][p.Repetition] = p.Load.AchievedRatePerS
	}
	if p.Kind == results.KindCapacity && p.Status == results.StatusOK && p.Load != nil && !p.Load.Valid && p.Load.AchievedRatePerS > 0 {
		if r.invalidCaps == nil {
			r.invalidCaps = map[string]map[int]float64{}
		}
		if r.invalidCaps[p.Config.Name] == nil {
			r.invalidCaps[p.Config.Name] = map[int]float64{}
		}
		r.invalidCaps[p.Config.Name][p.Repetition] = p.Load.AchievedRatePerS
	}
	switch p.Kind {
	case results.KindProbe:
		c := *p
		r.probes[probeKey{p.Config.Name, p.Repetition, p.Probe}] = &c
	}
}

// capacity returns the capacity the open points of repetition rep use:
// the median of the configuration's valid capacity measurements in
// repetitions 0..rep (see the package documentation), or 0 if there is
// none.
func (r *runner) capacity(name string, rep int) float64 {
	var xs []float64
	for k, v := range r.capacities[name] {
		if k <= rep {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	m, _ := mstats.Median(xs) // xs is not empty, and capacities are positive: no error
	return m
}

// execute runs every point not yet in the folder, in interleaved order.
func (r *runner) execute(ctx context.Context, now time.Time) (*Summary, error) {
	if err := r.startRun(now); err != nil {
		return nil, err
	}
	restore, err := r.placeGenerator()
	if err != nil {
		return nil, err
	}
	defer restore()
	if !r.opt.KeepKernelThreads {
		var unquiet func() bool
		r.prov.KernelThreads, unquiet = quietKernel()
		defer unquiet()
	}
	for _, kt := range r.prov.KernelThreads {
		if kt.Err != "" {
			r.run.Warnings = append(r.run.Warnings, fmt.Sprintf("kernel thread %s (pid %d) stalls a CPU for milliseconds at a fixed period (%s) and could not be given SCHED_IDLE for the run: %s; latency percentiles of short windows may be disturbed by it", kt.Name, kt.PID, kt.Why, kt.Err))
		}
	}
	if r.exp.Mechanisms > 0 {
		r.prov.Tracefs = MountTracefs()
		if r.prov.Tracefs != "" && r.opt.Progress != nil {
			fmt.Fprintf(r.opt.Progress, "mechanisms: %s\n", r.prov.Tracefs)
		}
	}
	r.prov.ServerGOMAXPROCS = r.commonGOMAXPROCS()
	r.run.Provenance = r.prov
	if err := results.WriteRun(r.dir, r.run); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}

	r.sp = newSpawner()
	defer r.sp.close()
	defer r.stopServer()
	defer r.waitMechanisms()
	r.ceilings(ctx)
	if err := results.WriteRun(r.dir, r.run); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	r.announce()

	loads := r.exp.loads()
	r.sum.Points = len(r.cfgs) * (r.exp.Repetitions*(len(loads)+len(r.exp.RatesFromSlowest)) + r.exp.Mechanisms*len(r.exp.RatesFromSlowest))
	searches := len(loads) > 0 && loads[0].kind == results.KindCapacity
	for _, rc := range r.cfgs {
		if searches && rc.wl.SLO != nil {
			// At most: a search that stops early gives back the rest.
			r.planSearches(r.exp.Repetitions)
		}
	}
	if err := r.runPlan(ctx, loads, searches); err != nil {
		return &r.sum, err
	}
	// The rates from the slowest configuration, once every capacity is in.
	if len(r.exp.RatesFromSlowest) > 0 && !r.sum.Interrupted {
		if err := r.runDerived(ctx); err != nil {
			return &r.sum, err
		}
	}
	// What is left of the budget, on the cells the planned points left
	// undecided.
	if r.exp.Budget > 0 && (len(r.exp.RatesFromSlowest) > 0 || r.exp.hasSLO()) && !r.sum.Interrupted {
		if err := r.extraRounds(ctx); err != nil {
			return &r.sum, err
		}
		if r.opt.Progress != nil {
			fmt.Fprintf(r.opt.Progress, "decisions: %s\n", budgetText(r.run.Decisions))
		}
	}
	r.stopServer()
	r.sum.Elapsed = time.Since(r.begin)
	if r.sum.Interrupted {
		r.run.Interrupted = true
	} else {
		r.run.Finished = time.Now().UTC()
	}
	if err := results.WriteRun(r.dir, r.run); err != nil {
		return &r.sum, fmt.Errorf("harness: %w", err)
	}
	return &r.sum, nil
}

// startRun starts the run at now: its provenance (a warning if a resumed
// run's commit differs), the CPU work's calibration if the experiment
// asks for one, and its experiment and configurations.
func (r *runner) startRun(now time.Time) error {
	r.begin = now
	r.sum.Dir = r.dir
	r.prov = provenance(r.stampOf(r.exp.ServerBinary), now)
	r.prov.ServerCPUs, r.prov.LoadCPUs = r.exp.ServerCPUs, r.exp.LoadCPUs
	if old := r.run.Provenance.Commit; old != "" && (old != r.prov.Commit || r.run.Provenance.Dirty || r.prov.Dirty) {
		r.run.Warnings = append(r.run.Warnings, fmt.Sprintf("resumed at %s with commit %s (dirty %t); earlier points were measured with %s (dirty %t): each point's provenance says which",
			now.UTC().Format(time.RFC3339), r.prov.Commit, r.prov.Dirty, old, r.run.Provenance.Dirty))
	}
	if r.exp.CalibrateOnce && r.exp.NsPerIter == 0 {
		ns, err := calibrateOn(r.exp.ServerCPUs)
		if err != nil {
			return fmt.Errorf("harness: %w", err)
		}
		r.exp.NsPerIter = ns
	}
	r.prov.NsPerIter = r.exp.NsPerIter
	r.run.Experiment = r.exp
	r.run.Configs = nil
	for _, rc := range r.cfgs {
		r.run.Configs = append(r.run.Configs, rc.model)
	}
	return nil
}

// announce prints the run's warnings and, once the harness has measured
// its own overheads, the run's estimated length, to Options.Progress.
func (r *runner) announce() {
	for _, w := range r.run.Warnings {
		if r.opt.Progress != nil {
			fmt.Fprintf(r.opt.Progress, "warning: %s\n", w)
		}
	}
	if r.timing.ServerStart > 0 && r.opt.Progress != nil {
		n, d := r.exp.Estimate(r.timing)
		fmt.Fprintf(r.opt.Progress, "estimated: up to %d points, about %s (%s per point beyond its windows, %s per server start, measured now)\n",
			n, d.Round(10*time.Second), r.timing.PointOverhead.Round(time.Millisecond), r.timing.ServerStart.Round(time.Millisecond))
	}
}

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

// point measures rc at load l in repetition rep, unless the folder has
// the point already, and writes it. Its error stops the run (the folder
// could not be written).
func (r *runner) point(rc *runConfig, l pointLoad, rep int) error {
	return r.pointAt(rc, r.newPoint(rc, l, rep), l.seedIdx, nil)
}

// pointAt measures p of rc (seedIdx: its load's, pointLoad) unless the
// folder has it already, and writes it; note, if set, ends its progress
// line with what it returns for the point (a probe's verdict).
func (r *runner) pointAt(rc *runConfig, p *results.Point, seedIdx int, note func(*results.Point) string) error {
	r.pointIdx++
	if results.HasPoint(r.dir, p) {
		r.sum.Skipped++
		return nil
	}
	t0 := time.Now()
	ranLoad := r.measure(rc, p, seedIdx)
	// The .hlog first: a point file is what marks the point as
	// done (HasPoint), so its log must exist by then.
	if err := results.WritePointHlog(r.dir, p); err != nil {
		p.Warnings = append(p.Warnings, err.Error())
	}
	if err := results.WritePoint(r.dir, p); err != nil {
		r.sum.Interrupted, r.run.Interrupted = true, true
		r.sum.Elapsed = time.Since(r.begin)
		results.WriteRun(r.dir, r.run) // best effort: the folder just failed a write
		return fmt.Errorf("harness: %w", err)
	}
	r.remember(p)
	if ranLoad {
		r.ran++
		r.ranTime += time.Since(t0)
	}
	r.count(p)
	r.progress(p, note)
	return nil
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

// newPoint returns the point of rc at load l in repetition rep, as yet
// unmeasured.
func (r *runner) newPoint(rc *runConfig, l pointLoad, rep int) *results.Point {
	p := &results.Point{
		Run:          r.run.ID,
		Config:       rc.model,
		Workload:     rc.wl.Workload,
		WorkloadName: rc.workload,
		Kind:         results.KindCapacity,
		Fraction:     1,
		Repetition:   rep,
		Provenance:   r.prov,
	}
	if rc.cfg.ServerBinary != "" {
		p.Provenance.Commit, p.Provenance.Dirty = rc.commit, rc.dirty
	}
	switch l.kind {
	case results.KindOpen:
		p.Kind, p.Fraction = results.KindOpen, l.fraction
	case results.KindRate, results.KindMechanisms:
		p.Kind, p.Fraction, p.OfferedRatePerS = l.kind, 0, l.rate
	case results.KindProbe:
		p.Kind, p.OfferedRatePerS, p.Probe, p.Fraction = results.KindProbe, l.rate, l.probe, 0
		if l.capacity > 0 {
			p.Fraction = l.rate / l.capacity
		}
	case results.KindSLO:
		p.Kind, p.Fraction = results.KindSLO, 0
	}
	return p
}

// stopServer stops the running server, if any; an unclean end becomes a
// run warning.
func (r *runner) stopServer() {
	defer r.stopBackend()
	if r.srv == nil {
		return
	}
	if err := r.srv.stop(); err != nil {
		r.run.Warnings = append(r.run.Warnings, r.srvFor+": "+err.Error())
	}
	r.srv = nil
}

// stopBackend stops the running back end of a chain, if any; an unclean
// end becomes a run warning.
func (r *runner) stopBackend() {
	if r.back == nil {
		return
	}
	if err := r.back.stop(); err != nil {
		r.run.Warnings = append(r.run.Warnings, r.srvFor+" (back end): "+err.Error())
	}
	r.back = nil
}

// measure measures point p of rc (seedIdx: its load's, pointLoad) and
// fills in its outcome. It reports whether it ran the load generator.
func (r *runner) measure(rc *runConfig, p *results.Point, seedIdx int) bool {
	p.StartTime = time.Now().UTC()
	p.Provenance.Time = p.StartTime
	if r.cpuWarning != "" {
		p.Warnings = append(p.Warnings, r.cpuWarning)
	}
	if !r.runnable(rc, p) {
		return false
	}
	srv := r.serverFor(rc, p)
	if srv == nil {
		return false
	}
	p.ServerInfo = srv.describe()
	p.Provenance.ServerCPUs = p.ServerInfo.CPUs
	p.Provenance.ServerGOMAXPROCS = p.ServerInfo.GOMAXPROCS

	// The idle connections' control: held through the whole point by a
	// server of their own, opened before the load's connections.
	if n := rc.wl.Idle; n > 0 {
		ic, err := r.openIdle(rc, n)
		if err != nil {
			p.Status, p.Failure, p.FailedBy = results.StatusFailed, "idle connections: "+err.Error(), results.FailedLoad
			return false
		}
		defer func() {
			if err := ic.close(); err != nil {
				p.Warnings = append(p.Warnings, "the idle connections' server: "+err.Error())
			}
		}()
	}

	lc := r.loadConfig(rc, p, srv.address(), seedIdx)
	edges := r.watchWindow(&lc, p, srv)
	res, err := r.runGenerator(srv, lc)
	w := edges.finish()
	if edges.ms != nil {
		r.closeMechanisms(edges.ms)
	}
	if res != nil {
		res.Config.OnWindow = nil
		p.Load = res
	}
	r.outcome(p, srv, &lc, w, err, edges.ctlErr)
	return true
}

// runnable reports whether point p of rc can be measured, recording in
// p why not: the configuration is unavailable here, over its model's
// limit, or (an open point) has no capacity to take its fraction of. It
// sets an open point's offered rate.
func (r *runner) runnable(rc *runConfig, p *results.Point) bool {
	if reason, ok := r.unavailable[rc.name]; ok {
		p.Status, p.Failure = results.StatusUnavailable, reason
		return false
	}
	if reason := rc.cfg.overCap(&rc.wl); reason != "" {
		// Over the model's own limit (thread per connection's thread cap):
		// not run, and recorded once for the configuration, like a model
		// the machine lacks, with the model's reason.
		r.markUnavailable(rc, reason, p)
		return false
	}
	if p.Kind == results.KindOpen {
		capRate := r.capacity(rc.ratesFrom, p.Repetition)
		if capRate <= 0 {
			p.Status, p.FailedBy = results.StatusFailed, results.FailedNoRate
			p.Failure = fmt.Sprintf("no valid capacity measurement of %s in repetitions 0..%d to take %g of", rc.ratesFrom, p.Repetition, p.Fraction)
			return false
		}
		p.OfferedRatePerS = p.Fraction * capRate
	}
	return true
}

// serverFor returns the server that serves rc's point p, starting it
// (after a chain's back end) if none is running; nil, with p's outcome
// recorded, if it could not be started. A running server serves this
// configuration and repetition: execute stops it after each
// configuration's points.
func (r *runner) serverFor(rc *runConfig, p *results.Point) target {
	if r.srv != nil && r.srv.process().exited() {
		r.stopServer()
	}
	if r.srv != nil {
		return r.srv
	}
	if rc.cfg.Model == NginxModel {
		return r.startNginx(rc, p)
	}
	if rc.cfg.Model == AsioModel {
		return r.startAsio(rc, p)
	}
	args := serveArgs(rc)
	var cal []string
	if r.exp.NsPerIter > 0 {
		cal = []string{"--ns-per-iter", strconv.FormatFloat(r.exp.NsPerIter, 'g', -1, 64)}
		args = append(args, cal...)
	}
	if r.opt.ServerAddr != "" {
		// The measured server (the front end of a chain) listens where
		// the agents can reach it; a chain's back end stays on loopback.
		args = append(args, "--addr", r.opt.ServerAddr)
	}
	var backArgs []string
	if b := rc.cfg.Backend; b != nil {
		backArgs = append(backendArgs(b, r.exp.ServerCPUs), cal...)
	}
	srv, back, err := startChain(r.sp, rc.bin, args, rc.cfg.Backend, backArgs, rc.wl.Protocol)
	r.back = back
	if err != nil {
		r.stopBackend()
		r.notStarted(rc, p, err)
		return nil
	}
	return r.serving(rc, p, srv)
}

// serving records srv as the server of rc's points from p on, and
// returns it.
func (r *runner) serving(rc *runConfig, p *results.Point, srv target) target {
	r.srv, r.srvFor = srv, fmt.Sprintf("%s repetition %d", rc.name, p.Repetition)
	r.started[rc.name] = true
	return srv
}

// notStarted records in p that rc's server did not start (err): the
// configuration is unavailable here if it never ran (the model is not
// in this binary, the machine lacks what it needs, nginx is not
// installed), for the reason the server gave; the point failed
// otherwise.
func (r *runner) notStarted(rc *runConfig, p *results.Point, err error) {
	if !r.started[rc.name] {
		r.markUnavailable(rc, strings.TrimPrefix(err.Error(), ErrNotStarted.Error()+": "), p)
		return
	}
	p.Status, p.Failure, p.FailedBy = results.StatusFailed, err.Error(), results.FailedServer
}

// loadConfig returns the load generator's configuration for point p of
// rc against the server at addr (seedIdx: its load's, pointLoad).
func (r *runner) loadConfig(rc *runConfig, p *results.Point, addr string, seedIdx int) loadgen.Config {
	lc, _ := rc.wl.LoadConfig() // validated
	lc.Addr = addr
	lc.Workers, lc.WorkerCPUs = r.exp.LoadWorkers, r.exp.LoadWorkerCPUs
	lc.Warmup = time.Duration(r.exp.Warmup)
	lc.Duration = time.Duration(r.exp.Duration)
	switch p.Kind {
	case results.KindProbe:
		lc.Warmup, lc.Duration = time.Duration(r.exp.SLOWarmup), time.Duration(r.exp.SLODuration)
	case results.KindMechanisms:
		lc.Warmup, lc.Duration = time.Duration(r.exp.MechanismsWarmup), time.Duration(r.exp.MechanismsDuration)
	}
	lc.Verify = verifyFor(&rc.cfg)
	lc.Seed = r.seed(p.Repetition, seedIdx)
	lc.Poll = r.poll
	lc.Limits = r.exp.LoadLimits
	lc.Throttle = r.opt.throttle
	if p.Kind == results.KindCapacity {
		lc.Closed, lc.Rate = true, 0
		lc.Outstanding = r.exp.CapacityOutstanding * lc.Depth
	} else {
		lc.Rate = p.OfferedRatePerS
	}
	if p.Kind == results.KindRate || p.Kind == results.KindOpen {
		// Beside the window's p99, the median of its intervals' p99s
		// (loadgen.IntervalTail; results.LatencyP99Intervals).
		lc.TailInterval = loadgen.DefaultTailInterval
	}
	return lc
}

// windowEdges is what a point reads of the server at the edges of its
// measured window (loadgen.Config.OnWindow): at each edge the run-queue
// waits, the perf counters and the server's snapshot, in mirrored
// order, so that the snapshots' interval lies within the others'; after
// the end, the server's threads and descriptors (readProc).
type windowEdges struct {
	w               window
	ps              *perfSet // nil when perf is unavailable (perfUnavailable says why)
	perfUnavailable string
	perf0, perf1    results.PerfCounters
	ctlErr, perfErr error
	// ms are a mechanisms point's counters (nil for the other kinds, and
	// when the kernel refused them: mechUnavailable says why).
	ms              *mechSet
	mechUnavailable string
	mech0, mech1    mechSample
	mechErr         error
}

// watchWindow opens the perf counters on srv — and, for a mechanisms
// point, its tracepoint counters —, reads it before the load connects
// (the begin of the connections it accepts), and sets lc.OnWindow to
// read the edges of point p's window.
func (r *runner) watchWindow(lc *loadgen.Config, p *results.Point, srv target) *windowEdges {
	r.waitMechanisms() // the last mechanisms point's counters are closed before any point's load
	e := &windowEdges{}
	pids := srv.pids()
	e.ps, e.perfUnavailable = openPerf(pids...)
	if p.Kind == results.KindMechanisms {
		e.ms, e.mechUnavailable = openMechanisms(pids, srv.describe().CPUs)
	}
	e.w.begin, e.ctlErr = srv.read(edgeBegin)
	lc.OnWindow = func(start bool) {
		var err, perr, merr error
		if start {
			e.w.startRunQueue(pids...)
			if e.ps != nil {
				e.perf0, perr = e.ps.read()
			}
			if e.ms != nil {
				e.mech0, merr = e.ms.read(true)
			}
			e.w.before, err = srv.read(edgeStart)
			if r.opt.onWindow != nil {
				r.opt.onWindow(p, pids[0])
			}
		} else {
			e.w.after, err = srv.read(edgeEnd)
			if e.ms != nil {
				e.mech1, merr = e.ms.read(false)
			}
			if e.ps != nil {
				e.perf1, perr = e.ps.read()
			}
			e.w.endRunQueue(pids...)
			e.w.readProc(pids...)
		}
		e.ctlErr = errors.Join(e.ctlErr, err)
		e.perfErr = errors.Join(e.perfErr, perr)
		e.mechErr = errors.Join(e.mechErr, merr)
	}
	return e
}

// finish closes the perf counters and returns the window read, with the
// counters' differences or why there are none; a mechanisms point's
// counters are the caller's to close (runner.closeMechanisms).
func (e *windowEdges) finish() *window {
	var read bool
	if e.w.perfUnavailable, read = countersUnavailable(e.ps != nil, e.perfUnavailable, e.perfErr); read {
		e.w.perf = &results.PerfCounters{
			ContextSwitches: e.perf1.ContextSwitches - min(e.perf0.ContextSwitches, e.perf1.ContextSwitches),
			CPUMigrations:   e.perf1.CPUMigrations - min(e.perf0.CPUMigrations, e.perf1.CPUMigrations),
			TaskClockNs:     e.perf1.TaskClockNs - min(e.perf0.TaskClockNs, e.perf1.TaskClockNs),
		}
	}
	if e.ps != nil {
		e.ps.close()
	}
	if e.w.mechUnavailable, read = countersUnavailable(e.ms != nil, e.mechUnavailable, e.mechErr); read {
		e.w.mechanisms = e.ms.counts(e.mech0, e.mech1)
	}
	return &e.w
}

// countersUnavailable says why a window has no counters of one kind:
// why, when they were not opened, or the error in reading them at an
// edge; read is true when they were opened and read at both edges. The
// perf counters and a mechanisms point's tracepoint counters end by
// this one rule.
func countersUnavailable(opened bool, why string, err error) (_ string, read bool) {
	switch {
	case !opened:
		return why, false
	case err != nil:
		return err.Error(), false
	}
	return "", true
}

// closeMechanisms closes a mechanisms point's counters on a goroutine of
// its own, so that the kernel's waits in closing them (mechPlan's note:
// an RCU grace period per tracepoint) overlap the server's stop and the
// next one's start, which no window measures; waitMechanisms waits for
// it before any point's load starts, and at the run's end.
func (r *runner) closeMechanisms(ms *mechSet) {
	r.waitMechanisms()
	done := make(chan struct{})
	r.closing = done
	go func() {
		defer close(done)
		ms.close()
	}()
}

// waitMechanisms waits until the last mechanisms point's counters are
// closed: until then every system call of the machine is slowed.
func (r *runner) waitMechanisms() {
	if r.closing != nil {
		<-r.closing
		r.closing = nil
	}
}

// runGenerator runs the load generator with lc against srv. It stops at
// once if the server dies; an interrupt of the run (ctx) waits for the
// point instead. A point that outlives its schedule by far (watchdog) is
// stopped and fails, so that no point can hold up a run, or CI, for
// good: every request times out after lc.Timeout and every control call
// after controlTimeout, so only a fault of the machine (a VM paused and
// resumed) or of the generator could get there.
func (r *runner) runGenerator(srv target, lc loadgen.Config) (*loadgen.Result, error) {
	pctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-srv.process().done:
			cancel()
		case <-pctx.Done():
		}
	}()
	limit := lc.Warmup + lc.Duration + max(lc.Timeout, loadgen.DefaultTimeout) + 2*controlTimeout + pointGrace
	var overran atomic.Bool
	watchdog := time.AfterFunc(limit, func() {
		overran.Store(true)
		cancel()
	})
	runLoad := loadgen.Run
	if r.opt.Load != nil {
		runLoad = r.opt.Load
	}
	res, err := runLoad(pctx, lc)
	watchdog.Stop()
	cancel()
	if err != nil && overran.Load() {
		err = fmt.Errorf("the point did not finish within %v (warm-up, window, the response timeout, two control calls and %v): stopped (%w)", limit, pointGrace, err)
	}
	return res, err
}

// outcome records point p's outcome on srv: failed if the server
// exited, the load generator failed (err) or the control channel did
// (ctlErr, or a snapshot of the window w missing); else measured, with
// the server's cost over w, the queueing model's prediction for lc and
// the generator's ceiling checked.
func (r *runner) outcome(p *results.Point, srv target, lc *loadgen.Config, w *window, err, ctlErr error) {
	switch pr := srv.process(); {
	case pr.exited():
		p.Status, p.FailedBy = results.StatusFailed, results.FailedServer
		p.Failure = fmt.Sprintf("the server (pid %d) exited during the point: %s; its stderr ends: %s", pr.pid, exitText(pr.waitErr), pr.stderr.String())
		srv.release() // reaped already; the next point starts another
		r.srv = nil
		r.stopBackend()
	case err != nil:
		p.Status, p.Failure, p.FailedBy = results.StatusFailed, "load generator: "+err.Error(), results.FailedLoad
	case ctlErr != nil || w.before == nil || w.after == nil:
		p.Status, p.FailedBy = results.StatusFailed, results.FailedServer
		p.Failure = fmt.Sprintf("control channel: %v", ctlErr)
		if ctlErr == nil {
			p.Failure = "control channel: the window's snapshots were not taken"
		}
		r.stopServer() // its control channel may be out of step
	default:
		p.Status = results.StatusOK
		p.Server = w.cost()
		p.Warnings = append(p.Warnings, srv.amend(&p.Server)...)
		if b, ok := results.Balance(p.Server.PerThread); ok {
			p.Server.Balance = &b
		}
		for _, e := range append(slices.Clone(w.before.Errors), w.after.Errors...) {
			p.Warnings = append(p.Warnings, "server snapshot: "+e)
		}
		if p.Kind == results.KindMechanisms {
			// Its costs and latency are not reported: no allocation
			// warning, no ideal.
			r.checkCeiling(p)
			return
		}
		if p.Server.Requests < 10_000 && p.Server.Foreign == "" {
			p.Warnings = append(p.Warnings, fmt.Sprintf("the window has only %d requests: runtime/metrics counts allocations a span at a time, so allocations per request are coarse below ~10000", p.Server.Requests))
		}
		switch {
		case p.Kind == results.KindCapacity:
		case p.Server.Foreign != "":
			p.Warnings = append(p.Warnings, "no M/M/c ideal: "+p.Server.Foreign+" does none of the workload's CPU work")
		default:
			p.Theory, p.Warnings = theory(lc, srv.describe(), p.OfferedRatePerS, p.Warnings)
		}
		r.checkCeiling(p)
	}
}

// markUnavailable records rc as unavailable for reason — in the run's
// Unavailable list, written at once, and for its later points — and p as
// unavailable.
func (r *runner) markUnavailable(rc *runConfig, reason string, p *results.Point) {
	r.unavailable[rc.name] = reason
	r.run.Unavailable = append(r.run.Unavailable, results.Unavailable{Config: rc.model, Reason: reason})
	if werr := results.WriteRun(r.dir, r.run); werr != nil {
		p.Warnings = append(p.Warnings, "run.json: "+werr.Error())
	}
	p.Status, p.Failure = results.StatusUnavailable, reason
}

// theory returns the M/M/c ideal for a point offered rate req/s with the
// load configuration lc against a server described by info: c is the
// CPUs the server may run Go code on (its affinity, at most GOMAXPROCS)
// and at most its threads; the service time is the mean CPU work.
func theory(lc *loadgen.Config, info models.Info, rate float64, warns []string) (*results.Theory, []string) {
	if lc.Block.Mean() > 0 {
		return nil, append(warns, "no M/M/c ideal: the workload has blocking work, so the number of servers a request can use is not the number of CPUs")
	}
	if lc.CPU.Mean() <= 0 {
		return nil, append(warns, "no M/M/c ideal: the workload has no CPU work (the ideal would be 0)")
	}
	c := info.NumCPU
	if set, err := cpuset.Parse(info.CPUs); err == nil && len(set) > 0 {
		c = len(set)
	}
	if info.GOMAXPROCS > 0 {
		c = min(c, info.GOMAXPROCS)
	}
	if info.Threads > 0 {
		c = min(c, info.Threads)
	}
	if lc.CPU.Kind != loadgen.DistExp {
		warns = append(warns, fmt.Sprintf("the M/M/c ideal assumes exponential service, but the CPU work is %s: it overstates an ideal server's queueing", lc.CPU.Kind))
	}
	t := results.MMc(max(c, 1), lc.CPU.Mean(), rate)
	return &t, warns
}

// count adds p's outcome to the summary.
func (r *runner) count(p *results.Point) {
	switch {
	case p.Kind == results.KindSLO && p.Status == results.StatusOK:
		if p.SLO != nil && p.SLO.Invalid != "" {
			r.sum.Invalid++
		} else {
			r.sum.OK++
		}
	case p.Status == results.StatusUnavailable:
		r.sum.Unavailable++
	case p.Status == results.StatusFailed:
		r.sum.Failed++
	case p.Load != nil && p.Load.Valid:
		r.sum.OK++
	default:
		r.sum.Invalid++
	}
}

// progress writes p's progress line, with what note (if set) returns for
// p at its end.
func (r *runner) progress(p *results.Point, note func(*results.Point) string) {
	if r.opt.Progress == nil {
		return
	}
	now := time.Now()
	elapsed := now.Sub(r.begin)
	eta := "?"
	if d, ok := r.eta(now); ok {
		eta = fmtDuration(d)
	}
	what := "capacity"
	switch p.Kind {
	case results.KindOpen:
		what = fmt.Sprintf("open %.2f", p.Fraction)
		if p.OfferedRatePerS > 0 {
			what += fmt.Sprintf(" (%.0f req/s)", p.OfferedRatePerS)
		}
	case results.KindRate:
		what = fmt.Sprintf("rate %.0f req/s", p.OfferedRatePerS)
	case results.KindMechanisms:
		what = fmt.Sprintf("mechanisms %.0f req/s", p.OfferedRatePerS)
		if note == nil {
			note = mechanismsNote
		}
	case results.KindProbe:
		what = fmt.Sprintf("slo probe %d at %.0f req/s", p.Probe, p.OfferedRatePerS)
	case results.KindSLO:
		what = "slo"
		if p.SLO != nil {
			what += " (" + p.SLO.Objective() + ")"
		}
	}
	var outcome string
	switch {
	case p.Status != results.StatusOK:
		outcome = strings.ToUpper(string(p.Status)) + ": " + firstLine(p.Failure)
	case p.Kind == results.KindSLO:
		s := p.SLO
		outcome = fmt.Sprintf("%.0f req/s, bracket [%.0f, %.0f) of capacity %.0f, %d probes", s.RatePerS, s.LoPerS, s.HiPerS, s.CapacityPerS, s.Probes)
		if s.Reason != "" {
			outcome += ": " + s.Reason
		}
		if s.Invalid != "" {
			outcome += ", INVALID: " + s.Invalid
		}
	default:
		l := p.Load
		outcome = fmt.Sprintf("%.0f req/s, p99 %s, %.2f ctxsw/req, %.1f µs CPU/req", l.AchievedRatePerS,
			loadgen.FormatNs(l.Latency.P99Ns), p.Server.CtxswPerRequest, p.Server.CPUNsPerRequest/1e3)
		if !l.Valid {
			outcome += ", INVALID: " + strings.Join(l.Reasons, "; ")
		}
	}
	if note != nil {
		outcome += " — " + note(p)
	}
	fmt.Fprintf(r.opt.Progress, "[%d/%s] %s, ETA %s | rep %d %s %s: %s\n",
		r.pointIdx, r.pointsExpected(), fmtDuration(elapsed), eta, p.Repetition, p.Config.Name, what, outcome)
}

// pointsLeft is how many points the run is expected to take after the
// current one: sum.Points counts each search not yet done at its most
// probes (about twice what a search takes), so those are counted at the
// mean probes of the searches done, or before any is done at the probes
// planned.
func (r *runner) pointsLeft() float64 {
	left := float64(r.sum.Points - r.pointIdx)
	if c := r.searches; c.left > 0 {
		mean := float64(r.exp.SLOProbes)
		if c.done > 0 {
			mean = float64(c.probes) / float64(c.done)
		}
		left -= float64(c.left) * (float64(r.mostProbes()) - mean)
	}
	return max(left, 0)
}

// pointsExpected is the progress line's total: exact once no search is
// left to shorten it, an estimate ("~") before.
func (r *runner) pointsExpected() string {
	if r.searches.left == 0 {
		return strconv.Itoa(r.sum.Points)
	}
	return "~" + strconv.Itoa(r.pointIdx+int(math.Round(r.pointsLeft())))
}

// eta estimates how long the run has left at now: the points left
// (pointsLeft) at the mean time of those run so far; in a run with a
// budget, no less than what is left of it, which extra rounds spend on
// the cells still undecided. False before any point ran.
func (r *runner) eta(now time.Time) (time.Duration, bool) {
	if r.ran == 0 {
		return 0, false
	}
	d := time.Duration(r.pointsLeft() * float64(r.ranTime) / float64(r.ran))
	if r.exp.Budget > 0 {
		d = max(d, r.deadline().Sub(now))
	}
	return d, true
}

// deadline is when the run's budget ends: extra rounds start only while
// they fit before it.
func (r *runner) deadline() time.Time { return r.begin.Add(time.Duration(r.exp.Budget)) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// fmtDuration formats d as m:ss (or h:mm:ss).
func fmtDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
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

// plural returns "n one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
