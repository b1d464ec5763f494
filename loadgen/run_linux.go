package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"concbench/internal/cpuset"
	"concbench/internal/sysstat"
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

// windowLead is how long before the window the window-start work runs
// (at most half the warm-up).
const windowLead = 20 * time.Millisecond
