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
	sh := newShared(&cfg)
	ws, err := newWorkers(&cfg, codec, sa, family, base, sh)
	if err != nil {
		return nil, err
	}
	stopWatching := watchInterrupt(ctx, ws, &sh.stop)
	defer stopWatching()

	th := startThreads(&cfg, ws)
	firstErr := th.primed(len(ws))
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
		th.abort()
		return nil, firstErr
	}
	var ivOut chan ivMsg
	collected := make(chan error, 1)
	var tail *tailSink
	if cfg.TailInterval > 0 {
		if hl == nil {
			cfg.HlogInterval = cfg.TailInterval // the intervals' length (Validate: equal with an hlog)
		}
		tail = &tailSink{every: int64(cfg.TailInterval)}
	}
	if hl != nil || tail != nil {
		ivOut = make(chan ivMsg, 1024)
		go func() { collected <- mergeIntervals(ivOut, ws, hl, tail, base, &cfg) }()
	}
	setSchedules(&cfg, ws, t0, measureAt, endAt, ivOut)
	th.start()
	win := awaitWindow(&cfg, base, measureAt, &th.drained)
	th.finish()

	r := assemble(&cfg, ws, base, measureAt, endAt, win.endNs)
	r.Timing.ClockStepNs = win.clockStep
	runWarnings(r, &cfg, ws, win.overrun)
	win.processCosts(r, &ms0)
	switch {
	case hl != nil:
		closeHlog(r, &cfg, ws, hl, ivOut, collected)
	case tail != nil:
		close(ivOut)
		if err := <-collected; err != nil {
			r.Warnings = append(r.Warnings, err.Error())
		}
		if n := ivAllocated(ws, nil); n > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the intervals' collector fell behind and allocated %d histogram pairs during the run", n))
		}
	}
	if tail != nil {
		r.Intervals = tail.result()
	}
	interrupted := sh.stop.Load()
	fatal := judgeRun(r, &cfg, ws, interrupted)
	switch {
	case fatal != nil:
		return r, fmt.Errorf("loadgen: %w", fatal)
	case interrupted && ctx.Err() != nil:
		return r, ctx.Err()
	}
	return r, nil
}

// shared is what a run's workers share: the flag that stops them, the
// requests written and not yet answered (worker.written), and the money
// flow (nil without Config.LedgerMoney).
type shared struct {
	stop    atomic.Bool
	written atomic.Int64
	money   *moneyFlow
}

// newShared returns the shared state of a run of cfg.
func newShared(cfg *Config) *shared {
	sh := &shared{}
	if cfg.LedgerMoney > 0 {
		sh.money = &moneyFlow{}
	}
	return sh
}

// newWorkers opens cfg.Conns connections to sa and deals them out to
// cfg.Workers new workers, round robin. On failure it closes what it
// opened.
func newWorkers(cfg *Config, codec wire.Codec, sa unix.Sockaddr, family int, base time.Time, sh *shared) ([]*worker, error) {
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
	ws := make([]*worker, 0, cfg.Workers)
	for i := range cfg.Workers {
		var mine []int
		for j := i; j < len(fds); j += cfg.Workers {
			mine = append(mine, fds[j])
		}
		w, err := newWorker(cfg, i, cfg.Workers, mine, codec, sa, family, base, sh)
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
	return ws, nil
}

// watchInterrupt watches ctx during the run: once it is done, it flags
// the workers (stop) and wakes them from epoll. The returned function
// ends the watch and then closes the workers' eventfds, which nothing
// can signal any more.
func watchInterrupt(ctx context.Context, ws []*worker, stop *atomic.Bool) func() {
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
	return func() {
		close(finished)
		<-watcherDone
		for _, w := range ws {
			w.closeWake()
		}
	}
}

// threads are the workers' goroutines, each on a locked OS thread of its
// own, and the signals that take them through a run: each primes its
// connections (ready), waits for the start (or the abort), runs, reports
// it is drained, and closes its connections only once closeConns is
// closed — after the window's end has been observed (Config.OnWindow),
// so that the server's connection teardown is outside the window.
type threads struct {
	ready       chan error
	started     chan struct{}
	aborted     bool // written before started is closed, read after
	closeConns  chan struct{}
	wg, drained sync.WaitGroup
}

// startThreads starts a thread per worker of ws; each primes its
// connections at once.
func startThreads(cfg *Config, ws []*worker) *threads {
	t := &threads{ready: make(chan error, len(ws)), started: make(chan struct{}), closeConns: make(chan struct{})}
	for _, w := range ws {
		t.wg.Add(1)
		t.drained.Add(1)
		go t.work(cfg, w)
	}
	return t
}

// work is worker w's thread.
func (t *threads) work(cfg *Config, w *worker) {
	defer t.wg.Done()
	// Never unlocked: the thread exits with the goroutine, and its CPU
	// pin (WorkerCPUs) with it.
	runtime.LockOSThread()
	if len(cfg.WorkerCPUs) > 0 {
		w.pinErr = pinThread(cfg.WorkerCPUs[w.idx%len(cfg.WorkerCPUs)])
	}
	var niceErr error
	if cfg.Nice != 0 {
		// The thread is locked for good, so the nice value ends with it
		// and never reaches another goroutine's thread.
		if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), cfg.Nice); err != nil {
			niceErr = fmt.Errorf("loadgen: worker %d: nice %d: %w", w.idx, cfg.Nice, os.NewSyscallError("setpriority", err))
		}
	}
	t.ready <- errors.Join(w.prime(), niceErr)
	<-t.started
	if !t.aborted {
		w.run()
	}
	t.drained.Done()
	<-t.closeConns
	w.cleanup()
}

