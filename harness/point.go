package harness

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
)

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
	if r.quota != nil {
		if err := r.quota.place(srv.pids()); err != nil {
			if err := srv.stop(); err != nil {
				r.run.Warnings = append(r.run.Warnings, rc.name+": "+err.Error())
			}
			r.stopBackend()
			p.Status, p.Failure, p.FailedBy = results.StatusFailed, err.Error(), results.FailedServer
			return nil
		}
	}
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
		if n := r.exp.CapacityRequests; n > 0 {
			lc.Duration, lc.Requests = 0, n
		}
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
	window := lc.Duration
	if lc.Requests > 0 {
		window = time.Duration(lc.Requests) * time.Second / MinRequestsRate
	}
	limit := lc.Warmup + window + max(lc.Timeout, loadgen.DefaultTimeout) + 2*controlTimeout + pointGrace
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
