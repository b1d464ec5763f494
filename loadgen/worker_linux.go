package loadgen

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"concbench/handleset"
	"concbench/internal/sysstat"
	"concbench/wire"
)

// connState is where a connection is in its life.
type connState uint8

const (
	connUp         connState = iota // connected; requests may be sent
	connConnecting                  // a non-blocking connect is in progress
	connDown                        // closed; reconnected at retryAt while the run sends
)

// conn is one connection of a worker. Only its worker touches it.
type conn struct {
	idx       int
	fd        int
	gen       uint32 // bumped at every close, so that stale epoll events are dropped
	state     connState
	writing   bool   // EPOLLOUT is armed: output is pending
	in        []byte // received bytes not yet decoded
	out       []byte // encoded requests not yet written, from outOff
	outOff    int
	fly       ring // requests written (or about to be), oldest first
	unsent    int  // entries at the back of fly not yet handed to write(2)
	dirty     bool // in the worker's dirty list
	retryAt   int64
	backoff   int64
	connStart int64
	skipped   uint64 // id of the request whose response came back out of order
}

// Worker constants: the reconnection backoff after a failure (a clean
// server close reconnects at once), the period of the timed checks, the
// initial input buffer, and the events taken per epoll wait.
const (
	minBackoff = int64(10 * time.Millisecond)
	maxBackoff = int64(time.Second)
	tickEvery  = int64(5 * time.Millisecond) // timeouts and reconnects are checked this often
	inBufSize  = 8 << 10
	maxEvents  = 256
)

// workerStats are one worker's counters; it alone writes them, and Run
// reads them after the worker has exited.
type workerStats struct {
	scheduled, sent, completed, ok, held, unsent, resent int64
	inWindow                                             int64 // measured requests completed by the window's end
	warmup, warmupErrors, reconnects, serverCloses       int64
	errs                                                 [numErrKinds]int64
	busyNs, spanNs, userNs, sysNs                        int64
	runQueueNs, nvcsw, nivcsw                            int64
	windowEnd, lastResponse                              int64
	kernelStamped, userStamped, stampBeforeSend          int64 // reads by receive-timestamp source; responses stamped before their send
}

// numSlices is how many equal slices the overload detector cuts an open
// loop's window into.
const numSlices = 10

// slices are one worker's per-slice statistics for the overload
// detector: per slice of the window (by intended send time), the measured
// successful responses and their summed corrected latency; at each slice
// boundary (numSlices+1 of them, the window's edges included), the
// requests in flight and how far the next send lagged its schedule.
type sliceStats struct {
	n, sum   [numSlices]int64
	inflight [numSlices + 1]int64
	debt     [numSlices + 1]int64
	sampled  int   // boundaries sampled so far
	next     int64 // when the next boundary is due
}

// worker is one event-loop thread: it owns a share of the connections, its
// share of the arrival process, its histograms and counters, and drives
// them with epoll on a locked OS thread. See doc.go for the loop.
//
// Note: the worker calls epoll directly rather than through a handleset.Set.
// handleset.Waiter.Wait rounds its timeout up to whole milliseconds, and the
// schedule needs microseconds (epoll_pwait2 takes a timespec); and its
// registration table and EventHandler dispatch serve many threads sharing
// one set, which a worker's private loop does not need.
type worker struct {
	idx, n  int
	cfg     *Config
	codec   wire.Codec
	sa      unix.Sockaddr
	family  int
	base    time.Time
	stop    *atomic.Bool
	epfd    int
	wake    *handleset.Wakeup
	events  []unix.EpollEvent
	ts      unix.Timespec // epoll_pwait2's timeout; a field, so it never escapes per call
	noPwait bool          // the kernel lacks epoll_pwait2 (< 5.11): millisecond timeouts and spinning

	conns    []*conn
	dirty    []*conn
	inflight int // entries in all fly rings
	// written counts the requests written to a socket and not yet
	// answered, over every worker of the run (shared): a request sent
	// while it is above zero may have had the server's queue ahead of it.
	written    *atomic.Int64
	connecting int
	down       int
	nextRetry  int64
	nextTick   int64

	closed  bool
	depth   int
	maxFly  int // per connection: MaxInFlight (open loop) or Outstanding (closed loop)
	spin    int64
	timeout int64

	arr         *arrivals
	pace        pacer
	hasRoom     func(int) bool
	start       int64 // the schedule's t0, ns since base
	measureAt   int64
	endAt       int64 // end of the window (math.MaxInt64 in Requests mode)
	limited     bool  // Requests mode: stop after quota measured requests (else at endAt)
	quota       int64 // Requests mode: measured requests this worker issues (may be 0)
	issued      int64
	sending     bool
	blocked     bool  // the next batch (or resend) is waiting for a connection with room
	lastBlocked int64 // the last time a due batch found no connection with room
	retry       ring  // requests to resend on another connection
	mix         *mixer
	req         wire.Request
	resp        wire.Response
	nextID      uint64

	measuring                            bool
	corrected, uncorrected, lag, heldLag *recorder
	// fromIntended is the latency from the intended send time with the
	// worker's own send lag always included (wrk2's definition);
	// ownLagFree never includes it (from the actual send, except for
	// requests the server held back); corrected includes it when other
	// requests were in flight (see response); rxLag is how long after the
	// kernel received a response the worker read it.
	fromIntended, ownLagFree, rxLag *recorder
	classes                         *classRecorders // Config.PriorityClasses (nil without)
	iv                              *intervals
	st                              workerStats

	busy      bool     // PollBusy
	autoSpin  bool     // Spin measured (Config.Spin 0)
	late      linHist  // timed waits' lateness: the probe's and the run's
	lateStart Lateness // the probe's alone
	idle      linHist  // PollBusy: the length of idle loop iterations (machine stalls show here)
	sendCall  linHist  // how long each write(2) of requests took (measured requests' windows)
	prevIdle  int64    // the previous iteration's start if it was idle, else 0
	nextStall int64    // the test hook's next stall (Config.stall)

	// Kernel receive timestamps (SO_TIMESTAMPNS): the recvmsg header and
	// buffers, and the run base's wall-clock time to convert them.
	msg      unix.Msghdr
	iov      unix.Iovec
	oob      []byte
	realBase int64

	slicing     bool // open loop with a Duration: the overload detector's slices are kept
	sl          sliceStats
	sample      sendSample
	ru0         sysstat.Rusage // the worker thread's at the start of the measurement
	runQueue0   int64          // its schedstat wait then (-1: unavailable)
	primeErr    error
	fatal       error
	lastUp      int64 // the last tick that found a connection up
	unreachable bool  // the run stopped early: no connection for Timeout
	pinErr      error // WorkerCPUs: the thread could not be pinned (a warning)

	trace        []traceRec // Config.Trace: preallocated, never grown
	traceDropped int64
	atKernel     bool // the responses being read carry the kernel's receive time
}

