package loadgen

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"concbench/internal/cpuset"
	"concbench/internal/monoclock"
	"concbench/stats"
	"concbench/wire"
)

// assemble merges the workers' counters and histograms into a Result
// (without the verdict).
func assemble(cfg *Config, ws []*worker, base time.Time, measureAt, endAt, endNs int64) *Result {
	r := &Result{
		Mode:      cfg.Mode(),
		Config:    *cfg,
		StartTime: base.Add(time.Duration(measureAt)),
		WarmupNs:  int64(cfg.Warmup),
		Errors:    map[string]int64{},
		Histogram: HistogramParams{
			LowestNs:          int64(cfg.HistLowest),
			HighestNs:         int64(cfg.HistHighest),
			SignificantDigits: cfg.HistDigits,
		},
		TargetRatePerS: cfg.TargetRate(),
	}
	p := poolWorkers(cfg, ws)
	windowEnd := p.windowEnd
	if cfg.Duration > 0 {
		windowEnd = endAt
	}
	if windowEnd == 0 || windowEnd > endNs {
		windowEnd = endNs // interrupted, or a window that never closed
	}
	r.WindowNs = max(windowEnd-measureAt, 0)
	perSec := func(n int64) float64 {
		if r.WindowNs <= 0 {
			return 0
		}
		return finite(float64(n) / (float64(r.WindowNs) / 1e9))
	}
	if !cfg.Closed {
		r.ScheduledRatePerS = perSec(p.st.scheduled)
	}
	r.SentRatePerS = perSec(p.st.sent)
	r.AchievedRatePerS = perSec(p.st.inWindow)
	r.Requests = p.counts(r.Errors)
	r.Ledger = p.ledger(cfg)
	p.latencies(r, cfg, ws)
	r.SendProcess = sendProcess(cfg, p.gapA, p.gapP, p.a1, p.a2, p.p1, p.p2, p.sendCall.quantile(0.5), meanGap(ws))
	p.timing(r, cfg, ws)
	p.generator(r, cfg, len(ws))
	if cfg.Trace > 0 {
		r.Trace = assembleTrace(ws, base)
	}
	return r
}

// pool is the workers' statistics merged: their counters, latency
// recorders and timing histograms, the overload detector's slices, the
// send process's sampled gaps.
type pool struct {
	st                                   workerStats
	corrected, uncorrected, lag, heldLag *recorder
	fromIntended, ownLagFree, rxLag      *recorder
	late, idle, sendCall                 linHist
	clamped, spin                        int64
	trend                                *Trend // nil unless the workers keep slices
	sl                                   sliceStats
	gapA, gapP, a1, a2, p1, p2           []float64
	windowEnd                            int64 // the latest window end a worker saw (0: none)
}

// poolWorkers merges the statistics of the workers ws.
func poolWorkers(cfg *Config, ws []*worker) *pool {
	p := &pool{
		corrected: newRecorder(cfg), uncorrected: newRecorder(cfg), lag: newRecorder(cfg), heldLag: newRecorder(cfg),
		fromIntended: newRecorder(cfg), ownLagFree: newRecorder(cfg), rxLag: newRecorder(cfg),
	}
	if len(ws) > 0 && ws[0].slicing {
		p.trend = &Trend{SliceMeanNs: make([]int64, numSlices), InFlight: make([]int64, numSlices+1), ScheduleDebtNs: make([]int64, numSlices+1)}
	}
	for _, w := range ws {
		p.st.add(&w.st)
		p.windowEnd = max(p.windowEnd, w.st.windowEnd, 0)
		if cfg.Closed {
			p.windowEnd = max(p.windowEnd, w.st.lastResponse)
		}
		p.corrected.merge(w.corrected)
		p.uncorrected.merge(w.uncorrected)
		p.lag.merge(w.lag)
		p.heldLag.merge(w.heldLag)
		p.fromIntended.merge(w.fromIntended)
		p.ownLagFree.merge(w.ownLagFree)
		p.rxLag.merge(w.rxLag)
		p.late.merge(&w.late)
		p.idle.merge(&w.idle)
		p.sendCall.merge(&w.sendCall)
		p.clamped += w.mix.clamped
		p.spin = max(p.spin, w.spin)
		if p.trend != nil {
			for j := range numSlices {
				p.sl.n[j] += w.sl.n[j]
				p.sl.sum[j] += w.sl.sum[j]
			}
			for j := 0; j <= numSlices && j < w.sl.sampled; j++ {
				p.trend.InFlight[j] += w.sl.inflight[j]
				p.trend.ScheduleDebtNs[j] = max(p.trend.ScheduleDebtNs[j], w.sl.debt[j])
			}
		}
		w.sample.gaps(&p.gapA, &p.gapP, &p.a1, &p.a2, &p.p1, &p.p2)
	}
	return p
}

