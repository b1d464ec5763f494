package loadgen

import (
	"math"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"concbench/handleset"
	"concbench/internal/sysstat"
	"concbench/wire"
)

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
	refused                                              int64 // connections the server refused at its limit
	errs                                                 [numErrKinds]int64
	busyNs, spanNs, userNs, sysNs                        int64
	runQueueNs, nvcsw, nivcsw                            int64
	windowEnd, lastResponse                              int64
	kernelStamped, userStamped, stampBeforeSend          int64 // reads by receive-timestamp source; responses stamped before their send
	kills, abandoned                                     int64 // Config.KillEvery
	recycled                                             int64 // Config.ConnRequests
	deposits, withdrawals, moneyRefused, moneyUnknown    int64 // the ledger's flow (Ledger)
	totals                                               int64 // totals checked against Config.LedgerMoney
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

	// money is the run's deposits and withdrawals, sent and acknowledged
	// (shared), for the bounds of a total; nil without Config.LedgerMoney.
	money *moneyFlow
	// killRNG (nil without Config.KillEvery) chooses which connection is
	// killed, and when: killLeft more responses from now.
	killRNG  *rand.Rand
	killLeft int

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
func newWorker(cfg *Config, idx, n int, fds []int, codec wire.Codec, sa unix.Sockaddr, family int, base time.Time, sh *shared) (*worker, error) {
	w := &worker{
		idx: idx, n: n, cfg: cfg, codec: codec, sa: sa, family: family, base: base, stop: &sh.stop, written: &sh.written, money: sh.money,
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
	if cfg.KillEvery > 0 {
		w.killRNG = newKiller(cfg, idx)
		w.killLeft = w.nextKill()
	}
	if w.closed {
		w.maxFly = cfg.Outstanding
	} else {
		w.arr = newArrivals(cfg, idx, n)
	}
	for _, fd := range fds {
		w.conns = append(w.conns, &conn{idx: len(w.conns), fd: fd, in: make([]byte, 0, inBufSize), fresh: true})
	}
	w.dirty = make([]*conn, 0, len(w.conns))
	w.hasRoom = func(i int) bool {
		c := w.conns[i]
		return c.state == connUp && !c.killing && !w.spent(c) && c.fly.n+w.depth <= w.maxFly
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