// newWorker returns worker idx of n for cfg (defaults applied) over the
// connected, non-blocking sockets fds, which it owns from now on (cleanup
// closes them), with its epoll instance and wake-up eventfd.
func newWorker(cfg *Config, idx, n int, fds []int, codec wire.Codec, sa unix.Sockaddr, family int, base time.Time, stop *atomic.Bool, written *atomic.Int64) (*worker, error) {
	w := &worker{
		idx: idx, n: n, cfg: cfg, codec: codec, sa: sa, family: family, base: base, stop: stop, written: written,
		epfd: -1, events: make([]unix.EpollEvent, maxEvents),
		closed:  cfg.Closed,
		depth:   cfg.Depth,
		maxFly:  cfg.MaxInFlight,
		timeout: int64(cfg.Timeout),
		mix:     newMixer(cfg, idx),
		nextID:  uint64(idx) + 1,
		endAt:   math.MaxInt64,

		lastBlocked: math.MinInt64,

		corrected:    newRecorder(cfg),
		uncorrected:  newRecorder(cfg),
		lag:          newRecorder(cfg),
		heldLag:      newRecorder(cfg),
		fromIntended: newRecorder(cfg),
		ownLagFree:   newRecorder(cfg),
		rxLag:        newRecorder(cfg),
		classes:      newClassRecorders(cfg),

		busy:     cfg.Poll == PollBusy,
		autoSpin: cfg.Spin == 0,
		spin:     int64(cfg.Spin),
		oob:      make([]byte, 256),
		realBase: base.UnixNano(),
	}
	if cfg.Trace > 0 {
		w.trace = make([]traceRec, 0, (cfg.Trace+n-1)/n)
	}
	if w.closed {
		w.maxFly = cfg.Outstanding
	} else {
		w.arr = newArrivals(cfg, idx, n)
	}
	for _, fd := range fds {
		w.conns = append(w.conns, &conn{idx: len(w.conns), fd: fd, in: make([]byte, 0, inBufSize)})
	}
	w.dirty = make([]*conn, 0, len(w.conns))
	w.hasRoom = func(i int) bool {
		c := w.conns[i]
		return c.state == connUp && c.fly.n+w.depth <= w.maxFly
	}
	if err := w.setup(); err != nil {
		w.cleanup()
		w.closeWake()
		return nil, err
	}
	return w, nil
}

// clock returns the monotonic time in ns since the run's base. It does not
// allocate (time.Since reads the monotonic clock).
func (w *worker) clock() int64 { return int64(time.Since(w.base)) }

// setup creates the worker's epoll instance and wake-up eventfd and
// registers its connections.
func (w *worker) setup() error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	w.epfd = epfd
	if w.wake, err = handleset.NewWakeup(); err != nil {
		return err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, w.wake.Fd(), &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	for _, c := range w.conns {
		if err := w.ctl(c, unix.EPOLL_CTL_ADD, unix.EPOLLIN); err != nil {
			return err
		}
	}
	return nil
}

