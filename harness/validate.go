package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/monoclock"
	"concbench/loadgen"
	"concbench/models/registry"
	"concbench/results"
	"concbench/service"
)

// ValidateOptions configure Validate; a zero field means its default.
type ValidateOptions struct {
	// Binary is the concbench executable that serves; default the running
	// one (os.Executable).
	Binary string
	// Model is the server's model, a row of the model registry that
	// chainModels knows: "leaderfollowers" (default; its threads share
	// one handle set, one queue: M/G/c) or "partitioned" (each thread
	// owns its connections: c × M/G/1). Threads is c, the server's
	// threads (default 1); more than one needs c + 1 CPUs.
	Model   string
	Threads int
	// KeepKernelThreads leaves the kernel threads that stall a CPU
	// periodically as they are (Options.KeepKernelThreads).
	KeepKernelThreads bool
	// ServerCPUs and LoadCPUs pin the server (its Threads threads) and
	// the load generator (one busy-polling worker); default the first
	// Threads CPUs of this process's affinity and the next one.
	ServerCPUs, LoadCPUs string
	// Work lists the CPU-work distributions, "exp" (M/M/1) and "fixed"
	// (M/D/1); default both. WorkNs is the asked mean; default 200 µs.
	Work   []string
	WorkNs float64
	// Rhos are the target utilizations; default 0.3, 0.5, 0.7.
	Rhos []float64
	// Warmup and Duration are each experiment's; default 1 s and 12 s
	// divided by Threads (the same number of requests).
	Warmup, Duration time.Duration
	// FloorRate and FloorDuration are the floor's run (zero work):
	// default 300/s for 4 s.
	FloorRate     float64
	FloorDuration time.Duration
	// Conns is the generator's connections; default 16.
	Conns int
	// Tolerance and MaxJudgedRho are the verdict's bounds; default 0.10
	// and 0.7.
	Tolerance, MaxJudgedRho float64
	// Seed seeds the schedules and the simulations.
	Seed uint64
	// Limits are the load generator's limits on its own health (tests
	// relax them).
	Limits loadgen.Limits
	// Progress, if set, gets a line per experiment.
	Progress io.Writer
}

// Defaults of ValidateOptions.
const (
	DefaultValidateWorkNs   = 200e3
	DefaultValidateDuration = 12 * time.Second
)

func (o ValidateOptions) withDefaults() ValidateOptions {
	if len(o.Work) == 0 {
		o.Work = []string{"exp", "fixed"}
	}
	o.WorkNs = cmp.Or(o.WorkNs, DefaultValidateWorkNs)
	if len(o.Rhos) == 0 {
		o.Rhos = []float64{0.3, 0.5, 0.7}
	}
	o.Warmup = cmp.Or(o.Warmup, time.Second)
	o.Model = cmp.Or(o.Model, "leaderfollowers")
	o.Threads = cmp.Or(o.Threads, 1)
	if o.Duration == 0 && o.Threads > 0 {
		o.Duration = DefaultValidateDuration / time.Duration(o.Threads)
	}
	o.FloorRate = cmp.Or(o.FloorRate, 300)
	o.FloorDuration = cmp.Or(o.FloorDuration, 4*time.Second)
	o.Conns = cmp.Or(o.Conns, 16)
	o.Tolerance = cmp.Or(o.Tolerance, 0.10)
	o.MaxJudgedRho = cmp.Or(o.MaxJudgedRho, 0.7)
	return o
}

// chainModels are the models Validate can judge, and whether each
// partitions its connections among its threads (c × M/G/1) rather than
// sharing one queue (M/G/c). A model must be in this build's registry
// too: the partitioned server plugs in by its row, with its pool's size
// given by --threads.
var chainModels = map[string]bool{"leaderfollowers": false, "partitioned": true}

// MaxValidateThreads is the most server threads Validate accepts.
const MaxValidateThreads = 64

// chainModel checks the model o names: one chainModels knows, present in
// the registry and sized by --threads. It returns whether it is
// partitioned.
func (o ValidateOptions) chainModel() (partitioned bool, err error) {
	partitioned, known := chainModels[o.Model]
	if !known {
		names := slices.Sorted(maps.Keys(chainModels))
		return false, fmt.Errorf("validate: model %q has no queueing model to judge it by (accepted: %s)", o.Model, strings.Join(names, ", "))
	}
	m, ok := registry.Lookup(o.Model)
	if !ok {
		return false, fmt.Errorf("validate: model %s not available: this build's model registry has no row %q (available: %s)", o.Model, o.Model, strings.Join(availableChainModels(), ", "))
	}
	if m.Sizing.Kind != registry.PoolThreads {
		return false, fmt.Errorf("validate: model %s is not sized by --threads, which the validation sets", o.Model)
	}
	return partitioned, nil
}

