package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/results"
)

// CeilingFraction is the share of the load generator's measured ceiling
// (results.Ceiling) at which a point's rate is no longer the server's to
// claim: a generator that busy spends most of its time on its own work,
// and in a closed loop its response handling lengthens every round trip.
const CeilingFraction = 0.8

// The ceiling measurement's warm-up and window: long enough for tens of
// thousands of requests on any machine, short beside a run.
const (
	ceilingWarmup = 250 * time.Millisecond
	ceilingWindow = time.Second
)

// Timing is what the run measured of its own overheads, for estimating
// how long an experiment takes (Estimate): starting a server, and a
// point's time beyond its warm-up and window (connecting, priming, the
// window's edges, closing).
type Timing struct {
	ServerStart   time.Duration `json:"server_start_ns"`
	PointOverhead time.Duration `json:"point_overhead_ns"`
}

// ceilings sets r.run.Ceilings: those given (Options.Ceilings), those a
// resumed run recorded, or measured now, one per protocol of the
// experiment's workloads.
func (r *runner) ceilings(ctx context.Context) {
	if len(r.run.Ceilings) > 0 {
		return
	}
	if len(r.opt.Ceilings) > 0 {
		r.run.Ceilings = slices.Clone(r.opt.Ceilings)
		return
	}
	var protos []string
	for _, w := range r.exp.Workloads {
		if !slices.Contains(protos, w.Protocol) {
			protos = append(protos, w.Protocol)
			c, t := r.measureCeiling(ctx, &w)
			r.run.Ceilings = append(r.run.Ceilings, c)
			if r.opt.Progress != nil {
				fmt.Fprintf(r.opt.Progress, "load generator's ceiling (%s): %s\n", c.Protocol, c.Text())
			}
			if t.ServerStart > 0 {
				r.timing = t
			}
		}
	}
}

// measureCeiling measures the generator's ceiling for w's protocol,
// connections and depth: a closed loop, as a capacity point runs it,
// against netpoll with no work on the server CPUs, with the run's
// workers, CPUs and polling. The ceiling is the achieved rate over the
// workers' busy share. A failure leaves it 0, with the reason: every
// point is then unmarked, and the report says so.
func (r *runner) measureCeiling(ctx context.Context, w *Workload) (results.Ceiling, Timing) {
	c := results.Ceiling{Protocol: w.Protocol, Workers: r.exp.LoadWorkers, WorkerCPUs: r.prov.LoadWorkerCPUs, Fraction: CeilingFraction}
	null := *w
	null.CPU, null.Block, null.Size, null.Ops, null.Idle = "0", "0", "0", "work=1", 0
	// The fastest server first, so that the generator comes as close to
	// its ceiling as the machine allows: the Proactor (faster than netpoll
	// with no work: docs/findings.md), or netpoll where io_uring is not
	// permitted.
	var srv *server
	var started time.Duration
	var errs []string
	for _, model := range []string{"proactor", "netpoll"} {
		rc := runConfig{cfg: Config{Name: "ceiling", Model: model, Sizing: SizeRule}, wl: null, cpus: r.exp.ServerCPUs}
		rc.size = rc.cfg.size(&null, r.exp.serverCPUCount())
		args := serveArgs(&rc)
		if r.opt.ServerAddr != "" {
			args = append(args, "--addr", r.opt.ServerAddr)
		}
		t0 := time.Now()
		s, err := startServer(r.sp, r.exp.ServerBinary, args, w.Protocol)
		if err != nil {
			errs = append(errs, model+": "+err.Error())
			continue
		}
		srv, started = s, time.Since(t0)
		c.Server = fmt.Sprintf("%s, %s, no work, on CPUs %s", model, strings.TrimPrefix(rc.size.Rule, "rule: "), orAll(r.exp.ServerCPUs))
		break
	}
	if srv == nil {
		c.Reason = "no null server started: " + strings.Join(errs, "; ")
		return c, Timing{}
	}
	defer func() {
		if err := srv.stop(); err != nil {
			r.run.Warnings = append(r.run.Warnings, "the ceiling's null server: "+err.Error())
		}
	}()
	lc, _ := null.LoadConfig() // validated with w
	lc.Addr = srv.addr
	lc.Workers, lc.WorkerCPUs, lc.Poll = r.exp.LoadWorkers, r.exp.LoadWorkerCPUs, r.poll
	lc.Warmup, lc.Duration = ceilingWarmup, ceilingWindow
	lc.Closed, lc.Rate, lc.Outstanding = true, 0, r.exp.CapacityOutstanding*lc.Depth
	lc.Seed = r.exp.Seed
	lc.Limits = r.exp.LoadLimits
	lc.Throttle = r.opt.throttle
	runLoad := loadgen.Run
	if r.opt.Load != nil {
		runLoad = r.opt.Load
	}
	t1 := time.Now()
	res, err := runLoad(ctx, lc)
	t := Timing{ServerStart: started, PointOverhead: max(time.Since(t1)-lc.Warmup-lc.Duration, 0)}
	if r.exp.hasSLO() {
		r.measureFloor(ctx, w, srv.addr, runLoad)
	}
	switch {
	case err != nil:
		c.Reason = "the measurement failed: " + err.Error()
	case res.Generator.BusyFraction <= 0 || res.AchievedRatePerS <= 0:
		c.Reason = fmt.Sprintf("no rate to extrapolate from (%.0f req/s, the workers busy %.0f%% of the time)", res.AchievedRatePerS, 100*res.Generator.BusyFraction)
	default:
		c.RatePerS, c.Busy = res.AchievedRatePerS, res.Generator.BusyFraction
		c.PerS = c.RatePerS / c.Busy
	}
	return c, t
}

