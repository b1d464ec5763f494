package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// readHlog reads every interval histogram of an hlog with hdrhistogram-go's
// own reader, split by tag.
func readHlog(t *testing.T, path string) (untagged, uncorrected []*hdr.Histogram, startSec float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "#[StartTime: "); ok {
			if _, err := fmt.Sscan(rest, &startSec); err != nil {
				t.Fatalf("StartTime line %q: %v", line, err)
			}
		}
	}
	lr := hdr.NewHistogramLogReader(bytes.NewReader(b))
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if h == nil {
			break
		}
		switch h.Tag() {
		case "":
			untagged = append(untagged, h)
		case "uncorrected":
			uncorrected = append(uncorrected, h)
		default:
			t.Fatalf("unexpected tag %q", h.Tag())
		}
	}
	return untagged, uncorrected, startSec
}

// TestHlogWriterRoundTrip writes known interval histograms and reads them
// back with hdrhistogram-go's HistogramLogReader: same counts, tags, and
// interval times to the millisecond — including a start time with a
// fractional second, which the library's own StartTime/BaseTime lines
// would truncate.
func TestHlogWriterRoundTrip(t *testing.T) {
	cfg := Config{}.WithDefaults()
	path := filepath.Join(t.TempDir(), "w.hlog")
	start := time.UnixMilli(1_700_000_000_789)
	l, err := createHlog(path, start, "test")
	if err != nil {
		t.Fatal(err)
	}
	type iv struct {
		startMs, endMs int64
		values         []int64
	}
	ivs := []iv{
		{start.UnixMilli(), start.UnixMilli() + 1000, []int64{1000, 2000, 3_000_000}},
		{start.UnixMilli() + 1000, start.UnixMilli() + 2000, nil},
		{start.UnixMilli() + 2000, start.UnixMilli() + 2345, []int64{59_000_000_000}},
	}
	var want []*hdr.Histogram
	for _, x := range ivs {
		corrected, uncorrected, h := newCounts(&cfg), newCounts(&cfg), newHistogram(&cfg)
		for _, v := range x.values {
			corrected.record(v)
			uncorrected.record(v / 2)
			h.RecordValue(v)
		}
		want = append(want, h)
		if err := l.interval(x.startMs, x.endMs, corrected, uncorrected); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	got, unc, startSec := readHlog(t, path)
	if startSec != 1_700_000_000.789 {
		t.Errorf("StartTime %.3f, want 1700000000.789", startSec)
	}
	if len(got) != len(ivs) || len(unc) != len(ivs) {
		t.Fatalf("read %d untagged and %d uncorrected intervals, want %d each", len(got), len(unc), len(ivs))
	}
	for i, x := range ivs {
		if !got[i].Equals(want[i]) {
			t.Errorf("interval %d: histogram differs after the round trip", i)
		}
		if got[i].TotalCount() != int64(len(x.values)) || unc[i].TotalCount() != int64(len(x.values)) {
			t.Errorf("interval %d: counts %d/%d, want %d", i, got[i].TotalCount(), unc[i].TotalCount(), len(x.values))
		}
		if got[i].StartTimeMs() != x.startMs || got[i].EndTimeMs() != x.endMs {
			t.Errorf("interval %d: [%d, %d) ms, want [%d, %d)", i, got[i].StartTimeMs(), got[i].EndTimeMs(), x.startMs, x.endMs)
		}
	}
}

// TestHlogLinesMatchLibrary checks that an interval's lines are byte for
// byte what hdrhistogram-go's HistogramLogWriter writes for the same
// histograms, times and tag, including an empty interval and fractional
// seconds.
func TestHlogLinesMatchLibrary(t *testing.T) {
	cfg := Config{}.WithDefaults()
	start := time.UnixMilli(1_700_000_000_789)
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name           string
		startMs, endMs int64 // from start
		n              int
	}{
		{name: "empty", startMs: 0, endMs: 1000, n: 0},
		{name: "one", startMs: 1000, endMs: 2000, n: 1},
		{name: "many", startMs: 2000, endMs: 3000, n: 5000},
		{name: "partial", startMs: 123_000, endMs: 123_457, n: 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "l.hlog")
			l, err := createHlog(path, start, "test")
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			corrected, uncorrected := newCounts(&cfg), newCounts(&cfg)
			hc, hu := newHistogram(&cfg), newHistogram(&cfg)
			for range tc.n {
				v := randomValue(r, int64(cfg.HistHighest))
				corrected.record(v)
				uncorrected.record(v / 3)
				hc.RecordValue(v)
				hu.RecordValue(v / 3)
			}
			var want bytes.Buffer
			lw := hdr.NewHistogramLogWriter(&want)
			lw.SetBaseTime(start.UnixMilli())
			for _, x := range []struct {
				h   *hdr.Histogram
				tag string
			}{{hc, ""}, {hu, "uncorrected"}} {
				x.h.SetStartTimeMs(start.UnixMilli() + tc.startMs)
				x.h.SetEndTimeMs(start.UnixMilli() + tc.endMs)
				x.h.SetTag(x.tag)
				if err := lw.OutputIntervalHistogram(x.h); err != nil {
					t.Fatal(err)
				}
			}
			got := l.appendInterval(nil, "", start.UnixMilli()+tc.startMs, start.UnixMilli()+tc.endMs, corrected)
			got = l.appendInterval(got, "uncorrected", start.UnixMilli()+tc.startMs, start.UnixMilli()+tc.endMs, uncorrected)
			if string(got) != want.String() {
				t.Errorf("lines differ from the library's:\n got %.120q\nwant %.120q", got, want.String())
			}
		})
	}
}