// ctl adds or modifies c's registration with the given interest; the epoll
// data carries the connection's index and generation.
func (w *worker) ctl(c *conn, op int, events uint32) error {
	ev := unix.EpollEvent{Events: events | unix.EPOLLRDHUP, Fd: int32(c.idx), Pad: int32(c.gen)}
	if err := unix.EpollCtl(w.epfd, op, c.fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// cleanup closes the worker's connections and epoll instance; the worker's
// thread calls it when it is done. The wake-up eventfd stays open until
// closeWake, because another goroutine may still signal it.
func (w *worker) cleanup() {
	for _, c := range w.conns {
		if c.state != connDown && c.fd >= 0 {
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	if w.epfd >= 0 {
		unix.Close(w.epfd)
		w.epfd = -1
	}
}

// closeWake closes the wake-up eventfd, once nothing can signal it.
func (w *worker) closeWake() {
	if w.wake != nil {
		w.wake.Close()
		w.wake = nil
	}
}

// prime sends one request on every connection and waits for the answers,
// so that every connection (and the server's side of it) has carried a
// request before the schedule starts. Any failure is returned: a server
// that cannot answer one request per connection cannot be measured.
func (w *worker) prime() error {
	// The worker's thread is locked and never unlocked (it exits with the
	// worker), so its timer slack can be changed for good: the default
	// 50 µs would let every timed wait wake up to 50 µs late by design.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	w.probeLateness()
	for _, c := range w.conns {
		w.enqueue(c, 0, flagPrime)
	}
	w.loop(false)
	if w.fatal != nil {
		return w.fatal
	}
	return w.primeErr
}

// probeSamples is how many timed waits probeLateness measures.
const probeSamples = 64

// probeLateness measures how late this machine wakes a thread from a
// timed wait: probeSamples waits in epoll_pwait2 with nothing to wake
// them, of 50–450 µs each (about 16 ms in all). A sleeping worker sets
// its spin margin from it (and from every timed wait of the run); every
// result reports it, busy or not, as the machine's wake-up lateness.
func (w *worker) probeLateness() {
	if w.noPwait {
		return
	}
probe:
	for i := range probeSamples {
		timeout := int64(50*time.Microsecond) + int64(i%9)*int64(50*time.Microsecond)
		w.ts = unix.NsecToTimespec(timeout)
		t0 := w.clock()
		r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(w.epfd),
			uintptr(unsafe.Pointer(&w.events[0])), uintptr(len(w.events)),
			uintptr(unsafe.Pointer(&w.ts)), 0, 0)
		late := w.clock() - t0 - timeout
		switch {
		case e == unix.ENOSYS:
			w.noPwait = true
			return
		case e == unix.EINTR:
			continue
		case e != 0 || r != 0:
			// An error, or an event (the run interrupted, a server that
			// speaks first; level-triggered, it is reported again): the
			// loop deals with it. Stop probing.
			break probe
		case late >= 0:
			w.late.add(late)
		}
	}
	w.lateStart = w.late.summary()
	if w.autoSpin {
		w.spin = spinFor(&w.late)
	}
}

// run drives the schedule from w.start until the window ends and every
// request has been answered, failed or timed out.
func (w *worker) run() {
	if d := w.start - w.clock(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	if !w.closed && !w.limited {
		w.slicing = true
		w.sl.next = w.measureAt
		if w.cfg.Arrival == Poisson {
			w.sample.init(w.measureAt, w.endAt, w.arr.gap)
		}
	}
	if w.cfg.stall.every > 0 {
		w.nextStall = w.measureAt + int64(w.cfg.stall.every)
	}
	w.sending = true
	w.nextTick = 0
	if w.closed {
		now := w.clock()
		for _, c := range w.conns {
			w.fill(c, now)
		}
	}
	w.loop(true)
	// Requests left waiting to be resent (a server close during the drain,
	// or at the end) were never answered.
	for w.retry.n > 0 {
		if e := w.retry.pop(); e.flags&flagMeasured != 0 {
			w.st.unsent++
		}
	}
	now := w.clock()
	if w.measuring {
		if ru, err := sysstat.Thread(); err == nil {
			w.st.userNs = ru.UserNs - w.ru0.UserNs
			w.st.sysNs = ru.SystemNs - w.ru0.SystemNs
			w.st.nvcsw = ru.Voluntary - w.ru0.Voluntary
			w.st.nivcsw = ru.Involuntary - w.ru0.Involuntary
		}
		if q, err := sysstat.ThreadRunQueueNs(); err == nil && w.runQueue0 >= 0 {
			w.st.runQueueNs = q - w.runQueue0
		}
		w.st.spanNs = now - w.measureAt
	}
	if w.iv != nil {
		w.iv.finish(now) // also when the worker never measured: the collector must hear it is done
	}
}

// loop is the event loop: send what is due, flush, wait in epoll until the
// next deadline (PollSleep: polling instead of sleeping within the spin
// margin of a scheduled send; PollBusy: polling always), handle the
// events. It returns when nothing is left to send or to wait for (or the
// run is stopped). running is false while priming.
func (w *worker) loop(running bool) {
	for {
		now := w.clock()
		if w.stop.Load() {
			w.interrupt()
			return
		}
		if now >= w.nextTick {
			w.tick(now, running)
		}
		if w.nextStall > 0 && now >= w.nextStall && w.sending {
			w.stallNow()
			continue
		}
		worked := false
		if w.sending && !w.closed {
			worked = w.pump(now)
		}
		if len(w.dirty) > 0 {
			w.flushAll()
			worked = true
		}
		if w.fatal != nil || !w.sending && w.inflight == 0 && w.connecting == 0 {
			return
		}
		timeout := w.waitTime(now)
		t0 := w.clock()
		if worked && w.measuring {
			w.st.busyNs += t0 - now
		}
		n := w.wait(timeout)
		if n == 0 {
			switch {
			case timeout > 0:
				// A timed wait that timed out: how late did it wake?
				if late := w.clock() - t0 - timeout; late >= 0 {
					w.late.add(late)
				}
			case worked:
				w.prevIdle = 0
			default:
				// An idle iteration: its length is the loop's own cost,
				// unless the machine stalled the thread meanwhile.
				if w.prevIdle != 0 && w.measuring {
					w.idle.add(now - w.prevIdle)
				}
				w.prevIdle = now
			}
			continue
		}
		w.prevIdle = 0
		t1 := w.clock()
		for i := range n {
			w.event(&w.events[i])
			if w.sending && !w.closed && i+1 < n {
				// Between events, send what fell due while handling them:
				// a batch of responses must not hold back the schedule.
				if now := w.clock(); w.start+w.arr.next <= now && !w.blocked {
					if w.pump(now) && len(w.dirty) > 0 {
						w.flushAll()
					}
				}
			}
		}
		if w.measuring {
			// A poll that returned events is work too: a busy worker's
			// cost per request includes it (the generator's ceiling is
			// its rate over its busy share; harness).
			from := t1
			if timeout == 0 {
				from = t0
			}
			w.st.busyNs += w.clock() - from
		}
	}
}

// stallNow is the test hook of Config.stall: the worker stops for
// stall.dur (spinning, as a thread the machine does not run), then goes
// on; everything due meanwhile is late.
func (w *worker) stallNow() {
	until := w.clock() + int64(w.cfg.stall.dur)
	for w.clock() < until {
	}
	w.nextStall += int64(w.cfg.stall.every)
}

// tick does what is checked by time rather than by event: the start of the
// measurement, the end of the window, interval rotation, reconnects and
// request timeouts; and sets the next tick.
func (w *worker) tick(now int64, running bool) {
	if running {
		if !w.measuring && now >= w.measureAt {
			w.measuring = true
			w.ru0, _ = sysstat.Thread() // zero if it fails
			w.runQueue0 = -1
			if q, err := sysstat.ThreadRunQueueNs(); err == nil {
				w.runQueue0 = q
			}
		}
		if w.slicing && w.measuring {
			w.sampleSlices(now)
		}
		if w.sending && now >= w.endAt {
			if !w.closed {
				// Send what fell due before the window's end first: only
				// what could not be sent (every connection full) is unsent.
				w.pump(now)
			}
			if w.sending {
				w.stopSending()
			}
		}
		if w.iv != nil && w.measuring && now >= w.iv.end {
			w.iv.rotate(now)
		}
	}
	if w.sending && w.down > 0 && now >= w.nextRetry {
		w.reconnect(now)
	}
	anyUp := false
	for _, c := range w.conns {
		switch {
		case c.state == connUp && c.fly.n > c.unsent && now-c.fly.at(0).sent > w.timeout:
			w.fail(c, errTimeout)
		case c.state == connConnecting && now-c.connStart > w.timeout:
			w.connectFailed(c)
		}
		anyUp = anyUp || c.state == connUp
	}
	if anyUp || w.lastUp == 0 {
		w.lastUp = now
	} else if w.sending && now-w.lastUp > w.timeout {
		w.unreachable = true // every connection down for Timeout: give up
		w.stopSending()
	}
	next := now + tickEvery
	if running {
		if !w.measuring {
			next = min(next, w.measureAt)
		}
		if w.sending {
			next = min(next, w.endAt)
		}
		if w.iv != nil && w.measuring {
			next = min(next, w.iv.end)
		}
		if w.slicing && w.sl.sampled <= numSlices {
			next = min(next, w.sl.next)
		}
	}
	if w.sending && w.down > 0 {
		next = min(next, w.nextRetry)
	}
	w.nextTick = next
	if w.autoSpin && !w.busy {
		w.spin = spinFor(&w.late) // keeps measuring: every timed wait counts
	}
}

// sampleSlices records the overload detector's boundary samples that are
// due: the requests in flight, and how far the next send lags its
// schedule when no connection has room for it.
func (w *worker) sampleSlices(now int64) {
	for w.sl.sampled <= numSlices && now >= w.sl.next {
		i := w.sl.sampled
		w.sl.inflight[i] = int64(w.inflight)
		if w.blocked {
			w.sl.debt[i] = max(now-(w.start+w.arr.next), 0)
		}
		w.sl.sampled++
		w.sl.next = w.measureAt + (w.endAt-w.measureAt)*int64(w.sl.sampled)/numSlices
	}
}

// waitTime returns how long the next epoll wait may block, in ns (0: poll).
func (w *worker) waitTime(now int64) int64 {
	if w.busy {
		return 0
	}
	d := w.nextTick - now
	if w.sending && !w.closed && !w.blocked {
		send := w.start + w.arr.next - now
		if w.spin >= 0 {
			send -= w.spin // spin (poll) for the last Spin before the send
		}
		d = min(d, send)
	}
	return max(d, 0)
}

// wait waits for events for up to timeout ns (0: poll) and returns how many
// are in w.events.
func (w *worker) wait(timeout int64) int {
	var n int
	var err error
	switch {
	case timeout == 0:
		// A poll never blocks: a raw system call keeps the worker's P and
		// spares the Go scheduler's system-call bookkeeping, which a
		// busy-polling worker would pay millions of times a second, and
		// which keeps sysmon waking up on the generator's CPU. Measured
		// (busy polling, 2000 req/s, 5 s): with unix.EpollWait the worker
		// was preempted 2 100 times a second and waited 4.1% of its time
		// for its CPU; with the raw call 270–320 times and 0.4–0.5%.
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(w.epfd),
			uintptr(unsafe.Pointer(&w.events[0])), uintptr(len(w.events)), 0, 0, 0)
		n = int(r)
		if e != 0 {
			err = e
		}
	case w.noPwait:
		// Millisecond resolution: sleep the whole milliseconds, poll the rest.
		n, err = unix.EpollWait(w.epfd, w.events, int(timeout/int64(time.Millisecond)))
	default:
		w.ts = unix.NsecToTimespec(timeout)
		r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(w.epfd),
			uintptr(unsafe.Pointer(&w.events[0])), uintptr(len(w.events)),
			uintptr(unsafe.Pointer(&w.ts)), 0, 0)
		n = int(r)
		if e == unix.ENOSYS {
			w.noPwait = true
			return 0
		}
		if e != 0 {
			err = e
		}
	}
	switch {
	case err == unix.EINTR:
		return 0
	case err != nil:
		w.fatal = os.NewSyscallError("epoll_wait", err)
		w.stop.Store(true)
		return 0
	}
	return n
}

// event handles one epoll event.
func (w *worker) event(ev *unix.EpollEvent) {
	if ev.Fd < 0 {
		w.wake.Drain()
		return
	}
	c := w.conns[ev.Fd]
	if uint32(ev.Pad) != c.gen {
		return // the connection was closed since the kernel queued this
	}
	switch c.state {
	case connConnecting:
		w.connected(c)
	case connUp:
		if ev.Events&unix.EPOLLOUT != 0 && c.writing {
			w.write(c)
			if c.state != connUp {
				return
			}
		}
		if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			w.read(c)
		}
	}
}

// pump sends the open loop's due batches (and requests waiting to be
// resent), each to the next connection with room, and reports whether it
// sent any. A due batch that finds no connection with room waits; when it
// is sent it is marked held, as is every batch that was due while no
// connection had room. The schedule behind it keeps its intended times.
func (w *worker) pump(now int64) bool {
	sent := false
	for w.sending {
		t := w.start + w.arr.next
		due := t <= now
		if due && (!w.limited && t >= w.endAt || w.limited && t >= w.measureAt && w.issued >= w.quota) {
			// The window is over; in Requests mode it ends where the
			// first batch beyond the quota would have started.
			w.st.windowEnd = t
			w.stopSending()
			return sent
		}
		if w.retry.n == 0 && !due {
			w.blocked = false
			return sent
		}
		i := w.pace.pick(len(w.conns), w.hasRoom)
		if i < 0 {
			w.blocked = true
			if due {
				w.lastBlocked = now
			}
			return sent
		}
		w.blocked = false
		c := w.conns[i]
		sent = true
		if w.retry.n > 0 {
			w.resend(c, w.retry.pop())
			continue
		}
		var flags uint8
		if t <= w.lastBlocked {
			flags |= flagHeld
		}
		k := int64(w.depth)
		if t >= w.measureAt {
			flags |= flagMeasured
			if w.limited {
				k = min(k, w.quota-w.issued)
				w.issued += k
			}
			w.st.scheduled += k
		}
		for i := range k {
			if i == 0 {
				w.enqueue(c, t, flags|flagFirst)
			} else {
				w.enqueue(c, t, flags)
			}
		}
		w.arr.advance()
	}
	return sent
}

// fill tops a closed-loop connection up to Outstanding in flight, a batch
// of Depth at a time (resends first).
func (w *worker) fill(c *conn, now int64) {
	for w.sending && c.state == connUp && c.fly.n+w.depth <= w.maxFly {
		if w.retry.n > 0 {
			w.resend(c, w.retry.pop())
			continue
		}
		var flags uint8
		k := int64(w.depth)
		if now >= w.measureAt {
			if w.limited && w.issued >= w.quota {
				w.stopSending()
				return
			}
			flags = flagMeasured
			if w.limited {
				k = min(k, w.quota-w.issued)
				w.issued += k
			}
		}
		for range k {
			w.enqueue(c, now, flags)
		}
	}
}

// enqueue draws a request from the mix (a plain work request for priming),
// appends it to c's output and its entry to c's in-flight ring, and marks c
// for flushing. It does not allocate in steady state.
func (w *worker) enqueue(c *conn, intended int64, flags uint8) {
	w.req.ID = w.nextID
	w.nextID += uint64(w.n)
	if flags&flagPrime != 0 {
		w.req = wire.Request{ID: w.req.ID, Priority: primePriority(w.cfg)}
	} else {
		w.mix.fill(&w.req)
	}
	c.out = w.codec.AppendRequest(c.out, &w.req)
	c.fly.push(entry{id: w.req.ID, intended: intended, size: int32(w.req.Size), op: w.req.Op, flags: flags, prio: w.req.Priority})
	w.inflight++
	c.unsent++
	if !c.dirty {
		c.dirty = true
		w.dirty = append(w.dirty, c)
	}
}

// resend re-issues a request that was never answered because its
// connection closed first (or never written because its connection
// failed): a fresh request with a new id, keeping the intended time and
// flags, so its corrected latency includes the lost attempt.
func (w *worker) resend(c *conn, e entry) {
	w.enqueue(c, e.intended, e.flags)
}

// flushAll flushes every connection marked dirty.
func (w *worker) flushAll() {
	for _, c := range w.dirty {
		c.dirty = false
		if c.state == connUp {
			w.flush(c)
		}
	}
	w.dirty = w.dirty[:0]
}

// flush stamps c's new requests with the actual send time (and, in closed
// loop, the intended one), records their send lag, and writes c's output.
func (w *worker) flush(c *conn) {
	if c.unsent > 0 {
		now := w.clock()
		others := w.written.Load() > 0
		w.written.Add(int64(c.unsent))
		for i := c.fly.n - c.unsent; i < c.fly.n; i++ {
			e := c.fly.at(i)
			e.sent = now
			if others {
				e.flags |= flagQueued
			}
			others = true // the rest of the batch follows this one
			if w.closed {
				e.intended = now
			}
			if e.flags&flagMeasured == 0 {
				continue
			}
			if e.flags&flagResent == 0 {
				w.st.sent++ // a resend was counted at its first send
			}
			if w.closed {
				continue
			}
			if e.flags&(flagHeld|flagResent) != 0 {
				if e.flags&flagHeld != 0 {
					w.st.held++
				}
				w.heldLag.record(now - e.intended)
			} else {
				w.lag.record(now - e.intended)
			}
			if e.flags&flagFirst != 0 && w.sample.on {
				w.sample.add(e.intended, now, e.flags&(flagHeld|flagResent) == 0)
			}
		}
		c.unsent = 0
	}
	w.write(c)
}

// write writes c's pending output until done or the socket is full; then
// it waits for EPOLLOUT.
func (w *worker) write(c *conn) {
	for c.outOff < len(c.out) {
		t0 := w.clock()
		n, err := handleset.Write(c.fd, c.out[c.outOff:])
		if w.measuring {
			// On loopback a send runs the server's receive path and its
			// wake-up in this thread: the floor of this generator's
			// punctuality, reported (Timing.SendCall).
			w.sendCall.add(w.clock() - t0)
		}
		switch {
		case handleset.IsWouldBlock(err):
			if !c.writing {
				c.writing = true
				w.rearm(c, unix.EPOLLIN|unix.EPOLLOUT)
			}
			return
		case err != nil:
			w.fail(c, errWrite)
			return
		}
		c.outOff += n
	}
	c.out, c.outOff = c.out[:0], 0
	if c.writing {
		c.writing = false
		w.rearm(c, unix.EPOLLIN)
	}
}

// rearm changes c's interest; failing that, the connection is unusable.
func (w *worker) rearm(c *conn, events uint32) {
	if err := w.ctl(c, unix.EPOLL_CTL_MOD, events); err != nil {
		w.fail(c, errWrite)
	}
}

// read reads what c has, decodes and checks every complete response, and
// keeps the partial rest. The responses are timestamped with the kernel's
// receive time of the data (SO_TIMESTAMPNS), so that a worker busy with
// other connections, or waking from a sleep, does not add its own delay
// to their latency; without a kernel timestamp, with the time of the read.
func (w *worker) read(c *conn) {
	if len(c.in) == cap(c.in) {
		nb := make([]byte, len(c.in), 2*cap(c.in))
		copy(nb, c.in)
		c.in = nb
	}
	n, kts, err := w.recv(c.fd, c.in[len(c.in):cap(c.in)])
	switch {
	case err == unix.EAGAIN:
		return
	case err != nil:
		w.fail(c, errRead)
		return
	case n == 0:
		w.eof(c)
		return
	}
	at := w.clock()
	w.atKernel = false
	if kts != 0 {
		if k := kts - w.realBase; k <= at {
			if w.measuring {
				w.rxLag.record(at - k)
			}
			at = k
			w.atKernel = true
		}
		w.st.kernelStamped++
	} else {
		w.st.userStamped++
	}
	c.in = c.in[:len(c.in)+n]
	off := 0
	for off < len(c.in) {
		m, err := w.codec.DecodeResponse(c.in[off:], &w.resp)
		if err != nil {
			w.fail(c, errMalformedResponse)
			return
		}
		if m == 0 {
			break
		}
		off += m
		if !w.response(c, at) {
			return // the connection is closed
		}
	}
	if off > 0 {
		c.in = c.in[:copy(c.in, c.in[off:])]
	}
}

// recv reads from the non-blocking socket fd into p with recvmsg(2) and
// returns the bytes read and the kernel's receive timestamp of the data
// (CLOCK_REALTIME ns; 0 if the kernel gave none). The message header and
// its buffers are the worker's, reused: recv does not allocate. A raw
// system call: the socket never blocks.
func (w *worker) recv(fd int, p []byte) (int, int64, error) {
	w.iov.Base = &p[0]
	w.iov.SetLen(len(p))
	w.msg.Iov = &w.iov
	w.msg.SetIovlen(1)
	w.msg.Control = &w.oob[0]
	w.msg.SetControllen(len(w.oob))
	w.msg.Flags = 0
	var r uintptr
	for {
		var e unix.Errno
		r, _, e = unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&w.msg)), unix.MSG_DONTWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, 0, e
		}
		break
	}
	var ts int64
	ctl := w.oob[:w.msg.Controllen]
	for len(ctl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(ctl) {
			break
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && l >= unix.SizeofCmsghdr+int(unsafe.Sizeof(unix.Timespec{})) {
			t := (*unix.Timespec)(unsafe.Pointer(&ctl[unix.SizeofCmsghdr]))
			ts = t.Nano()
		}
		l = (l + 7) &^ 7 // CMSG_ALIGN on 64-bit
		if l >= len(ctl) {
			break
		}
		ctl = ctl[l:]
	}
	return int(r), ts, nil
}

