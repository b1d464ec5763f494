//go:build linux

package loadgen

import (
	"math"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ivPair is one interval's corrected and uncorrected latency counts.
type ivPair struct{ corrected, uncorrected *hdrCounts }

// newPair returns an empty pair with cfg's histogram geometry.
func newPair(cfg *Config) *ivPair {
	return &ivPair{corrected: newCounts(cfg), uncorrected: newCounts(cfg)}
}

// add adds o's counts to p's.
func (p *ivPair) add(o *ivPair) {
	p.corrected.add(o.corrected)
	p.uncorrected.add(o.uncorrected)
}

// reset empties p.
func (p *ivPair) reset() {
	p.corrected.reset()
	p.uncorrected.reset()
}

// ivMsg hands a worker's finished interval to the collector.
type ivMsg struct {
	worker     int
	index      int64 // 0 for the interval that starts with the measurement
	start, end int64 // ns since the run's base
	pair       *ivPair
	// last marks the worker's last message: it sends no interval after
	// index. A last message with start == end only says so: the worker has
	// no interval index (its pair is empty), and its last was index-1.
	last bool
}

// Each worker's intervals own 1+ivSpares(HlogInterval) pairs, made before
// the measurement: one to record into, the others for it to take when it
// sends one to the collector and until the collector gives that back. The
// collector gives a pair back as soon as it has merged it, within
// milliseconds when it has a CPU; even at the lowest priority on a busy
// machine the kernel's fair share leaves it far more than the merges and
// encodings of one interval need per second, so a worker runs out only if
// the collector falls ivSlack behind (for intervals of 1 s, 2 spares).
// Shorter intervals get more spares, up to ivMaxSpares, to bound the memory
// (a pair of the default geometry is 295 KB).
const (
	ivSlack     = 2 * time.Second
	ivMinSpares = 2
	ivMaxSpares = 8
)

// ivSpares returns the spare pairs of a worker for intervals of every.
func ivSpares(every time.Duration) int {
	return min(max(int((ivSlack+every-1)/every), ivMinSpares), ivMaxSpares)
}

// intervals cuts one worker's measured latencies into intervals of
// HlogInterval by completion time, for the .hlog. Finished intervals go to
// the collector (mergeIntervals), which merges the workers' and gives the
// pairs back on free, emptied, so that steady state does not allocate; an
// interval is sent even if empty, so that every worker reports every index
// (the collector writes an interval once every worker has).
//
// If free is empty when an interval ends (the collector is ivSpares
// intervals behind), the worker allocates a pair rather than wait, and
// counts it in allocated. It does not keep recording into its current pair instead:
// that interval would then span several of the other workers', and the
// collector could not write the intervals those workers sent until the
// extended one ended.
type intervals struct {
	worker     int
	every      int64
	start, end int64
	index      int64
	highest    int64
	cur        *ivPair
	cfg        *Config
	out        chan<- ivMsg
	free       chan *ivPair
	allocated  int64 // pairs allocated because free was empty
}

// newIntervals returns worker's intervals from measureAt, with their
// spare pairs.
func newIntervals(cfg *Config, worker int, measureAt int64, out chan<- ivMsg) *intervals {
	spares := ivSpares(cfg.HlogInterval)
	iv := &intervals{
		worker:  worker,
		every:   int64(cfg.HlogInterval),
		start:   measureAt,
		end:     measureAt + int64(cfg.HlogInterval),
		highest: int64(cfg.HistHighest),
		cur:     newPair(cfg),
		cfg:     cfg,
		out:     out,
		free:    make(chan *ivPair, spares),
	}
	for range spares {
		iv.free <- newPair(cfg)
	}
	return iv
}

// record records one response completed at at; values are clamped as the
// run's recorders clamp them (which count them).
func (iv *intervals) record(at, lat, unc int64) {
	if at >= iv.end {
		iv.rotate(at)
	}
	iv.cur.corrected.record(min(max(lat, 0), iv.highest))
	iv.cur.uncorrected.record(min(max(unc, 0), iv.highest))
}

// rotate sends every interval that ended by now.
func (iv *intervals) rotate(now int64) {
	for now >= iv.end {
		iv.advance()
	}
}

// advance sends the current interval, whole, and starts the next.
func (iv *intervals) advance() {
	iv.emit(iv.end, false)
	iv.start = iv.end
	iv.end += iv.every
}

// finish sends the last interval, ending at now (partial unless now is the
// end of an interval), marked last; if now is the start of an interval, it
// sends an empty last message instead, so that the collector still learns
// that this worker is done. The worker records nothing after finish.
func (iv *intervals) finish(now int64) {
	for now > iv.end {
		iv.advance()
	}
	iv.emit(max(now, iv.start), true)
}

// emit sends the current interval, ending at end, and records into a free
// pair from now on (none after the last). It takes that pair before it
// sends: the collector may give the pair sent back at once, and free must
// have room for it then, or the collector drops it and the worker has one
// spare less.
func (iv *intervals) emit(end int64, last bool) {
	var next *ivPair
	if !last {
		select {
		case next = <-iv.free:
		default:
			next = newPair(iv.cfg) // the collector is behind: allocate rather than wait
			iv.allocated++
		}
	}
	iv.out <- ivMsg{worker: iv.worker, index: iv.index, start: iv.start, end: end, pair: iv.cur, last: last}
	iv.index++
	iv.cur = next
}

// mergeIntervals is the collector: it merges the workers' interval
// histograms, index by index, and writes each to hl once every worker has
// sent it (or sent its last interval before it); at the end, when in is
// closed, it writes the intervals still incomplete (a worker that never
// finished), in order. It gives every worker's pair back to the worker,
// emptied, for reuse. It returns the first write error. Once running it
// allocates nothing, unless more intervals are pending at once than it
// prepared for (over ivMergePairs, or a worker ivMergeSlots intervals
// behind another): what it allocates then is counted in hl.allocated.
//
// It runs on an OS thread of its own, at the lowest priority (nice 19):
// merging and encoding an interval takes CPU (the more, the wider the
// histograms are spread: zlib's best compression), all at the moment
// the interval ends, and on a CPU a worker uses it must
// not preempt the worker and delay its sends; at nice 19 the kernel runs
// it when a CPU is free, or for a small fair share. The goroutine never
// unlocks the thread: it exits locked, so the runtime discards the thread
// rather than keep it, at nice 19, to run other goroutines (a worker that
// locked it would run starved).
func mergeIntervals(in <-chan ivMsg, ws []*worker, hl *hlog, tail *tailSink, base time.Time, cfg *Config) error {
	runtime.LockOSThread()
	// A failure leaves the collector at the process's priority: the log is
	// the same, only the workers' protection is lost.
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)

	mg := newIvMerger(len(ws), hl, base, cfg)
	mg.tail = tail
	for m := range in {
		mg.take(m)
		m.pair.reset()
		// ws[m.worker].iv is read only after a message from that worker:
		// Run sets it before the worker starts.
		select {
		case ws[m.worker].iv.free <- m.pair:
		default: // a pair the worker allocated: its free list is full
		}
		mg.writeComplete()
	}
	mg.writeRest()
	if hl != nil {
		hl.allocated += mg.allocated
	}
	return mg.err
}