// availableChainModels returns the chainModels in this build's registry.
func availableChainModels() []string {
	var names []string
	for _, n := range slices.Sorted(maps.Keys(chainModels)) {
		if _, ok := registry.Lookup(n); ok {
			names = append(names, n)
		}
	}
	return names
}

func (o ValidateOptions) validate() error {
	if _, err := o.chainModel(); err != nil {
		return err
	}
	if o.Threads < 1 || o.Threads > MaxValidateThreads {
		return fmt.Errorf("validate: threads %d out of range (accepted: 1..%d)", o.Threads, MaxValidateThreads)
	}
	for _, w := range o.Work {
		if w != "exp" && w != "fixed" {
			return fmt.Errorf("validate: work %q unknown (accepted: exp, fixed)", w)
		}
	}
	for _, r := range o.Rhos {
		if !(r > 0 && r < 1) {
			return fmt.Errorf("validate: utilization %g out of range (accepted: 0 < ρ < 1)", r)
		}
	}
	switch {
	case !(o.WorkNs >= 1e3 && o.WorkNs <= 100e6):
		return fmt.Errorf("validate: work %v out of range (accepted: 1µs..100ms)", time.Duration(o.WorkNs))
	case o.Duration < 100*time.Millisecond || o.FloorDuration < 100*time.Millisecond:
		return fmt.Errorf("validate: duration %v or floor duration %v too short (accepted: ≥ 100ms)", o.Duration, o.FloorDuration)
	case o.Warmup < loadgen.MinWarmup:
		return fmt.Errorf("validate: warm-up %v too short (accepted: ≥ %v)", o.Warmup, loadgen.MinWarmup)
	case !(o.FloorRate > 0 && o.FloorRate <= 10000):
		return fmt.Errorf("validate: floor rate %g out of range (accepted: 0 < rate ≤ 10000/s)", o.FloorRate)
	case !(o.Tolerance > 0 && o.Tolerance < 1):
		return fmt.Errorf("validate: tolerance %g out of range (accepted: 0 < t < 1)", o.Tolerance)
	case o.Conns < 1 || o.Conns > 1024:
		return fmt.Errorf("validate: conns %d out of range (accepted: 1..1024)", o.Conns)
	}
	// Each run's requests, as chainRun sizes the server's trace: the
	// floor, the closed loop (at most c per mean work), each experiment.
	type run struct {
		rate float64
		d    time.Duration
	}
	c := float64(o.Threads)
	runs := []run{{o.FloorRate, o.FloorDuration}, {c * 1e9 / o.WorkNs, min(o.FloorDuration, o.Duration)}}
	for _, r := range o.Rhos {
		runs = append(runs, run{r * c * 1e9 / o.WorkNs, o.Duration})
	}
	for _, r := range runs {
		if n := r.rate * (o.Warmup + r.d).Seconds() * 1.3; n > service.MaxTrace-2000 {
			return fmt.Errorf("validate: %.0f requests/s for %v would overflow the server's trace (%d requests): shorten the duration or lengthen the work", r.rate, o.Warmup+r.d, service.MaxTrace)
		}
	}
	return nil
}