// response matches w.resp to the oldest request in flight on c, checks it,
// and records its latency or its failure. It reports whether c is still
// open.
func (w *worker) response(c *conn, at int64) bool {
	if w.cfg.Throttle > 0 {
		for until := w.clock() + int64(w.cfg.Throttle); w.clock() < until; {
		}
	}
	if c.fly.n == c.unsent {
		w.fail(c, errUnexpectedResponse)
		return false
	}
	e := c.fly.pop()
	w.inflight--
	w.written.Add(-1)
	kind := w.check(c, &e)
	switch {
	case e.flags&flagPrime != 0:
		switch {
		case kind == kindOK || w.primeErr != nil:
		case w.resp.Status != wire.StatusOK && len(w.resp.Payload) > 0:
			// The server answered, and said no (thread per connection at
			// its cap answers 503 with its reason): name its reason rather
			// than suggest a foreign server.
			w.primeErr = fmt.Errorf("loadgen: connection %d of worker %d: priming request %d: the server answered status %s: %s",
				c.idx, w.idx, e.id, w.resp.Status, reasonText(w.resp.Payload))
		default:
			w.primeErr = fmt.Errorf("loadgen: connection %d of worker %d: priming request %d: %s (response id %d, status %s, %d-byte payload, checksum present %t); for a server that is not concbench's, try verify auto, status or none",
				c.idx, w.idx, e.id, kind, w.resp.ID, w.resp.Status, len(w.resp.Payload), w.resp.HasChecksum)
		}
	case e.flags&flagMeasured == 0:
		w.st.warmup++
		if kind != kindOK {
			w.st.warmupErrors++
		}
	default:
		if at < e.sent {
			// Stamped before it was sent: the kernel's and the monotonic
			// clock disagree (a step of the wall clock). Counted; the
			// response gets its send time.
			w.st.stampBeforeSend++
			at = e.sent
		}
		w.st.completed++
		if at <= w.endAt {
			w.st.inWindow++
		}
		w.st.lastResponse = max(w.st.lastResponse, at)
		if kind != kindOK {
			w.st.errs[kind]++
			break
		}
		w.st.ok++
		// The corrected latency runs from the intended send time when the
		// server held the request back (the in-flight bound, a close that
		// made it resend: coordinated omission, the server's doing), and
		// also when the worker itself sent it late while other requests
		// were in flight: their queue in the server could have absorbed
		// the lateness (had it been sent on time it would have waited
		// anyway), so counting from the actual send could hide queueing.
		// Sent late with nothing in flight, it found the server idle, and
		// its latency from the actual send is what an on-time send would
		// have measured: the worker's lateness is not the server's.
		// ownLagFree never charges the worker's lateness: the distance
		// between the two is what the verdict judges.
		lat, unc, full := at-e.sent, at-e.sent, at-e.intended
		switch {
		case e.flags&(flagHeld|flagResent) != 0:
			lat = full
			w.ownLagFree.record(full)
		case e.flags&flagQueued != 0:
			lat = full
			w.ownLagFree.record(unc)
		default:
			w.ownLagFree.record(unc)
		}
		if cap(w.trace) > 0 {
			if len(w.trace) < cap(w.trace) {
				w.trace = append(w.trace, traceRec{id: e.id, intended: e.intended, sent: e.sent, recv: at,
					kernel: w.atKernel, corrected: e.flags&(flagHeld|flagResent|flagQueued) != 0})
			} else {
				w.traceDropped++
			}
		}
		w.corrected.record(lat)
		w.classes.record(e.prio, lat)
		w.uncorrected.record(unc)
		w.fromIntended.record(full)
		if w.slicing {
			if j := (e.intended - w.measureAt) * numSlices / (w.endAt - w.measureAt); j >= 0 && j < numSlices {
				w.sl.n[j]++
				w.sl.sum[j] += lat
			}
		}
		if w.iv != nil {
			w.iv.record(at, lat, unc)
		}
	}
	if w.resp.Close {
		w.serverClose(c)
		return false
	}
	if w.closed {
		w.fill(c, at)
	}
	return true
}