// add adds s's counters to st; the window end and the last response,
// which are not sums, are left alone.
func (st *workerStats) add(s *workerStats) {
	st.scheduled += s.scheduled
	st.sent += s.sent
	st.completed += s.completed
	st.inWindow += s.inWindow
	st.kernelStamped += s.kernelStamped
	st.userStamped += s.userStamped
	st.stampBeforeSend += s.stampBeforeSend
	st.ok += s.ok
	st.held += s.held
	st.unsent += s.unsent
	st.resent += s.resent
	st.warmup += s.warmup
	st.warmupErrors += s.warmupErrors
	st.reconnects += s.reconnects
	st.serverCloses += s.serverCloses
	st.kills += s.kills
	st.recycled += s.recycled
	st.refused += s.refused
	st.abandoned += s.abandoned
	st.deposits += s.deposits
	st.withdrawals += s.withdrawals
	st.moneyRefused += s.moneyRefused
	st.moneyUnknown += s.moneyUnknown
	st.totals += s.totals
	st.busyNs += s.busyNs
	st.spanNs += s.spanNs
	st.userNs += s.userNs
	st.sysNs += s.sysNs
	st.runQueueNs += s.runQueueNs
	st.nvcsw += s.nvcsw
	st.nivcsw += s.nivcsw
	for k, n := range s.errs {
		st.errs[k] += n
	}
}

// counts returns the pooled request counts, and adds the errors to errs
// by kind.
func (p *pool) counts(errs map[string]int64) Counts {
	st := &p.st
	var failed int64
	for k, n := range st.errs {
		if n == 0 {
			continue
		}
		errs[errKind(k).String()] = n
		if errKind(k) != errConnect {
			failed += n
		}
	}
	return Counts{
		Scheduled: st.scheduled, Sent: st.sent, Completed: st.completed, InWindow: st.inWindow, OK: st.ok, Failed: failed,
		Held: st.held, Unsent: st.unsent, Resent: st.resent,
		Reconnects: st.reconnects, ServerCloses: st.serverCloses, ClampedDraws: p.clamped,
		Warmup: st.warmup, WarmupErrors: st.warmupErrors,
		Kills: st.kills, Abandoned: st.abandoned, Refused: st.refused, Recycled: st.recycled,
	}
}

// ledger returns the run's ledger flow if cfg's mix has deposits,
// withdrawals or totals; nil otherwise.
func (p *pool) ledger(cfg *Config) *Ledger {
	w := cfg.Ops.weights()
	if w[wire.OpDeposit] == 0 && w[wire.OpWithdraw] == 0 && w[wire.OpTotal] == 0 {
		return nil
	}
	st := &p.st
	return &Ledger{Amount: cfg.Amount, Deposits: st.deposits, Withdrawals: st.withdrawals,
		Refused: st.moneyRefused, Unknown: st.moneyUnknown, Totals: st.totals}
}