// Validate runs the measurement chain's validation (concbench validate):
// the floor (zero work at a low rate), then for each work distribution and
// target utilization an open-loop Poisson run against the model (default
// Leader/Followers) with Threads threads pinned to as many CPUs, the
// generator busy-polling on another, both tracing every request
// (concbench serve --trace, loadgen.Config.Trace); each run is joined,
// decomposed and judged against the queue on the effective service time
// with its measured inputs — M/G/1 with one thread, M/G/c with c sharing
// a queue, c × M/G/1 with c partitioned — beside the plain M/G/c
// (results.AnalyzeChain). A fresh server serves each run. It returns an
// error only when the validation could not run at all (no server, a bad
// option, a model this build lacks, fewer than Threads + 1 CPUs); a run
// that fails is an experiment that is not validated, with the reason.
func Validate(ctx context.Context, opt ValidateOptions) (*results.Validation, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if opt.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("validate: the server binary: %w", err)
		}
		opt.Binary = exe
	}
	cur, err := cpuset.Current()
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if err := placeChainCPUs(&opt, cur); err != nil {
		return nil, err
	}
	prevProcs := runtime.GOMAXPROCS(2) // the worker and the rest (see run.go)
	defer func() {
		runtime.GOMAXPROCS(prevProcs)
		cpuset.Pin(0, cur)
	}()

	v := newValidation(&opt, t0, len(cur))
	if !opt.KeepKernelThreads {
		var unquiet func() bool
		v.Provenance.KernelThreads, unquiet = quietKernel()
		defer unquiet()
		for _, kt := range v.Provenance.KernelThreads {
			if kt.Err != "" {
				v.Notes = append(v.Notes, fmt.Sprintf("kernel thread %s (pid %d) stalls a CPU for milliseconds at a fixed period (%s) and could not be given SCHED_IDLE: %s", kt.Name, kt.PID, kt.Why, kt.Err))
			}
		}
	}
	v.Partitioned, _ = opt.chainModel()
	sp := newSpawner()
	defer sp.close()
	if err := validateFloor(ctx, sp, &opt, v); err != nil {
		return nil, err
	}
	validateClosed(ctx, sp, &opt, v)
	for i, work := range opt.Work {
		for j, rho := range opt.Rhos {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			v.Experiments = append(v.Experiments, validateRun(ctx, sp, &opt, v, work, rho, opt.Seed+uint64(100*(i+1)+j)))
		}
	}
	v.Judge()
	v.DurationNs = int64(time.Since(t0))
	return v, nil
}

// progress writes a line of progress to o.Progress, if set.
func (o ValidateOptions) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// placeChainCPUs chooses the server's and the generator's CPUs among
// cur, this process's, where o does not name them (the first Threads for
// the server, the next for the generator), checks that they are disjoint
// and that the server has a CPU per thread, and pins this process, the
// generator, to its own.
func placeChainCPUs(o *ValidateOptions, cur cpuset.Set) error {
	c := o.Threads
	if o.ServerCPUs == "" || o.LoadCPUs == "" {
		if len(cur) < c+1 {
			return fmt.Errorf("validate: %s %d CPUs (%d for the server, one for the busy-polling load generator); this process may use %d (%s)",
				plural(c, "server thread needs", "server threads need"), c+1, c, len(cur), cur)
		}
		if o.ServerCPUs == "" {
			o.ServerCPUs = cur[:c].String()
		}
		if o.LoadCPUs == "" {
			o.LoadCPUs = cur[c : c+1].String()
		}
	}
	if err := disjoint(o.ServerCPUs, o.LoadCPUs); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	if srv, err := cpuset.Parse(o.ServerCPUs); err == nil && len(srv) < c {
		return fmt.Errorf("validate: the server's CPUs %s are %d for %d threads (accepted: a CPU per thread, so that the queue has c servers)", o.ServerCPUs, len(srv), c)
	}
	load, err := cpuset.Parse(o.LoadCPUs)
	if err != nil {
		return fmt.Errorf("validate: load CPUs: %w", err)
	}
	if err := cpuset.Pin(0, load); err != nil {
		return fmt.Errorf("validate: pin the load generator to CPUs %s: %w", o.LoadCPUs, err)
	}
	return nil
}

// newValidation returns the validation started at t0 with opt, on a
// process that may use ncpu CPUs: its provenance and the notes on what
// it does not cover.
func newValidation(opt *ValidateOptions, t0 time.Time, ncpu int) *results.Validation {
	c := opt.Threads
	v := &results.Validation{Tolerance: opt.Tolerance, MaxJudgedRho: opt.MaxJudgedRho, Model: opt.Model, Servers: c}
	v.Provenance = provenance(stamp{}, t0)
	if c, d, ok := vcsStamp(opt.Binary); ok {
		v.Provenance.Commit, v.Provenance.Dirty = c, d
	}
	v.Provenance.ServerCPUs, v.Provenance.LoadCPUs = opt.ServerCPUs, opt.LoadCPUs
	v.Provenance.ServerGOMAXPROCS, v.Provenance.LoadGOMAXPROCS = c, 2
	switch {
	case c == 1 && ncpu < 3:
		v.Notes = append(v.Notes, fmt.Sprintf("M/G/c with c ≥ 2 server threads (validate --threads c) not run: it needs c CPUs for the server and one for the generator, and this process may use %d", ncpu))
	case c == 1:
		v.Notes = append(v.Notes, fmt.Sprintf("M/G/c with c ≥ 2 server threads not run: validate --threads c runs it (up to c = %d on this process's CPUs)", ncpu-1))
	}
	queues := "one queue"
	if partitioned, _ := opt.chainModel(); partitioned && c > 1 {
		queues = "a queue each (its own connections)"
	} else if c > 1 {
		queues = "one queue (the shared handle set)"
	}
	v.Notes = append(v.Notes, fmt.Sprintf("model: %s, %s (GOMAXPROCS %d), %s, HTTP/1.1 keep-alive; service time = the server's own timestamps around Service.Do (concbench serve --trace); response time = intended send (Poisson schedule) → kernel receive timestamp",
		opt.Model, plural(c, "thread", "threads"), c, queues))
	return v
}

