package loadgen

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ivTest is mergeIntervals running over fake workers' intervals, as Run
// runs it, into an hlog.
type ivTest struct {
	cfg       Config
	base      time.Time
	measureAt int64 // ns since base
	path      string
	hl        *hlog
	ws        []*worker
	out       chan ivMsg
	done      chan error
}

// startIvTest starts mergeIntervals for workers workers with intervals of
// every.
func startIvTest(t *testing.T, workers int, every time.Duration) *ivTest {
	t.Helper()
	x := &ivTest{
		cfg:       Config{HlogInterval: every}.WithDefaults(),
		base:      time.UnixMilli(1_700_000_000_000),
		measureAt: int64(250 * time.Millisecond),
		path:      filepath.Join(t.TempDir(), "iv.hlog"),
		out:       make(chan ivMsg, 1024),
		done:      make(chan error, 1),
	}
	var err error
	x.hl, err = createHlog(x.path, x.base.Add(time.Duration(x.measureAt)), "test")
	if err != nil {
		t.Fatal(err)
	}
	for i := range workers {
		x.ws = append(x.ws, &worker{iv: newIntervals(&x.cfg, i, x.measureAt, x.out)})
	}
	go func() { x.done <- mergeIntervals(x.out, x.ws, x.hl, nil, x.base, &x.cfg) }()
	return x
}

// stop ends the collector and closes the log.
func (x *ivTest) stop(t *testing.T) {
	t.Helper()
	close(x.out)
	if err := <-x.done; err != nil {
		t.Fatal(err)
	}
	if err := x.hl.close(); err != nil {
		t.Fatal(err)
	}
}

// ivEvent is what one fake worker does at at.
type ivEvent struct {
	worker  int
	at      int64
	kind    ivEventKind
	latency int64 // ivResponse's
}

// ivEventKind is an ivEvent's kind, in the order a worker does them at
// one time.
type ivEventKind int

// The kinds of ivEvent.
const (
	ivResponse ivEventKind = iota // iv.record
	ivTick                        // iv.rotate, as the worker's tick does
	ivFinish                      // iv.finish
)

// TestMergeIntervals checks that the collector's intervals, read back with
// hdrhistogram-go's reader, are each exactly the histogram of every
// worker's responses completed in it, recorded into one histogram; and that
// they tile the measurement, from its start to the last worker's finish:
// with workers finishing together, one stopping early, one finishing on an
// interval's boundary right after its tick rotated there (the empty last
// message), and workers straddling a boundary.
func TestMergeIntervals(t *testing.T) {
	const every = 100 * time.Millisecond
	for _, tc := range []struct {
		name   string
		finish []time.Duration // per worker, from the measurement's start
		ticked bool            // worker 0 rotates at its finish before finishing
	}{
		{name: "together", finish: []time.Duration{450 * time.Millisecond, 450 * time.Millisecond}},
		{name: "one-stops-early", finish: []time.Duration{630 * time.Millisecond, 150 * time.Millisecond}},
		{name: "finish-on-boundary", finish: []time.Duration{200 * time.Millisecond, 420 * time.Millisecond}, ticked: true},
		{name: "straddle", finish: []time.Duration{399 * time.Millisecond, 401 * time.Millisecond, 400 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := startIvTest(t, len(tc.finish), every)
			r := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			var events []ivEvent
			last := int64(0)
			for w, f := range tc.finish {
				end := x.measureAt + int64(f)
				last = max(last, end)
				for range 300 {
					at := x.measureAt + r.Int64N(int64(f))
					events = append(events, ivEvent{worker: w, at: at, latency: randomValue(r, int64(x.cfg.HistHighest))})
				}
				if w == 0 && tc.ticked {
					events = append(events, ivEvent{worker: w, at: end, kind: ivTick})
				}
				events = append(events, ivEvent{worker: w, at: end, kind: ivFinish})
			}
			slices.SortStableFunc(events, func(a, b ivEvent) int {
				return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind))
			})

			n := int((last - x.measureAt + int64(every) - 1) / int64(every))
			want, wantUnc := make([]*hdr.Histogram, n), make([]*hdr.Histogram, n)
			for i := range n {
				want[i], wantUnc[i] = newHistogram(&x.cfg), newHistogram(&x.cfg)
			}
			for _, e := range events {
				iv := x.ws[e.worker].iv
				switch e.kind {
				case ivFinish:
					iv.finish(e.at)
				case ivTick:
					iv.rotate(e.at)
				case ivResponse:
					iv.record(e.at, e.latency, e.latency/2)
					k := (e.at - x.measureAt) / int64(every)
					want[k].RecordValue(e.latency)
					wantUnc[k].RecordValue(e.latency / 2)
				}
			}
			x.stop(t)

			got, unc, _ := readHlog(t, x.path)
			if len(got) != n || len(unc) != n {
				t.Fatalf("%d corrected and %d uncorrected intervals, want %d each", len(got), len(unc), n)
			}
			startMs := x.base.Add(time.Duration(x.measureAt)).UnixMilli()
			for i := range n {
				wantStart := startMs + int64(i)*every.Milliseconds()
				wantEnd := min(wantStart+every.Milliseconds(), x.base.Add(time.Duration(last)).UnixMilli())
				// ±1 ms: the reader turns seconds back into ms by truncation.
				if d, e := got[i].StartTimeMs()-wantStart, got[i].EndTimeMs()-wantEnd; d < -1 || d > 1 || e < -1 || e > 1 {
					t.Errorf("interval %d: [%d, %d) ms, want [%d, %d)", i, got[i].StartTimeMs(), got[i].EndTimeMs(), wantStart, wantEnd)
				}
				if !got[i].Equals(want[i]) || !unc[i].Equals(wantUnc[i]) {
					t.Errorf("interval %d: merged counts %d/%d differ from one histogram's %d/%d",
						i, got[i].TotalCount(), unc[i].TotalCount(), want[i].TotalCount(), wantUnc[i].TotalCount())
				}
			}
		})
	}
}