// check verifies w.resp as the answer to e per the Verify mode.
func (w *worker) check(c *conn, e *entry) errKind {
	resp := &w.resp
	switch w.cfg.Verify {
	case VerifyNone:
		return kindOK
	case VerifyStatus:
		return statusKind(resp.Status)
	case VerifyAuto:
		if resp.ID == 0 {
			// A foreign server: no id to match; a checksum, if any, still must.
			if resp.HasChecksum && wire.Checksum(resp.ID, resp.Payload) != resp.Checksum {
				return errVerifyChecksum
			}
			return statusKind(resp.Status)
		}
		if !resp.HasChecksum {
			if resp.ID != e.id {
				return w.misattributed(c, e)
			}
			return statusKind(resp.Status)
		}
	case VerifyFull:
		if !resp.HasChecksum {
			return errVerifyChecksum
		}
	}
	req := wire.Request{ID: e.id, Op: e.op, Size: int(e.size)}
	if wire.Verify(&req, resp) != nil {
		switch {
		case resp.ID != e.id:
			return w.misattributed(c, e)
		case wire.Checksum(resp.ID, resp.Payload) != resp.Checksum:
			return errVerifyChecksum
		}
		return errVerifyBody
	}
	return statusKind(resp.Status)
}

// misattributed classifies a response whose id is not its request's: an
// order violation if it answers a request sent later on c (or the one an
// earlier out-of-order response skipped), a wrong id otherwise.
func (w *worker) misattributed(c *conn, e *entry) errKind {
	id := w.resp.ID
	if c.fly.contains(id) || id == c.skipped && id != 0 {
		c.skipped = e.id
		return errVerifyOrder
	}
	return errVerifyID
}

