package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/ktrace"
	"concbench/loadgen"
	"concbench/results"
	"concbench/stats"
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
	quota  *cpuQuota // the servers' CPU quota (Experiment.ServerCPUQuota); nil for none
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
	return stats.MedianOf(xs) // xs is not empty: never NaN
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
		r.prov.Tracefs = ktrace.MountTracefs()
		if r.prov.Tracefs != "" && r.opt.Progress != nil {
			fmt.Fprintf(r.opt.Progress, "mechanisms: %s\n", r.prov.Tracefs)
		}
	}
	if share := r.exp.ServerCPUQuota; share > 0 {
		if r.quota, err = newCPUQuota(share); err != nil {
			return nil, err
		}
		defer r.quota.close()
		r.prov.ServerCPUQuota = r.quota.desc
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