// The floor's run (results.Objective): zero work at a low rate, every
// request to an idle server, long enough that its p99 rests on tens of
// requests.
const (
	floorRate     = 1000
	floorWarmup   = 200 * time.Millisecond
	floorDuration = 2 * time.Second
)

// measureFloor measures the machine's own tail for w's protocol against
// the null server at addr (zero work, floorRate), and sets the objectives
// of the workloads of that protocol (results.Objective, ObjectiveBound).
// A floor that cannot be measured leaves their published bounds, and
// says so.
func (r *runner) measureFloor(ctx context.Context, w *Workload, addr string, runLoad func(context.Context, loadgen.Config) (*loadgen.Result, error)) {
	null := *w
	null.CPU, null.Block, null.Size, null.Ops, null.Idle = "0", "0", "0", "work=1", 0
	lc, _ := null.LoadConfig() // validated with w
	lc.Addr = addr
	lc.Workers, lc.WorkerCPUs, lc.Poll = r.exp.LoadWorkers, r.exp.LoadWorkerCPUs, r.poll
	lc.Warmup, lc.Duration = floorWarmup, floorDuration
	lc.Rate = floorRate
	lc.Seed = r.exp.Seed
	lc.Limits = r.exp.LoadLimits
	res, err := runLoad(ctx, lc)
	for _, wl := range r.exp.Workloads {
		if wl.SLO == nil || wl.Protocol != w.Protocol {
			continue
		}
		pct := wl.SLO.percentile()
		o := results.Objective{Workload: wl.Name, Percentile: pct, PublishedNs: int64(time.Duration(wl.SLO.Bound))}
		o.BoundNs = o.PublishedNs
		var v int64
		ok := false
		if err == nil && res != nil && res.Valid {
			v, ok = percentileNs(&res.Latency, pct)
		}
		switch {
		case !ok:
			why := "its verdict is invalid"
			if err != nil {
				why = err.Error()
			}
			o.Note = "the published bound: the floor could not be measured (" + why + ")"
		default:
			o.FloorNs, o.FloorRequests, o.FloorRatePerS = v, res.Latency.Count, floorRate
			o.BoundNs = results.ObjectiveBound(o.PublishedNs, v)
			if o.BoundNs == o.PublishedNs {
				o.Note = fmt.Sprintf("the published bound: the machine's floor (p%g %s, zero work at %d req/s) is within %.0f%% of it", pct, loadgen.FormatNs(v), floorRate, 100*results.ObjectiveFloorShare)
			} else {
				o.Note = fmt.Sprintf("relative to the machine's floor: its p%g, %s with zero work at %d req/s, is more than %.0f%% of the published %v, so the bound is the floor plus %.0f%% of it, %v",
					pct, loadgen.FormatNs(v), floorRate, 100*results.ObjectiveFloorShare, time.Duration(o.PublishedNs), 100*(1-results.ObjectiveFloorShare), time.Duration(o.BoundNs).Round(time.Microsecond))
			}
		}
		r.run.Objectives = append(r.run.Objectives, o)
		if r.opt.Progress != nil {
			fmt.Fprintf(r.opt.Progress, "objective of %s: p%g ≤ %v (%s)\n", wl.Name, pct, time.Duration(o.BoundNs).Round(time.Microsecond), o.Note)
		}
	}
}

// objective returns w's latency objective as the run searches for it:
// its bound relative to the machine's floor where the run set one
// (results.Objective), else the published one; nil without one.
func (r *runner) objective(w *Workload) *SLO {
	if w.SLO == nil {
		return nil
	}
	for _, o := range r.run.Objectives {
		if o.Workload == w.Name && o.BoundNs > 0 {
			s := *w.SLO
			s.Bound = Duration(o.BoundNs)
			return &s
		}
	}
	return w.SLO
}

// ceilingFor returns the run's measured ceiling for protocol, or nil.
func (r *runner) ceilingFor(protocol string) *results.Ceiling {
	i := slices.IndexFunc(r.run.Ceilings, func(c results.Ceiling) bool { return c.Protocol == protocol })
	if i < 0 || r.run.Ceilings[i].PerS <= 0 {
		return nil
	}
	return &r.run.Ceilings[i]
}

// checkCeiling marks p invalid (loadgen.CheckCeiling) when its rate — a
// capacity point's achieved rate, an open point's offered one — reaches
// CeilingFraction of the generator's ceiling for its protocol: the rate
// is then the generator's as much as the server's. Not with the
// generator's limits relaxed (tests on a busy machine), which turn off
// its checks on itself.
func (r *runner) checkCeiling(p *results.Point) {
	if p.Load == nil || r.exp.LoadLimits.Relaxed() {
		return // relaxed: the generator's checks on itself are off, this one too
	}
	c := r.ceilingFor(p.Workload.Protocol)
	if c == nil {
		return
	}
	rate := p.Load.AchievedRatePerS
	if p.Kind != results.KindCapacity {
		rate = max(rate, p.OfferedRatePerS)
	}
	if rate < c.Bound() {
		return
	}
	p.Load.Invalidate(loadgen.CheckCeiling, fmt.Sprintf(
		"beyond what this load generator measures here: %.0f req/s is %.0f%% of its ceiling of %.0f req/s (%d workers, measured at the start of the run; at most %.0f%%): give it more load CPUs (--load-cpus) or hosts (--agents)",
		rate, 100*rate/c.PerS, c.PerS, c.Workers, 100*c.Fraction))
}

// orAll names a CPU list, or says that there is none.
func orAll(cpus string) string {
	if cpus == "" {
		return "all (unpinned)"
	}
	return cpus
}