// latencies fills r's latency summaries, its priority classes' and its
// trend across the window's slices.
func (p *pool) latencies(r *Result, cfg *Config, ws []*worker) {
	r.Latency = Summarize(p.corrected.h, p.corrected.over+p.corrected.under)
	if len(cfg.PriorityClasses) > 0 {
		cls := make([]*classRecorders, len(ws))
		for i, w := range ws {
			cls[i] = w.classes
		}
		r.Classes = summarizeClasses(cfg, cls)
	}
	r.Uncorrected = Summarize(p.uncorrected.h, p.uncorrected.over+p.uncorrected.under)
	r.SendLag = Summarize(p.lag.h, p.lag.over+p.lag.under)
	r.HeldLag = Summarize(p.heldLag.h, p.heldLag.over+p.heldLag.under)
	if !cfg.Closed {
		r.FromIntended = Summarize(p.fromIntended.h, p.fromIntended.over+p.fromIntended.under)
		r.WithoutOwnLag = Summarize(p.ownLagFree.h, p.ownLagFree.over+p.ownLagFree.under)
		r.LagShares = lagShares(cfg, p.corrected, p.ownLagFree)
	}
	r.Trend = p.trend
	if trend := p.trend; trend != nil {
		var means []float64
		for j := range numSlices {
			if p.sl.n[j] > 0 {
				trend.SliceMeanNs[j] = p.sl.sum[j] / p.sl.n[j]
				means = append(means, float64(trend.SliceMeanNs[j]))
			}
		}
		infl := make([]float64, len(trend.InFlight))
		for j, v := range trend.InFlight {
			infl[j] = float64(v)
		}
		trend.LatencyZ, trend.InFlightZ = stats.MannKendallZ(means), stats.MannKendallZ(infl)
	}
}

// timing fills r's account of the generator's own timing: its polling,
// wake-up lateness, idle iterations, send calls and receive timestamps.
func (p *pool) timing(r *Result, cfg *Config, ws []*worker) {
	st := &p.st
	tm := &r.Timing
	tm.Poll = cfg.Poll
	if cfg.Poll == PollSleep {
		tm.SpinNs = p.spin
		tm.RunWakeLateness = p.late.summary()
	}
	tm.ProbeWakeLateness = probeSummary(ws)
	tm.IdleIterations = p.idle.summary()
	tm.SendCall = p.sendCall.summary()
	tm.KernelStamped, tm.UserStamped, tm.StampedBeforeSend = st.kernelStamped, st.userStamped, st.stampBeforeSend
	switch {
	case st.userStamped == 0 && st.kernelStamped > 0:
		tm.ReceiveTimestamps = "kernel"
	case st.kernelStamped == 0:
		tm.ReceiveTimestamps = "user"
	default:
		tm.ReceiveTimestamps = "mixed"
	}
	tm.ReceiveLag = Summarize(p.rxLag.h, p.rxLag.over+p.rxLag.under)
}

// generator fills r's costs of the n workers' threads — CPU, run-queue
// wait, context switches, busy share, stalls — and whether the send
// process can be judged at that busy share.
func (p *pool) generator(r *Result, cfg *Config, n int) {
	st := &p.st
	tm := &r.Timing
	g := &r.Generator
	g.Workers = n
	g.WorkerUserNs, g.WorkerSystemNs = st.userNs, st.sysNs
	g.WorkerRunQueueNs = st.runQueueNs
	if st.spanNs > 0 {
		g.RunQueueFraction = finite(float64(st.runQueueNs) / float64(st.spanNs))
		if cfg.Poll == PollBusy {
			med := p.idle.quantile(0.5)
			tm.StalledNs = p.idle.excess(stallFactor*med, med)
			tm.StalledFraction = finite(float64(tm.StalledNs) / float64(st.spanNs))
		}
	}
	g.WorkerVoluntaryCtxsw, g.WorkerInvoluntaryCtxsw = st.nvcsw, st.nivcsw
	if st.sent > 0 {
		g.CPUNsPerRequest = float64(st.userNs+st.sysNs) / float64(st.sent)
	}
	if st.spanNs > 0 {
		g.BusyFraction = finite(min(float64(st.busyNs)/float64(st.spanNs), 1))
	}
	if sp := &r.SendProcess; sp.Applicable {
		sp.Judged = g.BusyFraction <= maxBusyForProcess
		if !sp.Judged {
			sp.Note = fmt.Sprintf("the generator's workers were busy %.0f%% of the time (judged up to %.0f%%): a busy sender holds back about that share of the sends that fall due, which then leave together, so its gaps cannot be exponential at the scale of its own work; its lateness is judged through the latency percentiles instead",
				100*g.BusyFraction, 100*maxBusyForProcess)
		}
	}
	g.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if set, err := cpuset.Current(); err == nil {
		g.CPUs = set.String()
	}
}