// TestHlogIntervalAllocs checks that writing an interval's lines to the
// log allocates nothing once the buffers have grown.
func TestHlogIntervalAllocs(t *testing.T) {
	cfg := Config{}.WithDefaults()
	start := time.UnixMilli(1_700_000_000_789)
	l, err := createHlog(filepath.Join(t.TempDir(), "a.hlog"), start, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	r := rand.New(rand.NewPCG(5, 6))
	corrected, uncorrected := newCounts(&cfg), newCounts(&cfg)
	for range 100000 {
		v := randomValue(r, int64(cfg.HistHighest))
		corrected.record(v)
		uncorrected.record(v / 2)
	}
	ms := start.UnixMilli()
	write := func() {
		if err := l.interval(ms, ms+1000, corrected, uncorrected); err != nil {
			t.Fatal(err)
		}
		ms += 1000
	}
	for range 3 {
		write()
	}
	if n := testing.AllocsPerRun(20, write); n != 0 {
		t.Errorf("hlog.interval: %v allocations per interval after warm-up, want 0", n)
	}
}

// TestRunHlogRoundTrip runs with an hlog (two workers, short intervals)
// and reads it back with hdrhistogram-go's reader: the intervals tile the
// measurement from its start, and their merge is exactly the Result's
// corrected and uncorrected histograms.
func TestRunHlogRoundTrip(t *testing.T) {
	s := startServer(t, "http", nil)
	path := filepath.Join(t.TempDir(), "run.hlog")
	r := mustRun(t, Config{
		Addr: s.addr(), Conns: 4, Workers: 2, Rate: 2000, Warmup: 50 * time.Millisecond,
		Duration: 450 * time.Millisecond, HlogPath: path, HlogInterval: 100 * time.Millisecond, Seed: 1,
	})
	if r.Hlog != path {
		t.Fatalf("Result.Hlog = %q, want %q (warnings %q)", r.Hlog, path, r.Warnings)
	}
	got, unc, startSec := readHlog(t, path)
	if want := float64(r.StartTime.UnixMilli()) / 1000; math.Abs(startSec-want) > 0.0005 {
		t.Errorf("StartTime %.3f, want %.3f", startSec, want)
	}
	if len(got) < 5 || len(unc) != len(got) {
		t.Fatalf("%d corrected and %d uncorrected intervals, want ≥ 5 each and equal", len(got), len(unc))
	}
	cfg := r.Config
	all, allUnc := newHistogram(&cfg), newHistogram(&cfg)
	next := r.StartTime.UnixMilli()
	for i, h := range got {
		// ±1 ms: the reader turns seconds back into ms by truncation.
		if d := h.StartTimeMs() - next; d < -1 || d > 1 {
			t.Errorf("interval %d starts at %d ms, want %d (the previous one's end)", i, h.StartTimeMs(), next)
		}
		next = h.EndTimeMs()
		all.Merge(h)
		allUnc.Merge(unc[i])
	}
	for _, c := range []struct {
		name string
		h    *hdr.Histogram
		s    Summary
	}{{"corrected", all, r.Latency}, {"uncorrected", allUnc, r.Uncorrected}} {
		want, err := DecodeHistogram(c.s.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		if c.h.TotalCount() != r.Requests.OK || !c.h.Equals(want) {
			t.Errorf("%s: the intervals merge to %d values, the result has %d; histograms equal: %t",
				c.name, c.h.TotalCount(), want.TotalCount(), c.h.Equals(want))
		}
	}
}

// TestRecorderClamps checks that out-of-range values are clamped and
// counted, never dropped.
func TestRecorderClamps(t *testing.T) {
	cfg := Config{HistHighest: time.Second}.WithDefaults()
	r := newRecorder(&cfg)
	for _, v := range []int64{-5, 0, 500, int64(time.Second), int64(time.Hour)} {
		r.record(v)
	}
	if r.h.TotalCount() != 5 || r.over != 1 || r.under != 1 {
		t.Errorf("count %d, over %d, under %d: want 5, 1, 1", r.h.TotalCount(), r.over, r.under)
	}
	if max := r.h.Max(); !r.h.ValuesAreEquivalent(max, int64(time.Second)) {
		t.Errorf("max %d, want the highest value %d", max, int64(time.Second))
	}
}

// TestSummaryNeverNaN checks that an empty histogram summarizes to zeros
// and that a zero Result marshals.
func TestSummaryNeverNaN(t *testing.T) {
	cfg := Config{}.WithDefaults()
	s := Summarize(newHistogram(&cfg), 0)
	if s.Count != 0 || s.MeanNs != 0 || s.P99Ns != 0 || s.Histogram == "" {
		t.Errorf("empty summary %+v", s)
	}
	r := &Result{Latency: s}
	judge(r)
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("json.Marshal: %v", err)
	}
	if finite(math.NaN()) != 0 || finite(math.Inf(1)) != 0 || finite(2.5) != 2.5 {
		t.Error("finite does not map NaN and Inf to 0")
	}
}

// TestWriteWindowHlog: a result's whole window, written after the run as
// a one-interval log, reads back with hdrhistogram-go's reader as the
// result's own corrected and uncorrected histograms.
func TestWriteWindowHlog(t *testing.T) {
	corrected := hdr.New(1000, 60_000_000_000, 3)
	uncorrected := hdr.New(1000, 60_000_000_000, 3)
	for i := int64(1); i <= 1000; i++ {
		corrected.RecordValue(i * 7_000)
		uncorrected.RecordValue(i * 5_000)
	}
	r := &Result{StartTime: time.UnixMilli(1_700_000_000_789), WindowNs: int64(2 * time.Second),
		Latency: Summarize(corrected, 0), Uncorrected: Summarize(uncorrected, 0)}
	path := filepath.Join(t.TempDir(), "point.hlog")
	var b bytes.Buffer
	if err := WriteWindowHlog(&b, r, "point"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	un, uc, start := readHlog(t, path)
	if len(un) != 1 || len(uc) != 1 {
		t.Fatalf("%d untagged and %d uncorrected intervals, want one each", len(un), len(uc))
	}
	if math.Abs(start-1_700_000_000.789) > 1e-3 {
		t.Errorf("StartTime %f, want 1700000000.789", start)
	}
	for _, c := range []struct {
		got, want *hdr.Histogram
	}{{un[0], corrected}, {uc[0], uncorrected}} {
		if c.got.TotalCount() != c.want.TotalCount() || c.got.ValueAtQuantile(99) != c.want.ValueAtQuantile(99) {
			t.Errorf("read back %d values, p99 %d; want %d, %d", c.got.TotalCount(), c.got.ValueAtQuantile(99), c.want.TotalCount(), c.want.ValueAtQuantile(99))
		}
	}
	if got := un[0].EndTimeMs() - un[0].StartTimeMs(); got != 2000 {
		t.Errorf("interval length %d ms, want 2000", got)
	}
}