// validateFloor measures the floor into v: zero work, a low rate, every
// request to an idle server. Without it nothing can be validated.
func validateFloor(ctx context.Context, sp *spawner, opt *ValidateOptions, v *results.Validation) error {
	opt.progress("validate: floor: zero work at %g/s for %v", opt.FloorRate, opt.FloorDuration)
	fl, err := chainRun(ctx, sp, *opt, loadgen.Fixed(0), opt.FloorRate, opt.FloorDuration, opt.Seed)
	if err != nil {
		return fmt.Errorf("validate: the floor: %w", err)
	}
	parts, unmatched := results.Join(fl.gen(), fl.srv)
	v.Floor = results.FloorOf(parts, unmatched, opt.FloorRate)
	v.ClockUncertaintyNs = fl.uncertainty
	if v.Floor.Requests == 0 {
		return fmt.Errorf("validate: the floor run joined no request sent to an idle server (%d generator records, %d server records)", len(fl.gen()), len(fl.srv))
	}
	opt.progress("validate: floor %.1f µs mean (inbound %.1f, return %.1f), p99 %.1f µs over %d requests",
		v.Floor.MeanNs/1e3, v.Floor.InboundNs/1e3, v.Floor.ReturnNs/1e3, v.Floor.P99Ns/1e3, v.Floor.Requests)
	return nil
}

// validateClosed measures into v the service time under closed load, as
// the issue that asked for this validation suspected it differs from the
// one under open load: the server's own timing of exponential work with
// every connection keeping one request in flight. A failure is a note.
func validateClosed(ctx context.Context, sp *spawner, opt *ValidateOptions, v *results.Validation) {
	cd := min(opt.FloorDuration, opt.Duration)
	opt.progress("validate: closed loop: exponential work, %d connections, %v", opt.Conns, cd)
	cl, err := chainRun(ctx, sp, *opt, loadgen.Exp(opt.WorkNs), 0, cd, opt.Seed+1)
	if err != nil {
		v.Notes = append(v.Notes, "the closed-loop service-time run failed: "+err.Error())
		return
	}
	parts, _ := results.Join(cl.gen(), cl.srv)
	v.ClosedService = results.ServiceStatsOf(results.Samples(parts, func(p results.Parts) int64 { return p.Service }, nil))
	v.ClosedService.Requests = len(parts)
}

// validateRun runs one experiment of the validation — work ("exp" or
// "fixed") at utilization rho, with seed — and returns it judged against
// its queueing model, or not validated if the run failed.
func validateRun(ctx context.Context, sp *spawner, opt *ValidateOptions, v *results.Validation, work string, rho float64, seed uint64) results.ChainExperiment {
	dist, name := loadgen.Exp(opt.WorkNs), chainName("M", opt.Threads, v.Partitioned)
	if work == "fixed" {
		dist, name = loadgen.Fixed(opt.WorkNs), chainName("D", opt.Threads, v.Partitioned)
	}
	name += " ρ=" + strconv.FormatFloat(rho, 'g', -1, 64)
	rate := rho * float64(opt.Threads) * 1e9 / opt.WorkNs
	opt.progress("validate: %s: %.0f/s for %v", name, rate, opt.Duration)
	in := results.ChainInput{Name: name, Work: work, AskedNs: opt.WorkNs, TargetRho: rho, Floor: v.Floor,
		Servers: opt.Threads, Partitioned: v.Partitioned, Tolerance: opt.Tolerance, MaxJudgedRho: opt.MaxJudgedRho, Seed: seed}
	r, err := chainRun(ctx, sp, *opt, dist, rate, opt.Duration, seed)
	var e results.ChainExperiment
	if err != nil {
		e = results.ChainExperiment{Name: name, Work: work, TargetRho: rho, Judged: rho <= opt.MaxJudgedRho,
			Verdict: "not validated", Reasons: []string{"the run failed: " + err.Error()}}
	} else {
		in.Load, in.Server, in.ServerDropped = r.load, r.srv, r.dropped
		e = results.AnalyzeChain(in)
		v.ClockUncertaintyNs = max(v.ClockUncertaintyNs, r.uncertainty)
	}
	opt.progress("validate: %s: measured %.1f µs, predicted %.1f µs, ratio %.3f (plain %.3f): %s", name, e.Measured.MeanNs/1e3, e.Predicted.MeanNs/1e3, e.Ratio, e.PlainRatio, e.Verdict)
	return e
}