// serverClose handles a response that said Connection: close: the
// requests pipelined behind it were never processed (RFC 9112 section
// 9.6), so they are resent on other connections; this one is reopened.
func (w *worker) serverClose(c *conn) {
	w.st.serverCloses++
	written := c.fly.n - c.unsent
	w.written.Add(-int64(written))
	for i := 0; c.fly.n > 0; i++ {
		e := c.fly.pop()
		w.inflight--
		if e.flags&flagPrime != 0 {
			continue
		}
		if i < written { // lost in flight, not merely queued
			if e.flags&(flagMeasured|flagResent) == flagMeasured {
				w.st.resent++
			}
			e.flags |= flagResent
		}
		w.retry.push(e)
	}
	c.unsent = 0
	w.closeConn(c, 0)
}

// eof handles the server closing c: cleanly if nothing was in flight.
func (w *worker) eof(c *conn) {
	if c.fly.n == 0 {
		w.st.serverCloses++
		w.closeConn(c, 0)
		return
	}
	w.fail(c, errUnexpectedClose)
}

// fail closes c after a failure of kind: its requests in flight fail with
// that kind, those not yet written go back to be sent elsewhere, and c is
// reconnected after a backoff.
func (w *worker) fail(c *conn, kind errKind) {
	written := c.fly.n - c.unsent
	w.written.Add(-int64(written))
	for i := range c.fly.n {
		e := *c.fly.at(i)
		if i >= written {
			if e.flags&flagPrime == 0 {
				w.retry.push(e)
			}
			continue
		}
		w.countFailure(c, &e, kind)
	}
	w.inflight -= c.fly.n
	c.fly.n, c.fly.head, c.unsent = 0, 0, 0
	c.backoff = nextBackoff(c.backoff)
	w.closeConn(c, c.backoff)
}

