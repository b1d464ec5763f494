package connio

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"concbench/models"
)

// Timer is a connection's header-timeout clock: when its current request
// became incomplete (part of it buffered, the rest not yet arrived). The
// connection's owner sets it after every decode (Partial); the Reaper
// reads it. Setting it costs a clock read only when a request is left
// incomplete, which a well-behaved client's requests rarely are.
type Timer struct{ since atomic.Int64 }

// reaped marks a Timer whose connection the Reaper has shut down.
const reaped = -1

// epoch is the origin of the Timer's monotonic clock.
var epoch = time.Now()

func monoNow() int64 { return int64(time.Since(epoch)) + 1 } // never 0

// Partial records whether the connection's input ends in an incomplete
// request now. Only the connection's owner calls it.
func (t *Timer) Partial(partial bool) {
	// Compare-and-swap, so that the Reaper's mark is never overwritten;
	// it runs only on a change (a request left incomplete, or completed).
	switch s := t.since.Load(); {
	case s == reaped:
	case partial && s == 0:
		t.since.CompareAndSwap(0, monoNow())
	case !partial && s != 0:
		t.since.CompareAndSwap(s, 0)
	}
}

// Reaped reports whether the Reaper shut the connection down: the end of
// input that follows is the timeout's doing, already counted as
// models.ErrHeaderTimeout, not a truncation by the client.
func (t *Timer) Reaped() bool { return t.since.Load() == reaped }

// EndOfInput counts, in sh, a request that the end of the connection's
// input left incomplete (buffered bytes) as models.ErrTruncated — unless
// the Reaper cut it short, which it counted as a header timeout already.
// Every model's end-of-input path calls it, so the two are never both
// counted.
func (t *Timer) EndOfInput(sh *models.Shard, buffered int) {
	if buffered > 0 && !t.Reaped() {
		sh.AddError(models.ErrTruncated)
	}
}

// Reaper enforces Config.HeaderTimeout for a server's connections: every
// quarter of the timeout (at least 10 ms, at most 1 s) it looks at the
// connections it tracks and shuts down (shutdown(2), both directions) each
// one whose request has been incomplete for longer than the timeout,
// counting models.ErrHeaderTimeout. The shutdown wakes the connection's
// owner with an end of input wherever it waits (a handle set, a blocking
// read, an io_uring receive), and the owner closes the connection by its
// usual path; the Reaper never closes a descriptor itself.
//
// It is one goroutine beside the model's threads, the same in every model
// (the patterns leave timers to the implementation; nginx keeps them in
// its event loop). A nil *Reaper (timeout disabled) tracks nothing.
//
// Descriptor safety: a connection is untracked, under the Reaper's lock,
// before its descriptor is closed, and shutdown is called under the same
// lock, so a shutdown never reaches a reused descriptor number.
type Reaper struct {
	timeout time.Duration
	sh      *models.Shard

	mu    sync.Mutex
	conns map[int]*Timer // by descriptor

	stop chan struct{}
	done chan struct{}
}

// NewReaper starts the reaper of a server configured with cfg (defaults
// applied), counting into a connection shard of counters. It returns nil
// if cfg disables the timeout.
func NewReaper(cfg *models.Config, counters *models.Counters) *Reaper {
	if cfg.HeaderTimeout <= 0 {
		return nil
	}
	r := &Reaper{
		timeout: cfg.HeaderTimeout,
		sh:      counters.NewConnShard(),
		conns:   make(map[int]*Timer),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go r.run(min(max(cfg.HeaderTimeout/4, 10*time.Millisecond), time.Second))
	return r
}

// Track starts timing the connection on descriptor fd.
func (r *Reaper) Track(fd int, t *Timer) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.conns[fd] = t
	r.mu.Unlock()
}

// Untrack stops timing the connection on fd; call it before closing fd.
func (r *Reaper) Untrack(fd int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.conns, fd)
	r.mu.Unlock()
}

// Close stops the reaper and waits for it. The server's connections need
// not be untracked first.
func (r *Reaper) Close() {
	if r == nil {
		return
	}
	close(r.stop)
	<-r.done
}

func (r *Reaper) run(period time.Duration) {
	defer close(r.done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			r.sweep()
		}
	}
}

// sweep shuts down every tracked connection past the timeout.
func (r *Reaper) sweep() {
	limit := monoNow() - int64(r.timeout)
	r.mu.Lock()
	defer r.mu.Unlock()
	for fd, t := range r.conns {
		s := t.since.Load()
		if s <= 0 || s > limit || !t.since.CompareAndSwap(s, reaped) {
			continue
		}
		// ENOTCONN if the peer is already gone: its owner is closing it.
		_ = syscall.Shutdown(fd, syscall.SHUT_RDWR)
		r.sh.AddError(models.ErrHeaderTimeout)
	}
}