// The collector's preparations: pending intervals (its ring of slots, each
// small) and the empty aggregate pairs that pending intervals take. In
// steady state one interval is pending at a time, two when a worker sends
// the next before another has sent the current one.
const (
	ivMergeSlots = 16
	ivMergePairs = 2
)

// ivMerger is mergeIntervals' state: the intervals pending, in a ring
// indexed by interval index modulo its length, and the empty pairs they
// take and give back.
type ivMerger struct {
	slots     []ivSlot  // interval i, if pending, is slots[i%len(slots)]
	next      int64     // the first interval not yet written
	last      []int64   // per worker: its last interval's index; MaxInt64 until it says
	spare     []*ivPair // empty pairs for the next pending intervals
	hl        *hlog     // nil: no .hlog (the tail alone)
	tail      *tailSink // nil: no tail estimate
	base      time.Time
	cfg       *Config
	allocated int64
	err       error
}

// ivSlot is one pending interval: the workers' counts merged so far.
type ivSlot struct {
	index      int64 // -1 if the slot is free
	n          int   // workers merged
	start, end int64 // ns since the run's base; end the latest of theirs
	pair       *ivPair
}

// newIvMerger returns the state for workers workers, prepared.
func newIvMerger(workers int, hl *hlog, base time.Time, cfg *Config) *ivMerger {
	mg := &ivMerger{
		slots: newIvSlots(ivMergeSlots),
		last:  make([]int64, workers),
		spare: make([]*ivPair, 0, 4*ivMergePairs),
		hl:    hl,
		base:  base,
		cfg:   cfg,
	}
	for i := range mg.last {
		mg.last[i] = math.MaxInt64
	}
	for range ivMergePairs {
		mg.spare = append(mg.spare, newPair(cfg))
	}
	return mg
}

