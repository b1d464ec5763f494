package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"concbench/internal/cpuset"
	"concbench/internal/monoclock"
	"concbench/internal/sysstat"
	"concbench/stats"
	"concbench/wire"
)

// Run connects to cfg.Addr, runs the load cfg describes and returns its
// Result. It returns an error, and no Result, if the run could not be made:
// an invalid configuration, a connection that could not be opened, or a
// priming request that failed. If ctx is cancelled during the run, Run
// stops, and returns the partial Result (invalid, "interrupted") with
// ctx's error.
//
// The workers are locked OS threads; pin the process (or the thread that
// calls Run, before it starts them: threads inherit their creator's
// affinity) to keep the generator off the server's CPUs.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	codec, err := wire.New(cfg.Protocol, wire.Limits{})
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	sa, family, err := resolve(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if err := checkDescriptors(cfg.Conns); err != nil {
		return nil, err
	}

	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0) // stops the world: only here and at the end
	base := time.Now()

	fds := make([]int, 0, cfg.Conns)
	for i := range cfg.Conns {
		fd, err := dial(sa, family, cfg.Timeout)
		if err == nil {
			enableRxTimestamps(fd)
		}
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, fmt.Errorf("loadgen: connect to %s (connection %d of %d): %w", cfg.Addr, i+1, cfg.Conns, err)
		}
		fds = append(fds, fd)
	}
	var stop atomic.Bool
	var written atomic.Int64
	ws := make([]*worker, 0, cfg.Workers)
	for i := range cfg.Workers {
		var mine []int
		for j := i; j < len(fds); j += cfg.Workers {
			mine = append(mine, fds[j])
		}
		w, err := newWorker(&cfg, i, cfg.Workers, mine, codec, sa, family, base, &stop, &written)
		if err != nil {
			for _, w := range ws {
				w.cleanup()
				w.closeWake()
			}
			for j := i; j < len(fds); j++ { // the sockets no worker owns yet
				if j%cfg.Workers > i {
					unix.Close(fds[j])
				}
			}
			return nil, err
		}
		ws = append(ws, w)
	}

	// Interruption: flag the workers and wake them from epoll. The
	// eventfds are closed only after this goroutine has exited.
	finished, watcherDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case <-ctx.Done():
			stop.Store(true)
			for _, w := range ws {
				w.wake.Signal()
			}
		case <-finished:
		}
	}()
	defer func() {
		close(finished)
		<-watcherDone
		for _, w := range ws {
			w.closeWake()
		}
	}()

	ready := make(chan error, len(ws))
	startCh := make(chan struct{})
	abort := false // written before close(startCh), read after
	// The workers close their connections only after the window's end has
	// been observed (OnWindow), so that the server's connection teardown
	// is outside the window.
	var wg, drained sync.WaitGroup
	closeConns := make(chan struct{})
	for _, w := range ws {
		wg.Add(1)
		drained.Add(1)
		go func() {
			defer wg.Done()
			// Never unlocked: the thread exits with the goroutine, and
			// its CPU pin (WorkerCPUs) with it.
			runtime.LockOSThread()
			if len(cfg.WorkerCPUs) > 0 {
				w.pinErr = pinThread(cfg.WorkerCPUs[w.idx%len(cfg.WorkerCPUs)])
			}
			ready <- w.prime()
			<-startCh
			if !abort {
				w.run()
			}
			drained.Done()
			<-closeConns
			w.cleanup()
		}()
	}
	var firstErr error
	for range ws {
		if err := <-ready; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}

	// The schedule starts for every worker at t0; warm-up, then the window.
	t0 := int64(time.Since(base)) + int64(time.Millisecond)
	if !cfg.StartAt.IsZero() {
		t0 = max(t0, int64(cfg.StartAt.Sub(base))) // wall-clock difference: StartAt has no monotonic reading
	}
	measureAt := t0 + int64(cfg.Warmup)
	endAt := int64(math.MaxInt64)
	if cfg.Duration > 0 {
		endAt = measureAt + int64(cfg.Duration)
	}
	var hl *hlog
	if firstErr == nil && cfg.HlogPath != "" {
		hl, firstErr = createHlog(cfg.HlogPath, base.Add(time.Duration(measureAt)),
			fmt.Sprintf("concbench load: %s, %s %s, values in ns, histogram %v..%v at %d significant digits",
				cfg.Mode(), cfg.Protocol, cfg.Addr, cfg.HistLowest, cfg.HistHighest, cfg.HistDigits))
	}
	if firstErr != nil {
		abort = true
		close(startCh)
		close(closeConns)
		wg.Wait()
		return nil, firstErr
	}
	var ivOut chan ivMsg
	collected := make(chan error, 1)
	if hl != nil {
		ivOut = make(chan ivMsg, 1024)
		go func() { collected <- mergeIntervals(ivOut, ws, hl, base, &cfg) }()
	}
	for i, w := range ws {
		w.start, w.measureAt, w.endAt = t0, measureAt, endAt
		if cfg.Requests > 0 {
			w.limited = true
			w.quota = cfg.Requests / int64(len(ws))
			if int64(i) < cfg.Requests%int64(len(ws)) {
				w.quota++
			}
		}
		if ivOut != nil {
			w.iv = newIntervals(&cfg, i, measureAt, ivOut)
		}
	}
	close(startCh)

	// The process's counters at the start of the measurement. The
	// window-start work (OnWindow: the harness's snapshot of the server,
	// its /proc reads; then the process counters here) runs on the
	// generator's CPUs and would preempt a busy-polling worker: it is done
	// windowLead before the window starts, so that it falls in the
	// warm-up, and its overrun into the window, if any, is reported.
	workersDone := make(chan struct{})
	go func() { drained.Wait(); close(workersDone) }()
	cpus, _ := cpuset.Current() // the generator's CPUs, for their steal time
	ruStart, ruErr := sysstat.Self()
	allocStart := sysstat.ReadAlloc()
	stealStart, stealErr := sysstat.StealNs(cpus)
	windowStarted := false
	var overrun time.Duration
	lead := min(windowLead, cfg.Warmup/2)
	timer := time.NewTimer(time.Until(base.Add(time.Duration(measureAt) - lead)))
	select {
	case <-timer.C:
		if cfg.OnWindow != nil {
			cfg.OnWindow(true)
			windowStarted = true
		}
		ruStart, ruErr = sysstat.Self()
		allocStart = sysstat.ReadAlloc()
		stealStart, stealErr = sysstat.StealNs(cpus)
		overrun = time.Duration(int64(time.Since(base)) - measureAt)
		<-workersDone
	case <-workersDone:
		timer.Stop()
	}
	now := time.Now()
	endNs := int64(now.Sub(base))
	// Wall-clock time elapsed minus monotonic time elapsed: a step of the
	// wall clock, which the kernel's receive timestamps carry.
	clockStep := now.UnixNano() - base.UnixNano() - endNs
	ruEnd, ruEndErr := sysstat.Self()
	allocEnd := sysstat.ReadAlloc()
	stealEnd, stealEndErr := sysstat.StealNs(cpus)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	if windowStarted {
		cfg.OnWindow(false)
	}
	close(closeConns)
	wg.Wait()

	r := assemble(&cfg, ws, base, measureAt, endAt, endNs)
	r.Timing.ClockStepNs = clockStep
	for _, w := range ws {
		if w.pinErr != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("worker %d runs unpinned: %v", w.idx, w.pinErr))
		}
	}
	if cfg.Throttle > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the generator was throttled on purpose (%v of spinning per response): it measures itself, not the server", cfg.Throttle))
	}
	if overrun > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the window-start work (OnWindow, the process counters) ran %s into the window, on the generator's CPUs", FormatNs(int64(overrun))))
	}
	if ruErr == nil && ruEndErr == nil {
		r.Generator.ProcessCPUNs = ruEnd.UserNs + ruEnd.SystemNs - ruStart.UserNs - ruStart.SystemNs
	}
	switch g := &r.Generator; {
	case stealErr != nil || stealEndErr != nil:
		g.StealUnavailable = errors.Join(stealErr, stealEndErr).Error()
	case r.WindowNs > 0 && len(cpus) > 0:
		g.StealNs = max(stealEnd-stealStart, 0)
		g.StealFraction = finite(float64(g.StealNs) / (float64(r.WindowNs) * float64(len(cpus))))
	}
	r.Generator.GCPauseNs = int64(ms1.PauseTotalNs - ms0.PauseTotalNs)
	r.Generator.GCCycles = ms1.NumGC - ms0.NumGC
	if r.Requests.Sent > 0 {
		r.Generator.AllocsPerRequest = float64(allocEnd.Objects-allocStart.Objects) / float64(r.Requests.Sent)
	}
	if hl != nil {
		close(ivOut)
		err := <-collected
		if cerr := hl.close(); err == nil {
			err = cerr
		}
		if n := ivAllocated(ws, hl); n > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the hlog writer fell behind and allocated %d histogram pairs during the run", n))
		}
		if err != nil {
			r.Warnings = append(r.Warnings, err.Error())
		} else {
			r.Hlog = cfg.HlogPath
		}
	}
	interrupted := stop.Load()
	var fatal error
	var failures []string
	if interrupted {
		failures = append(failures, "the run was interrupted before it finished")
	}
	for _, w := range ws {
		if w.fatal != nil && fatal == nil {
			fatal = w.fatal
		}
		if w.unreachable {
			failures = append(failures, fmt.Sprintf("worker %d had no connection to the server for over %v and stopped early", w.idx, cfg.Timeout))
		}
	}
	judge(r, failures...)
	switch {
	case fatal != nil:
		return r, fmt.Errorf("loadgen: %w", fatal)
	case interrupted && ctx.Err() != nil:
		return r, ctx.Err()
	}
	return r, nil
}

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
	var st workerStats
	corrected, uncorrected, lag, heldLag := newRecorder(cfg), newRecorder(cfg), newRecorder(cfg), newRecorder(cfg)
	fromIntended, ownLagFree, rxLag := newRecorder(cfg), newRecorder(cfg), newRecorder(cfg)
	var late, idle, sendCall linHist
	var clamped, spin int64
	var trend *Trend
	if len(ws) > 0 && ws[0].slicing {
		trend = &Trend{SliceMeanNs: make([]int64, numSlices), InFlight: make([]int64, numSlices+1), ScheduleDebtNs: make([]int64, numSlices+1)}
	}
	var sl sliceStats
	var gapA, gapP, a1, a2, p1, p2 []float64
	windowEnd := int64(0)
	for _, w := range ws {
		s := &w.st
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
		windowEnd = max(windowEnd, s.windowEnd, 0)
		if cfg.Closed {
			windowEnd = max(windowEnd, s.lastResponse)
		}
		corrected.merge(w.corrected)
		uncorrected.merge(w.uncorrected)
		lag.merge(w.lag)
		heldLag.merge(w.heldLag)
		fromIntended.merge(w.fromIntended)
		ownLagFree.merge(w.ownLagFree)
		rxLag.merge(w.rxLag)
		late.merge(&w.late)
		idle.merge(&w.idle)
		sendCall.merge(&w.sendCall)
		clamped += w.mix.clamped
		spin = max(spin, w.spin)
		if trend != nil {
			for j := range numSlices {
				sl.n[j] += w.sl.n[j]
				sl.sum[j] += w.sl.sum[j]
			}
			for j := 0; j <= numSlices && j < w.sl.sampled; j++ {
				trend.InFlight[j] += w.sl.inflight[j]
				trend.ScheduleDebtNs[j] = max(trend.ScheduleDebtNs[j], w.sl.debt[j])
			}
		}
		w.sample.gaps(&gapA, &gapP, &a1, &a2, &p1, &p2)
	}
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
		r.ScheduledRatePerS = perSec(st.scheduled)
	}
	r.SentRatePerS = perSec(st.sent)
	r.AchievedRatePerS = perSec(st.inWindow)

	var failed int64
	for k, n := range st.errs {
		if n == 0 {
			continue
		}
		r.Errors[errKind(k).String()] = n
		if errKind(k) != errConnect {
			failed += n
		}
	}
	r.Requests = Counts{
		Scheduled: st.scheduled, Sent: st.sent, Completed: st.completed, InWindow: st.inWindow, OK: st.ok, Failed: failed,
		Held: st.held, Unsent: st.unsent, Resent: st.resent,
		Reconnects: st.reconnects, ServerCloses: st.serverCloses, ClampedDraws: clamped,
		Warmup: st.warmup, WarmupErrors: st.warmupErrors,
	}
	r.Latency = Summarize(corrected.h, corrected.over+corrected.under)
	if len(cfg.PriorityClasses) > 0 {
		cls := make([]*classRecorders, len(ws))
		for i, w := range ws {
			cls[i] = w.classes
		}
		r.Classes = summarizeClasses(cfg, cls)
	}
	r.Uncorrected = Summarize(uncorrected.h, uncorrected.over+uncorrected.under)
	r.SendLag = Summarize(lag.h, lag.over+lag.under)
	r.HeldLag = Summarize(heldLag.h, heldLag.over+heldLag.under)
	if !cfg.Closed {
		r.FromIntended = Summarize(fromIntended.h, fromIntended.over+fromIntended.under)
		r.WithoutOwnLag = Summarize(ownLagFree.h, ownLagFree.over+ownLagFree.under)
		r.LagShares = lagShares(cfg, corrected, ownLagFree)
	}
	r.Trend = trend
	if trend != nil {
		var means []float64
		for j := range numSlices {
			if sl.n[j] > 0 {
				trend.SliceMeanNs[j] = sl.sum[j] / sl.n[j]
				means = append(means, float64(trend.SliceMeanNs[j]))
			}
		}
		infl := make([]float64, len(trend.InFlight))
		for j, v := range trend.InFlight {
			infl[j] = float64(v)
		}
		trend.LatencyZ, trend.InFlightZ = stats.MannKendallZ(means), stats.MannKendallZ(infl)
	}
	r.SendProcess = sendProcess(cfg, gapA, gapP, a1, a2, p1, p2, sendCall.quantile(0.5), meanGap(ws))

	tm := &r.Timing
	tm.Poll = cfg.Poll
	if cfg.Poll == PollSleep {
		tm.SpinNs = spin
		tm.RunWakeLateness = late.summary()
	}
	tm.ProbeWakeLateness = probeSummary(ws)
	tm.IdleIterations = idle.summary()
	tm.SendCall = sendCall.summary()
	tm.KernelStamped, tm.UserStamped, tm.StampedBeforeSend = st.kernelStamped, st.userStamped, st.stampBeforeSend
	switch {
	case st.userStamped == 0 && st.kernelStamped > 0:
		tm.ReceiveTimestamps = "kernel"
	case st.kernelStamped == 0:
		tm.ReceiveTimestamps = "user"
	default:
		tm.ReceiveTimestamps = "mixed"
	}
	tm.ReceiveLag = Summarize(rxLag.h, rxLag.over+rxLag.under)

	g := &r.Generator
	g.Workers = len(ws)
	g.WorkerUserNs, g.WorkerSystemNs = st.userNs, st.sysNs
	g.WorkerRunQueueNs = st.runQueueNs
	if st.spanNs > 0 {
		g.RunQueueFraction = finite(float64(st.runQueueNs) / float64(st.spanNs))
		if cfg.Poll == PollBusy {
			med := idle.quantile(0.5)
			tm.StalledNs = idle.excess(stallFactor*med, med)
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
	if cfg.Trace > 0 {
		r.Trace = assembleTrace(ws, base)
	}
	return r
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

// windowLead is how long before the window the window-start work runs
// (at most half the warm-up).
const windowLead = 20 * time.Millisecond

// enableRxTimestamps asks the kernel to timestamp the data received on fd
// (SO_TIMESTAMPNS: recvmsg(2) returns the wall-clock time at which the
// kernel received the last segment read). Where the kernel refuses, the
// worker timestamps after the read, and the result counts those reads.
// Enabling it makes the kernel timestamp every received packet
// system-wide (a clock read per packet, tens of ns), the server's too.
func enableRxTimestamps(fd int) {
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// lagShares compares the corrected latency with the latency without the
// generator's own lag at every percentile the outputs report.
func lagShares(cfg *Config, corrected, withoutLag *recorder) []LagShare {
	n := corrected.h.TotalCount()
	var out []LagShare
	for _, p := range reportedPercentiles {
		l, s := corrected.h.ValueAtPercentile(p), withoutLag.h.ValueAtPercentile(p)
		ls := LagShare{Percentile: p, LatencyNs: l, WithoutLagNs: s,
			BoundNs: max(int64(cfg.Limits.MaxLagShare*float64(l)), int64(cfg.HistLowest)),
			Judged:  float64(n)*(1-p/100) >= minTail}
		if l > 0 {
			ls.Share = finite(float64(l-s) / float64(l))
		}
		out = append(out, ls)
	}
	return out
}

// reportedPercentiles are the percentiles the outputs report (Summary):
// the verdict judges the generator's share of each.
var reportedPercentiles = []float64{50, 90, 99, 99.9, 99.99}

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

// resolve returns the socket address of host:port addr and its family. An
// empty host means this machine (127.0.0.1), as in net.Dial.
func resolve(addr string) (unix.Sockaddr, int, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, 0, fmt.Errorf("loadgen: address %q: %w", addr, err)
	}
	ap := ta.AddrPort()
	ip := ap.Addr().Unmap()
	if !ip.IsValid() || ip.IsUnspecified() {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if ip.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}, unix.AF_INET, nil
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}, unix.AF_INET6, nil
}

// dial opens a non-blocking TCP connection to sa with TCP_NODELAY, waiting
// up to timeout for the handshake.
func dial(sa unix.Sockaddr, family int, timeout time.Duration) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	err = unix.Connect(fd, sa)
	if err == unix.EINPROGRESS {
		err = waitConnected(fd, timeout)
	} else if err != nil {
		err = os.NewSyscallError("connect", err)
	}
	if err == nil {
		if serr := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); serr != nil {
			err = os.NewSyscallError("setsockopt", serr)
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// waitConnected waits for a non-blocking connect on fd to finish.
func waitConnected(fd int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("connect: timed out after %v", timeout)
		}
		n, err := unix.Poll(pfd, int((left+time.Millisecond-1)/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		if n > 0 {
			break
		}
	}
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if soerr != 0 {
		return os.NewSyscallError("connect", syscall.Errno(soerr))
	}
	return nil
}

// descriptorHeadroom is what checkDescriptors leaves for the process's
// other descriptors: the runtime's, files, the server's pipes, an hlog.
const descriptorHeadroom = 64

// checkDescriptors refuses, before any connection is opened, a run whose
// conns connections cannot all get a descriptor under this process's
// RLIMIT_NOFILE. It first raises the soft limit to the hard limit
// (sysstat.RaiseNoFile: the Go runtime does so at start-up too, silently),
// so the soft limit is all the system allows; the error says so, why the
// raise failed if it did, and how to raise the hard limit, instead of
// failing with EMFILE somewhere in the middle of opening the connections.
func checkDescriptors(conns int) error {
	soft, hard, raiseErr := sysstat.RaiseNoFile()
	if soft == 0 && raiseErr != nil {
		return nil // cannot tell: let the connections speak for themselves
	}
	if need := uint64(conns) + descriptorHeadroom; soft != unix.RLIM_INFINITY && need > soft {
		why := "raise the hard limit (ulimit -Hn, or LimitNOFILE= for a service) and run again"
		if raiseErr != nil {
			why = fmt.Sprintf("raising the soft limit to the hard limit failed (%v); raise the soft limit (ulimit -n) and run again", raiseErr)
		}
		return fmt.Errorf("loadgen: %d connections need about %d descriptors, and this process may open %d (RLIMIT_NOFILE soft limit; hard limit %d): %s",
			conns, need, soft, hard, why)
	}
	return nil
}

// pinThread pins the calling thread, which must be locked to its
// goroutine, to cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU %d: %w", cpu, os.NewSyscallError("sched_setaffinity", err))
	}
	return nil
}