// countFailure counts the failure of e.
func (w *worker) countFailure(c *conn, e *entry, kind errKind) {
	switch {
	case e.flags&flagPrime != 0:
		if w.primeErr == nil {
			w.primeErr = fmt.Errorf("loadgen: connection %d of worker %d: priming request %d failed: %s", c.idx, w.idx, e.id, kind)
		}
	case e.flags&flagMeasured == 0:
		w.st.warmupErrors++
	default:
		w.st.errs[kind]++
	}
}

// closeConn closes c's socket and schedules its reconnection delay ns from
// now (while the run is still sending).
func (w *worker) closeConn(c *conn, delay int64) {
	if c.state == connConnecting {
		w.connecting--
	}
	unix.Close(c.fd)
	c.fd = -1
	c.gen++
	c.state = connDown
	c.writing = false
	c.in, c.out, c.outOff = c.in[:0], c.out[:0], 0
	c.skipped = 0
	c.retryAt = w.clock() + delay
	if w.down == 0 || c.retryAt < w.nextRetry {
		w.nextRetry = c.retryAt
	}
	w.down++
	w.nextTick = min(w.nextTick, c.retryAt)
}

// reconnect starts connecting every down connection whose retry time has
// come.
func (w *worker) reconnect(now int64) {
	w.nextRetry = math.MaxInt64
	for _, c := range w.conns {
		if c.state != connDown {
			continue
		}
		if c.retryAt > now {
			w.nextRetry = min(w.nextRetry, c.retryAt)
			continue
		}
		w.dial(c, now)
	}
}

