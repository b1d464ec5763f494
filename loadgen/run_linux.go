package loadgen

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
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

	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0) // stops the world: only here and at the end
	base := time.Now()

	fds := make([]int, 0, cfg.Conns)
	for i := range cfg.Conns {
		fd, err := dial(sa, family, cfg.Timeout)
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, fmt.Errorf("loadgen: connect to %s (connection %d of %d): %w", cfg.Addr, i+1, cfg.Conns, err)
		}
		fds = append(fds, fd)
	}
	var stop atomic.Bool
	ws := make([]*worker, 0, cfg.Workers)
	for i := range cfg.Workers {
		var mine []int
		for j := i; j < len(fds); j += cfg.Workers {
			mine = append(mine, fds[j])
		}
		w, err := newWorker(&cfg, i, cfg.Workers, mine, codec, sa, family, base, &stop)
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
			// Never unlocked: the thread exits with the goroutine.
			runtime.LockOSThread()
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
		go func() { collected <- collect(ivOut, ws, hl, base, &cfg) }()
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

	// The process's counters at the start of the measurement.
	workersDone := make(chan struct{})
	go func() { drained.Wait(); close(workersDone) }()
	ruStart, ruErr := sysstat.Self()
	allocStart := sysstat.ReadAlloc()
	windowStarted := false
	timer := time.NewTimer(time.Until(base.Add(time.Duration(measureAt))))
	select {
	case <-timer.C:
		if cfg.OnWindow != nil {
			cfg.OnWindow(true)
			windowStarted = true
		}
		ruStart, ruErr = sysstat.Self()
		allocStart = sysstat.ReadAlloc()
		<-workersDone
	case <-workersDone:
		timer.Stop()
	}
	endNs := int64(time.Since(base))
	ruEnd, ruEndErr := sysstat.Self()
	allocEnd := sysstat.ReadAlloc()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	if windowStarted {
		cfg.OnWindow(false)
	}
	close(closeConns)
	wg.Wait()

	r := assemble(&cfg, ws, base, measureAt, endAt, endNs)
	if ruErr == nil && ruEndErr == nil {
		r.Generator.ProcessCPUNs = ruEnd.UserNs + ruEnd.SystemNs - ruStart.UserNs - ruStart.SystemNs
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
	var clamped int64
	windowEnd := int64(0)
	for _, w := range ws {
		s := &w.st
		st.scheduled += s.scheduled
		st.sent += s.sent
		st.completed += s.completed
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
		clamped += w.mix.clamped
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
	r.AchievedRatePerS = perSec(st.completed)

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
		Scheduled: st.scheduled, Sent: st.sent, Completed: st.completed, OK: st.ok, Failed: failed,
		Held: st.held, Unsent: st.unsent, Resent: st.resent,
		Reconnects: st.reconnects, ServerCloses: st.serverCloses, ClampedDraws: clamped,
		Warmup: st.warmup, WarmupErrors: st.warmupErrors,
	}
	r.Latency = Summarize(corrected.h, corrected.over+corrected.under)
	r.Uncorrected = Summarize(uncorrected.h, uncorrected.over+uncorrected.under)
	r.SendLag = Summarize(lag.h, lag.over+lag.under)
	r.HeldLag = Summarize(heldLag.h, heldLag.over+heldLag.under)

	g := &r.Generator
	g.Workers = len(ws)
	g.WorkerUserNs, g.WorkerSystemNs = st.userNs, st.sysNs
	g.WorkerRunQueueNs = st.runQueueNs
	g.WorkerVoluntaryCtxsw, g.WorkerInvoluntaryCtxsw = st.nvcsw, st.nivcsw
	if st.sent > 0 {
		g.CPUNsPerRequest = float64(st.userNs+st.sysNs) / float64(st.sent)
	}
	if st.spanNs > 0 {
		g.BusyFraction = finite(min(float64(st.busyNs)/float64(st.spanNs), 1))
	}
	g.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if set, err := cpuset.Current(); err == nil {
		g.CPUs = set.String()
	}
	return r
}

// collect merges the workers' interval histograms, index by index, and
// writes each to the hlog once every worker has sent it (the last,
// partial ones when the workers are done). It returns the pairs to the
// workers for reuse.
func collect(in <-chan ivMsg, ws []*worker, hl *hlog, base time.Time, cfg *Config) error {
	type agg struct {
		pair       *ivPair
		n          int
		start, end int64
	}
	pending := map[int64]*agg{}
	next := int64(0)
	var err error
	write := func(a *agg) {
		if err == nil {
			ms := func(ns int64) int64 { return base.Add(time.Duration(ns)).UnixMilli() }
			err = hl.interval(ms(a.start), ms(a.end), a.pair.corrected, a.pair.uncorrected)
		}
	}
	for m := range in {
		a := pending[m.index]
		if a == nil {
			a = &agg{pair: newPair(cfg), start: m.start}
			pending[m.index] = a
		}
		a.pair.corrected.Merge(m.pair.corrected)
		a.pair.uncorrected.Merge(m.pair.uncorrected)
		a.end = max(a.end, m.end)
		a.n++
		m.pair.corrected.Reset()
		m.pair.uncorrected.Reset()
		select {
		case ws[m.worker].iv.free <- m.pair:
		default:
		}
		for a := pending[next]; a != nil && a.n == len(ws); a = pending[next] {
			write(a)
			delete(pending, next)
			next++
		}
	}
	keys := make([]int64, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		write(pending[k])
	}
	return err
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