// newIvSlots returns n free slots.
func newIvSlots(n int) []ivSlot {
	s := make([]ivSlot, n)
	for i := range s {
		s[i].index = -1
	}
	return s
}

// take merges m into its pending interval.
func (mg *ivMerger) take(m ivMsg) {
	if m.last {
		mg.last[m.worker] = m.index
		if m.start == m.end {
			mg.last[m.worker]--
			return
		}
	}
	if d := m.index - mg.next; d >= int64(len(mg.slots)) {
		mg.grow(d + 1)
	}
	s := &mg.slots[m.index%int64(len(mg.slots))]
	if s.index != m.index {
		*s = ivSlot{index: m.index, start: m.start, pair: mg.takePair()}
	}
	s.pair.add(m.pair)
	s.end = max(s.end, m.end)
	s.n++
}

// takePair returns an empty aggregate pair.
func (mg *ivMerger) takePair() *ivPair {
	if n := len(mg.spare); n > 0 {
		p := mg.spare[n-1]
		mg.spare = mg.spare[:n-1]
		return p
	}
	mg.allocated++
	return newPair(mg.cfg)
}

// grow makes the ring hold at least n intervals from next.
func (mg *ivMerger) grow(n int64) {
	size := len(mg.slots)
	for int64(size) < n {
		size *= 2
	}
	slots := newIvSlots(size)
	for _, s := range mg.slots {
		if s.index >= 0 {
			slots[s.index%int64(size)] = s
		}
	}
	mg.slots = slots
	mg.allocated++
}

// writeComplete writes the intervals, from next, that every worker has
// sent or finished before.
func (mg *ivMerger) writeComplete() {
	for {
		s := &mg.slots[mg.next%int64(len(mg.slots))]
		if s.index != mg.next {
			return
		}
		done := s.n
		for _, l := range mg.last {
			if l < mg.next {
				done++
			}
		}
		if done < len(mg.last) {
			return
		}
		mg.write(s)
	}
}

// writeRest writes the intervals still pending, in order.
func (mg *ivMerger) writeRest() {
	for range len(mg.slots) {
		if s := &mg.slots[mg.next%int64(len(mg.slots))]; s.index == mg.next {
			mg.write(s)
		} else {
			mg.next++
		}
	}
}

// write writes s, the interval next, frees it and moves next on. After an
// error it writes nothing more.
func (mg *ivMerger) write(s *ivSlot) {
	if mg.tail != nil {
		mg.tail.interval(s.start, s.end, s.pair.corrected)
	}
	if mg.err == nil && mg.hl != nil {
		ms := func(ns int64) int64 { return mg.base.Add(time.Duration(ns)).UnixMilli() }
		mg.err = mg.hl.interval(ms(s.start), ms(s.end), s.pair.corrected, s.pair.uncorrected)
	}
	s.pair.reset()
	mg.spare = append(mg.spare, s.pair)
	*s = ivSlot{index: -1}
	mg.next++
}

// ivAllocated returns the histogram pairs (and the collector's ring
// growths) allocated once the run was going: by workers that found no free
// pair and by mergeIntervals. It is 0 in steady state. Call it after the
// workers and mergeIntervals have returned.
func ivAllocated(ws []*worker, hl *hlog) int64 {
	var n int64
	if hl != nil {
		n = hl.allocated
	}
	for _, w := range ws {
		if w.iv != nil {
			n += w.iv.allocated
		}
	}
	return n
}