// TestMergeIntervalsSteadyStateAllocs checks that, once warm, neither the
// workers' intervals nor the collector allocate: two workers record and
// rotate interval after interval, each time waiting until the collector
// has given their pairs back (as it does within milliseconds in a run;
// every one of them, which fails if the collector drops one), and the
// whole process's heap allocations are counted over 20 intervals, until
// once none are (at most 5 times).
func TestMergeIntervalsSteadyStateAllocs(t *testing.T) {
	const every = time.Second
	x := startIvTest(t, 2, every)
	r := rand.New(rand.NewPCG(8, 9))
	values := make([]int64, 1000)
	for i := range values {
		values[i] = randomValue(r, int64(x.cfg.HistHighest))
	}
	interval := func(k int) {
		start := x.measureAt + int64(k)*int64(every)
		for i, v := range values {
			for _, w := range x.ws {
				w.iv.record(start+int64(i)*int64(every)/int64(len(values)), v, v/2)
			}
		}
		for _, w := range x.ws {
			w.iv.rotate(start + int64(every))
		}
		// Every pair comes back: none is dropped for want of room on free.
		// The collector runs at nice 19: on a saturated machine it may
		// take seconds.
		deadline := time.Now().Add(30 * time.Second)
		for _, w := range x.ws {
			for len(w.iv.free) < cap(w.iv.free) {
				if time.Now().After(deadline) {
					t.Fatalf("interval %d: worker %d has %d of its %d spare pairs back", k, w.iv.worker, len(w.iv.free), cap(w.iv.free))
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	const warm, measured, attempts = 5, 20, 5
	k := 0
	for ; k < warm; k++ {
		interval(k)
	}
	// ReadMemStats flushes every P's allocation counts (runtime/metrics
	// does not: it may count earlier allocations late). The runtime itself
	// allocates now and then: a thread started when ReadMemStats starts
	// the world again, a timer heap that grows. So a measurement that
	// counted allocations is repeated: an allocation per interval (or per
	// few) fails every one.
	var perInterval float64
	for range attempts {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range measured {
			interval(k)
			k++
		}
		runtime.ReadMemStats(&m1)
		if perInterval = float64(m1.Mallocs-m0.Mallocs) / measured; perInterval == 0 {
			break
		}
	}
	for _, w := range x.ws {
		w.iv.finish(x.measureAt + int64(k)*int64(every) + 1)
	}
	x.stop(t)
	if perInterval != 0 {
		t.Errorf("%.2f heap allocations per interval in each of %d measurements, want 0", perInterval, attempts)
	}
	if n := ivAllocated(x.ws, x.hl); n != 0 {
		t.Errorf("ivAllocated = %d, want 0", n)
	}
	got, _, _ := readHlog(t, x.path)
	if len(got) != k+1 {
		t.Errorf("%d intervals written, want %d", len(got), k+1)
	}
}

// TestIvMergerWritesPromptly feeds the collector's state messages directly
// and checks when it writes: an interval as soon as every worker has sent
// it or sent its last interval before it (also an empty last message), not
// at the end; and, with one worker far behind, that the ring grows
// (counted) and everything is still written in order.
func TestIvMergerWritesPromptly(t *testing.T) {
	cfg := Config{HlogInterval: time.Second}.WithDefaults()
	base := time.UnixMilli(1_700_000_000_000)
	path := filepath.Join(t.TempDir(), "m.hlog")
	hl, err := createHlog(path, base, "test")
	if err != nil {
		t.Fatal(err)
	}
	every := int64(time.Second)
	msg := func(w int, i int64, last bool) ivMsg {
		p := newPair(&cfg)
		p.corrected.record(int64(w+1) * 1000)
		p.uncorrected.record(int64(w+1) * 500)
		return ivMsg{worker: w, index: i, start: i * every, end: (i + 1) * every, pair: p, last: last}
	}
	mg := newIvMerger(2, hl, base, &cfg)
	steps := []struct {
		name     string
		m        ivMsg
		wantNext int64
	}{
		{name: "w0 sends 0", m: msg(0, 0, false), wantNext: 0},
		{name: "w1 sends 0: complete", m: msg(1, 0, false), wantNext: 1},
		{name: "w0 sends 1", m: msg(0, 1, false), wantNext: 1},
		{name: "w1 sends 1, its last", m: msg(1, 1, true), wantNext: 2},
		{name: "w0 sends 2: w1 is done", m: msg(0, 2, false), wantNext: 3},
		{name: "w0's empty last", m: ivMsg{worker: 0, index: 3, start: 3 * every, end: 3 * every, pair: newPair(&cfg), last: true}, wantNext: 3},
	}
	for _, s := range steps {
		mg.take(s.m)
		mg.writeComplete()
		if mg.next != s.wantNext {
			t.Fatalf("%s: next = %d, want %d", s.name, mg.next, s.wantNext)
		}
	}
	if mg.allocated != 0 {
		t.Errorf("allocated %d in steady state, want 0", mg.allocated)
	}

	// A fresh run: worker 1 sends nothing until worker 0 is 40 ahead.
	mg = newIvMerger(2, hl, base, &cfg)
	const far = 40
	for i := range int64(far) {
		mg.take(msg(0, i, false))
		mg.writeComplete()
	}
	if mg.next != 0 || mg.allocated == 0 {
		t.Errorf("worker 1 silent: next = %d, allocated %d; want 0 and > 0", mg.next, mg.allocated)
	}
	for i := range int64(far) {
		mg.take(msg(1, i, i == far-1))
		mg.writeComplete()
	}
	if mg.next != far {
		t.Errorf("all sent: next = %d, want %d", mg.next, far)
	}
	mg.writeRest()
	if mg.err != nil {
		t.Fatal(mg.err)
	}
	if err := hl.close(); err != nil {
		t.Fatal(err)
	}
	got, _, _ := readHlog(t, path)
	if len(got) != 3+far {
		t.Fatalf("%d intervals written, want %d", len(got), 3+far)
	}
	for i, h := range got {
		wantCount := int64(2)
		if i == 2 {
			wantCount = 1 // worker 0's only
		}
		if h.TotalCount() != wantCount {
			t.Errorf("interval %d: count %d, want %d", i, h.TotalCount(), wantCount)
		}
		k := int64(i) // the interval's index in its run: the second starts at 3
		if i >= 3 {
			k -= 3
		}
		if want := base.UnixMilli() + k*1000; h.StartTimeMs() != want {
			t.Errorf("interval %d starts at %d ms, want %d", i, h.StartTimeMs(), want)
		}
	}
}

// niceThreads returns the process's threads at nice 19.
func niceThreads(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var nice []string
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread has exited
		}
		// Fields after the command's closing parenthesis start at the 3rd;
		// nice is the 19th.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 16 && f[16] == "19" {
			nice = append(nice, task.Name())
		}
	}
	return nice
}

// newNiceThreads polls niceThreads, for 30 s at most (a nice-19 thread
// on a saturated machine gets little CPU), until the threads at nice 19
// that are not in old satisfy done, and returns them.
func newNiceThreads(t *testing.T, old []string, done func([]string) bool) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		got = slices.DeleteFunc(niceThreads(t), func(tid string) bool { return slices.Contains(old, tid) })
		if done(got) {
			break
		}
	}
	return got
}

// TestMergeIntervalsThread checks that the collector runs on a thread of
// its own at nice 19, and that the thread no longer runs anything once the
// collector has returned: the runtime ends it, or, if it is the main
// thread, which the runtime never ends, parks it for good.
func TestMergeIntervalsThread(t *testing.T) {
	old := niceThreads(t) // the main thread, if an earlier collector ran on it
	x := startIvTest(t, 1, time.Second)
	if got := newNiceThreads(t, old, func(n []string) bool { return len(n) == 1 }); len(got) != 1 {
		t.Errorf("new threads at nice 19 while the collector runs: %v, want one", got)
	}
	x.ws[0].iv.finish(x.measureAt + 1)
	x.stop(t)
	main := strconv.Itoa(os.Getpid())
	left := newNiceThreads(t, old, func(n []string) bool { return len(n) == 0 || len(n) == 1 && n[0] == main })
	if len(left) > 1 || len(left) == 1 && left[0] != main {
		t.Errorf("threads at nice 19 after the collector returned: %v, want none but the main thread (%s)", left, main)
	}
}