// primed waits for the n workers' priming and returns the first error.
func (t *threads) primed(n int) error {
	var firstErr error
	for range n {
		if err := <-t.ready; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// start starts the workers' schedules.
func (t *threads) start() { close(t.started) }

// abort ends the threads without a run, once they are primed.
func (t *threads) abort() {
	t.aborted = true
	close(t.started)
	t.finish()
}

// finish lets the drained workers close their connections and waits for
// their threads to end.
func (t *threads) finish() {
	close(t.closeConns)
	t.wg.Wait()
}

// setSchedules sets every worker's schedule: its start t0, the window from
// measureAt to endAt, its share of cfg.Requests, and its intervals for
// the hlog (ivOut, nil without one).
func setSchedules(cfg *Config, ws []*worker, t0, measureAt, endAt int64, ivOut chan ivMsg) {
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
			w.iv = newIntervals(cfg, i, measureAt, ivOut)
		}
	}
}

// processCounters are the generator process's counters at one end of
// the window: its CPU time, its allocations, and the steal time of its
// CPUs.
type processCounters struct {
	ru       sysstat.Rusage
	ruErr    error
	alloc    sysstat.Alloc
	steal    int64
	stealErr error
}

// readProcessCounters reads the process's counters now; cpus are the
// generator's CPUs.
func readProcessCounters(cpus []int) processCounters {
	var c processCounters
	c.ru, c.ruErr = sysstat.Self()
	c.alloc = sysstat.ReadAlloc()
	c.steal, c.stealErr = sysstat.StealNs(cpus)
	return c
}

// window is what Run observes of the measurement window from outside
// the workers: the process's counters at its start and end, how far the
// window-start work ran into it, and when it ended.
type window struct {
	cpus       []int // the generator's CPUs, for their steal time
	start, end processCounters
	overrun    time.Duration
	endNs      int64 // when the workers were done, ns since base
	clockStep  int64 // the wall clock's step over the run (Timing.ClockStepNs)
	ms1        runtime.MemStats
}

// awaitWindow waits for the workers to drain, doing the window-start
// and window-end work around the window that starts at measureAt.
//
// The window-start work (OnWindow: the harness's snapshot of the server,
// its /proc reads; then the process counters here) runs on the
// generator's CPUs and would preempt a busy-polling worker: it is done
// windowLead before the window starts, so that it falls in the warm-up,
// and its overrun into the window, if any, is reported.
func awaitWindow(cfg *Config, base time.Time, measureAt int64, drained *sync.WaitGroup) *window {
	workersDone := make(chan struct{})
	go func() { drained.Wait(); close(workersDone) }()
	win := &window{}
	win.cpus, _ = cpuset.Current()
	win.start = readProcessCounters(win.cpus)
	windowStarted := false
	lead := min(windowLead, cfg.Warmup/2)
	timer := time.NewTimer(time.Until(base.Add(time.Duration(measureAt) - lead)))
	select {
	case <-timer.C:
		if cfg.OnWindow != nil {
			cfg.OnWindow(true)
			windowStarted = true
		}
		win.start = readProcessCounters(win.cpus)
		win.overrun = time.Duration(int64(time.Since(base)) - measureAt)
		<-workersDone
	case <-workersDone:
		timer.Stop()
	}
	now := time.Now()
	win.endNs = int64(now.Sub(base))
	// Wall-clock time elapsed minus monotonic time elapsed: a step of the
	// wall clock, which the kernel's receive timestamps carry.
	win.clockStep = now.UnixNano() - base.UnixNano() - win.endNs
	win.end = readProcessCounters(win.cpus)
	runtime.ReadMemStats(&win.ms1)
	if windowStarted {
		cfg.OnWindow(false)
	}
	return win
}

// processCosts fills r's generator costs over the window: the process's
// CPU time, its CPUs' steal time, its garbage collections since ms0 and
// its allocations per request.
func (win *window) processCosts(r *Result, ms0 *runtime.MemStats) {
	g := &r.Generator
	start, end := &win.start, &win.end
	if start.ruErr == nil && end.ruErr == nil {
		g.ProcessCPUNs = end.ru.UserNs + end.ru.SystemNs - start.ru.UserNs - start.ru.SystemNs
	}
	switch {
	case start.stealErr != nil || end.stealErr != nil:
		g.StealUnavailable = errors.Join(start.stealErr, end.stealErr).Error()
	case r.WindowNs > 0 && len(win.cpus) > 0:
		g.StealNs = max(end.steal-start.steal, 0)
		g.StealFraction = finite(float64(g.StealNs) / (float64(r.WindowNs) * float64(len(win.cpus))))
	}
	g.GCPauseNs = int64(win.ms1.PauseTotalNs - ms0.PauseTotalNs)
	g.GCCycles = win.ms1.NumGC - ms0.NumGC
	if r.Requests.Sent > 0 {
		g.AllocsPerRequest = float64(end.alloc.Objects-start.alloc.Objects) / float64(r.Requests.Sent)
	}
}

// runWarnings adds to r the warnings about how the generator ran: an
// unpinned worker, a throttle, window-start work that overran into the
// window.
func runWarnings(r *Result, cfg *Config, ws []*worker, overrun time.Duration) {
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
}

// closeHlog ends the interval log hl: it closes the workers' intervals
// channel ivOut, waits for the collector's result (collected) and closes
// the file, naming it in r (Result.Hlog), or saying in r's warnings why
// not, and whether the writer fell behind.
func closeHlog(r *Result, cfg *Config, ws []*worker, hl *hlog, ivOut chan ivMsg, collected chan error) {
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

// judgeRun judges r with the run's own failures — interrupted, a
// worker with no connection for Timeout — and returns the first
// worker's fatal error, if any.
func judgeRun(r *Result, cfg *Config, ws []*worker, interrupted bool) error {
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
	return fatal
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