// assembleTrace converts the workers' trace records to CLOCK_MONOTONIC.
// The workers' clock is time.Since(base), their kernel timestamps were
// converted with base's wall-clock reading (recv): both are on base's
// monotonic time line, which monoclock.At places on the host's.
func assembleTrace(ws []*worker, base time.Time) *Trace {
	off := monoclock.At(base)
	t := &Trace{RealtimeOffsetNs: base.UnixNano() - off}
	for _, w := range ws {
		t.Dropped += w.traceDropped
		for _, r := range w.trace {
			t.Records = append(t.Records, TraceRecord{ID: r.id, IntendedNs: r.intended + off, SentNs: r.sent + off,
				RecvNs: r.recv + off, Kernel: r.kernel, Corrected: r.corrected})
		}
	}
	return t
}

// meanGap returns the mean gap between one worker's arrivals, ns (0 if
// none samples them).
func meanGap(ws []*worker) float64 {
	for _, w := range ws {
		if w.sample.on {
			return w.sample.meanGap
		}
	}
	return 0
}

// sendProcess runs the send-process check on the sampled gaps, in units of
// the mean gap gap; gaps shorter than one send call (resolution, ns) are
// counted as that long on both sides: a single sending thread cannot put
// two requests closer together than its send system call takes.
func sendProcess(cfg *Config, actual, planned, a1, a2, p1, p2 []float64, resolution int64, gap float64) SendProcess {
	var sp SendProcess
	switch {
	case cfg.Closed:
		sp.Note = "not applicable: a closed loop has no arrival process"
		return sp
	case cfg.Arrival != Poisson:
		sp.Note = fmt.Sprintf("not applicable to %s arrivals: each send's deviation from its schedule is the send lag, judged through the latency percentiles", cfg.Arrival)
		return sp
	case cfg.Requests > 0:
		sp.Note = "not applicable in Requests mode (no fixed window to spread the sample over)"
		return sp
	case len(actual) < minGaps:
		sp.Note = fmt.Sprintf("not judged: %d gaps sampled, fewer than %d", len(actual), minGaps)
		sp.Gaps = len(actual)
		return sp
	}
	sp.Applicable = true
	sp.Gaps = len(actual)
	c := 0.0
	if gap > 0 {
		c = float64(resolution) / gap
	}
	sp.ResolutionNs = resolution
	for _, xs := range [][]float64{actual, planned, a1, a2, p1, p2} {
		for i := range xs {
			xs[i] = max(xs[i], c)
		}
	}
	sp.KSD, sp.KSP = stats.KSExp(actual, c)
	sp.PlannedKSD, sp.PlannedKSP = stats.KSExp(planned, c)

	sp.Lag1Rho, sp.PlannedLag1Rho = stats.Spearman(a1, a2), stats.Spearman(p1, p2)
	sp.Lag1Z = sp.Lag1Rho * math.Sqrt(float64(max(len(a1)-1, 0)))
	sp.PlannedLag1Z = sp.PlannedLag1Rho * math.Sqrt(float64(max(len(p1)-1, 0)))
	return sp
}

// minGaps is the fewest sampled gaps the send-process check judges.
const minGaps = 100

// maxBusyForProcess is the busy fraction of the workers up to which the
// send-process check is judged: a worker busy a share b of its time holds
// back about that share of the sends that fall due, which then leave
// together, so the gaps of a busy sender cannot be exponential at the
// scale of its own work, whatever its care.
const maxBusyForProcess = 0.10

// probeSummary merges the workers' wake-up probes: the worst worker's
// percentiles (each worker probed its own thread) and the total count.
func probeSummary(ws []*worker) Lateness {
	var l Lateness
	for _, w := range ws {
		p := w.lateStart
		l.Count += p.Count
		l.P50Ns, l.P99Ns, l.P999Ns, l.MaxNs = max(l.P50Ns, p.P50Ns), max(l.P99Ns, p.P99Ns), max(l.P999Ns, p.P999Ns), max(l.MaxNs, p.MaxNs)
	}
	return l
}