// dial starts a non-blocking connect for c.
func (w *worker) dial(c *conn, now int64) {
	fd, err := unix.Socket(w.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		w.st.errs[errConnect]++
		w.retryLater(c, now)
		return
	}
	w.down--
	c.fd, c.connStart = fd, now
	enableRxTimestamps(fd)
	switch err := unix.Connect(fd, w.sa); err {
	case nil:
		c.state = connConnecting // up() expects a connect in progress
		w.connecting++
		w.up(c, unix.EPOLL_CTL_ADD)
	case unix.EINPROGRESS:
		c.state = connConnecting
		w.connecting++
		if w.ctl(c, unix.EPOLL_CTL_ADD, unix.EPOLLOUT) != nil {
			w.connectFailed(c)
		}
	default:
		unix.Close(fd)
		c.fd = -1
		w.down++
		w.st.errs[errConnect]++
		w.retryLater(c, now)
	}
}

// retryLater schedules a down connection's next attempt with backoff.
func (w *worker) retryLater(c *conn, now int64) {
	c.backoff = nextBackoff(c.backoff)
	c.retryAt = now + c.backoff
	w.nextRetry = min(w.nextRetry, c.retryAt)
}

// connected finishes c's non-blocking connect.
func (w *worker) connected(c *conn) {
	if soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || soerr != 0 {
		w.connectFailed(c)
		return
	}
	w.up(c, unix.EPOLL_CTL_MOD)
}

// connectFailed counts a failed connect of c and schedules another after
// a backoff.
func (w *worker) connectFailed(c *conn) {
	w.st.errs[errConnect]++
	c.backoff = nextBackoff(c.backoff)
	w.closeConn(c, c.backoff)
}

// nextBackoff doubles a reconnection backoff within [minBackoff, maxBackoff].
func nextBackoff(b int64) int64 { return min(max(2*b, minBackoff), maxBackoff) }

// up makes a connected c usable: no Nagle, readable interest, and (closed
// loop) its requests.
func (w *worker) up(c *conn, op int) {
	w.connecting--
	c.state = connUp
	unix.SetsockoptInt(c.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := w.ctl(c, op, unix.EPOLLIN); err != nil {
		w.connectFailed(c)
		return
	}
	c.backoff = 0
	w.st.reconnects++
	if w.closed {
		w.fill(c, w.clock())
	}
}

// stopSending ends the schedule: in open loop, the window's arrivals not
// yet sent are counted as unsent (and scheduled).
func (w *worker) stopSending() {
	w.sending = false
	w.blocked = false
	if !w.closed && !w.limited {
		for t := w.start + w.arr.next; t < w.endAt; t = w.start + w.arr.next {
			if t >= w.measureAt {
				w.st.scheduled += int64(w.depth)
				w.st.unsent += int64(w.depth)
			}
			w.arr.advance()
		}
	}
}

// interrupt abandons the run: requests in flight are counted as
// interrupted.
func (w *worker) interrupt() {
	if w.sending {
		w.stopSending()
	}
	for _, c := range w.conns {
		for i := range c.fly.n {
			if e := c.fly.at(i); e.flags&flagMeasured != 0 {
				w.st.errs[errInterrupted]++
			}
		}
		w.inflight -= c.fly.n
		w.written.Add(-int64(c.fly.n - c.unsent))
		c.fly.n, c.fly.head, c.unsent = 0, 0, 0
	}
}

// reasonText quotes a response body given as a reason, shortened to its
// first line and at most 200 bytes.
func reasonText(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strconv.Quote(s)
}
