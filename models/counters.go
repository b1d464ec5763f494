package models

import (
	"sync"
	"sync/atomic"

	"concbench/wire"
)

// errKinds are the error kinds a Shard counts, indexed by errIndex.
var errKinds = [...]string{
	wire.KindMalformed.String(), wire.KindTooLarge.String(), wire.KindHeaderTooLarge.String(),
	wire.KindUnsupported.String(), ErrTruncated, ErrPeerReset, ErrIO, ErrAcceptBackoff, ErrAccept, ErrRefused,
	ErrHeaderTimeout,
}

func errIndex(kind string) int {
	for i, k := range errKinds {
		if k == kind {
			return i
		}
	}
	panic("models: unknown error kind " + kind)
}

// Counter is a uint64 with one writer at a time (its owning thread, or
// threads serialized by a lock): the writer increments it with a plain load
// and store (no locked instruction on the hot path), readers load it
// atomically, so a snapshot never tears a value. Shards use it, and so do
// the models' own counters.
type Counter struct{ v atomic.Uint64 }

// Add adds n; only the one writer may call it.
func (c *Counter) Add(n uint64) { c.v.Store(c.v.Load() + n) }

// Inc adds one; only the one writer may call it.
func (c *Counter) Inc() { c.Add(1) }

// Load returns the value; any thread may call it.
func (c *Counter) Load() uint64 { return c.v.Load() }

// Shard is one owner's counters. Only its owner (one thread, or one
// connection's goroutine) may call its Add methods; Counters.Stats reads it
// concurrently. It is padded to keep owners off each other's cache lines.
type Shard struct {
	_ [64]byte

	tid        atomic.Int64
	role       string
	owner      bool // its thread owns the connections it accepts (ThreadStats.Accepted)
	events     Counter
	requests   Counter
	promotions Counter
	bytesRead  Counter
	bytesWrite Counter
	accepted   Counter
	closed     Counter
	errs       [len(errKinds)]Counter

	_ [64]byte
}

// SetTID records the OS thread id of the shard's owner.
func (s *Shard) SetTID(tid int) { s.tid.Store(int64(tid)) }

// AddEvent counts a dispatched handle-set event.
func (s *Shard) AddEvent() { s.events.Add(1) }

// AddRequests counts n processed requests.
func (s *Shard) AddRequests(n int) { s.requests.Add(uint64(n)) }

// AddPromotion counts a promotion of the owner to leader.
func (s *Shard) AddPromotion() { s.promotions.Add(1) }

// AddRead counts n bytes read from a client.
func (s *Shard) AddRead(n int) { s.bytesRead.Add(uint64(n)) }

// AddWritten counts n bytes written to a client.
func (s *Shard) AddWritten(n int) { s.bytesWrite.Add(uint64(n)) }

// AddAccepted counts an accepted connection.
func (s *Shard) AddAccepted() { s.accepted.Add(1) }

// AddClosed counts a closed connection.
func (s *Shard) AddClosed() { s.closed.Add(1) }

// AddError counts a failure of the given kind (a models.Err constant or a
// wire.ErrorKind name). An unknown kind is a programming mistake and panics.
func (s *Shard) AddError(kind string) { s.errs[errIndex(kind)].Add(1) }

// Counters is the set of shards of one server. Thread shards are reported
// individually in Stats.PerThread; connection shards are only summed.
// Retired connection shards are folded into a total so their counts survive.
type Counters struct {
	mu      sync.Mutex
	threads []*Shard
	conns   map[*Shard]struct{}
	retired Shard
}

// NewThreadShard returns a shard for one thread of a pool, reported in
// Stats.PerThread under role, in creation order.
func (c *Counters) NewThreadShard(role string) *Shard { return c.newThreadShard(role, false) }

func (c *Counters) newThreadShard(role string, owner bool) *Shard {
	s := &Shard{role: role, owner: owner}
	c.mu.Lock()
	c.threads = append(c.threads, s)
	c.mu.Unlock()
	return s
}

// NewOwnerShard returns a shard for one thread of a pool, as
// NewThreadShard, for a thread that owns the connections it accepts for
// their whole life (nginx's workers, the partitioned server): its
// accepted connections are reported in ThreadStats.Accepted, from which
// the connection balance across threads is computed. Other threads
// accept for the pool, and report 0 there.
func (c *Counters) NewOwnerShard(role string) *Shard { return c.newThreadShard(role, true) }

// NewConnShard returns a shard for one connection; Retire it when the
// connection ends.
func (c *Counters) NewConnShard() *Shard {
	s := &Shard{}
	c.mu.Lock()
	if c.conns == nil {
		c.conns = make(map[*Shard]struct{})
	}
	c.conns[s] = struct{}{}
	c.mu.Unlock()
	return s
}

// Retire folds a connection shard's counts into the retired total. The
// shard's owner must be done with it.
func (c *Counters) Retire(s *Shard) {
	c.mu.Lock()
	delete(c.conns, s)
	sumInto(&c.retired, s)
	c.mu.Unlock()
}

// sumInto adds src's counts to dst. dst must not be concurrently written.
func sumInto(dst, src *Shard) {
	dst.events.Add(src.events.Load())
	dst.requests.Add(src.requests.Load())
	dst.promotions.Add(src.promotions.Load())
	dst.bytesRead.Add(src.bytesRead.Load())
	dst.bytesWrite.Add(src.bytesWrite.Load())
	dst.accepted.Add(src.accepted.Load())
	dst.closed.Add(src.closed.Load())
	for i := range dst.errs {
		dst.errs[i].Add(src.errs[i].Load())
	}
}

// Stats sums every shard into st's common fields and fills st.PerThread.
// The caller sets Model, Variant, Threads and Counters.
func (c *Counters) Stats(st *Stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var total Shard
	sumInto(&total, &c.retired)
	for s := range c.conns {
		sumInto(&total, s)
	}
	st.PerThread = st.PerThread[:0]
	for _, s := range c.threads {
		sumInto(&total, s)
		ts := ThreadStats{
			TID:        int(s.tid.Load()),
			Role:       s.role,
			Events:     s.events.Load(),
			Requests:   s.requests.Load(),
			Promotions: s.promotions.Load(),
		}
		if s.owner {
			ts.Accepted = s.accepted.Load()
		}
		st.PerThread = append(st.PerThread, ts)
	}
	if len(st.PerThread) == 0 {
		st.PerThread = nil
	}
	st.Requests = total.requests.Load()
	st.BytesRead = total.bytesRead.Load()
	st.BytesWritten = total.bytesWrite.Load()
	st.ConnsAccepted = total.accepted.Load()
	st.ConnsClosed = total.closed.Load()
	st.Errors = nil
	for i, k := range errKinds {
		if n := total.errs[i].Load(); n > 0 {
			if st.Errors == nil {
				st.Errors = make(map[string]uint64)
			}
			st.Errors[k] = n
		}
	}
}