// chainName names an experiment's queue: M/M/1, M/D/4, 4×M/M/1 (service
// "M" or "D", c servers, partitioned or sharing one queue).
func chainName(service string, c int, partitioned bool) string {
	if partitioned && c > 1 {
		return strconv.Itoa(c) + "×M/" + service + "/1"
	}
	return "M/" + service + "/" + strconv.Itoa(c)
}

// chainResult is one traced run.
type chainResult struct {
	load        *loadgen.Result
	srv         []results.ServiceRecord
	dropped     int64
	uncertainty int64
}

func (c *chainResult) gen() []loadgen.TraceRecord {
	if c.load == nil || c.load.Trace == nil {
		return nil
	}
	return c.load.Trace.Records
}

// chainRun starts a traced server of opt's model and threads (GOMAXPROCS
// as many, pinned to the server's CPUs), drives it
// open loop (Poisson, busy-polling) with the given work and rate (0:
// closed loop, one request in flight per connection), and
// returns both traces. The server's trace holds the warm-up's requests
// too (they are earlier services for the window's first requests):
// emptying it at the window's start from OnWindow would race with the
// window's first requests on a busy machine, and lose them.
func chainRun(ctx context.Context, sp *spawner, opt ValidateOptions, work loadgen.Dist, rate float64, d time.Duration, seed uint64) (*chainResult, error) {
	closed := rate == 0
	if closed {
		rate = float64(opt.Threads) * 1e9 / work.Mean() // at most one service per mean work per thread
	}
	window := rate * d.Seconds()
	srvCap := min(int(rate*(d+opt.Warmup).Seconds()*1.3)+2000, service.MaxTrace)
	c := strconv.Itoa(opt.Threads)
	args := []string{"serve", "--model", opt.Model, "--threads", c, "--protocol", "http",
		"--cpus", opt.ServerCPUs, "--gomaxprocs", c, "--trace", strconv.Itoa(srvCap)}
	srv, err := startServer(sp, opt.Binary, args, "http")
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	lc := loadgen.Config{
		Addr: srv.addr, Protocol: "http", Conns: opt.Conns, Workers: 1, Rate: rate, Arrival: loadgen.Poisson,
		Warmup: opt.Warmup, Duration: d, CPU: work, Seed: seed, Poll: loadgen.PollBusy, Limits: opt.Limits,
		Trace: min(int(window*1.5)+1000, loadgen.MaxTrace),
	}
	if closed {
		lc.Closed, lc.Rate, lc.Outstanding = true, 0, 1
	}
	res, err := loadgen.Run(ctx, lc)
	if err != nil {
		return nil, err
	}
	b, err := srv.control("trace")
	if err != nil {
		return nil, err
	}
	var dump service.TraceDump
	if err := json.Unmarshal(b, &dump); err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	if !dump.SharedClock {
		return nil, fmt.Errorf("the server's clock is not the host's CLOCK_MONOTONIC: its timestamps cannot be joined with the generator's")
	}
	r := &chainResult{load: res, dropped: dump.Dropped, uncertainty: dump.ClockUncertaintyNs + monoclock.Uncertainty()}
	r.srv = make([]results.ServiceRecord, len(dump.Records))
	for i, rec := range dump.Records {
		r.srv[i] = results.ServiceRecord{ID: uint64(rec[0]), StartNs: rec[1], EndNs: rec[2], Thread: rec[3]}
	}
	return r, nil
}

// disjoint checks that the server's and the generator's CPU lists parse
// and share no CPU: the validation's generator busy-polls, and on the
// server's CPU it would be part of every service time.
func disjoint(server, load string) error {
	a, err := cpuset.Parse(server)
	if err != nil {
		return fmt.Errorf("server CPUs: %w", err)
	}
	b, err := cpuset.Parse(load)
	if err != nil {
		return fmt.Errorf("load CPUs: %w", err)
	}
	for _, c := range a {
		if slices.Contains(b, c) {
			return fmt.Errorf("the server's CPUs %s and the load generator's %s share CPU %d (accepted: disjoint lists)", server, load, c)
		}
	}
	return nil
}
