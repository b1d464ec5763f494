package loadgen

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// partResult returns a synthetic part: n latencies drawn from seed,
// recorded into histograms of cfg's geometry, with the counts and rates
// that go with them.
func partResult(t *testing.T, cfg Config, seed uint64, n int64, reasons ...string) *Result {
	t.Helper()
	cfg = cfg.WithDefaults()
	rng := rand.New(rand.NewPCG(seed, 1))
	lat, unc, lag := newHistogram(&cfg), newHistogram(&cfg), newHistogram(&cfg)
	for range n {
		v := int64(20_000 + rng.ExpFloat64()*50_000)
		l := int64(rng.ExpFloat64() * 2_000)
		if err := lat.RecordValue(v + l); err != nil {
			t.Fatal(err)
		}
		unc.RecordValue(v)
		lag.RecordValue(l)
	}
	win := float64(cfg.Duration) / 1e9
	r := &Result{
		Config: cfg, Valid: len(reasons) == 0, Reasons: reasons, Errors: map[string]int64{"status_busy": int64(seed)},
		StartTime:         time.Unix(1_700_000_000, int64(seed)),
		ScheduledRatePerS: float64(n) / win, SentRatePerS: float64(n) / win, AchievedRatePerS: float64(n) / win,
		Requests:    Counts{Scheduled: n, Sent: n, Completed: n, InWindow: n, OK: n, Warmup: 7},
		Latency:     Summarize(lat, 0),
		Uncorrected: Summarize(unc, 0), FromIntended: Summarize(lat, 0), WithoutOwnLag: Summarize(unc, 0),
		SendLag:   Summarize(lag, 1),
		Generator: Generator{Workers: 1, WorkerUserNs: 1000, BusyFraction: 0.1 * float64(seed)},
	}
	for range reasons {
		r.Checks = append(r.Checks, CheckCPU)
	}
	return r
}

// counts returns a histogram's count at every distinct value.
func counts(h *hdr.Histogram) map[int64]int64 {
	m := map[int64]int64{}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			m[b.From] += b.Count
		}
	}
	return m
}

func decode(t *testing.T, s Summary) *hdr.Histogram {
	t.Helper()
	h, err := DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMerge checks that Merge adds the parts' histograms bucket by bucket
// (the merged percentiles are those of all requests together), sums
// counts, errors and rates, and is invalid exactly when a part is or a
// failure is given, with each reason labelled.
func TestMerge(t *testing.T) {
	cfg := Config{Addr: "10.0.0.1:80", Rate: 3000, Conns: 6, Duration: time.Second, Warmup: 200 * time.Millisecond}
	tests := []struct {
		name      string
		reasons   [][]string
		failures  []Failure
		wantValid bool
		wantFirst string
	}{
		{name: "all valid", reasons: [][]string{nil, nil}, wantValid: true},
		{name: "one part invalid", reasons: [][]string{nil, {"slow CPU"}}, wantFirst: "b: slow CPU"},
		{name: "lost part", reasons: [][]string{nil, nil}, failures: []Failure{{Text: "c: lost mid-run"}}, wantFirst: "c: lost mid-run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var parts []Part
			for i, rs := range tc.reasons {
				parts = append(parts, Part{Label: string(rune('a' + i)), Result: partResult(t, cfg, uint64(i+1), int64(1000+700*i), rs...)})
			}
			m, err := Merge(cfg, parts, tc.failures...)
			if err != nil {
				t.Fatal(err)
			}
			if m.Valid != tc.wantValid || len(m.Reasons) != len(m.Checks) {
				t.Fatalf("valid %v (want %v), reasons %q, checks %q", m.Valid, tc.wantValid, m.Reasons, m.Checks)
			}
			if tc.wantFirst != "" && m.Reasons[0] != tc.wantFirst {
				t.Errorf("first reason %q, want %q", m.Reasons[0], tc.wantFirst)
			}
			for _, f := range tc.failures {
				if i := slices.Index(m.Reasons, f.Text); i < 0 || m.Checks[i] != CheckAborted {
					t.Errorf("failure %q not a reason with check aborted: %q %q", f.Text, m.Reasons, m.Checks)
				}
			}
			for _, h := range []struct {
				name string
				get  func(*Result) Summary
			}{
				{"latency", func(r *Result) Summary { return r.Latency }},
				{"uncorrected", func(r *Result) Summary { return r.Uncorrected }},
				{"send lag", func(r *Result) Summary { return r.SendLag }},
				{"without own lag", func(r *Result) Summary { return r.WithoutOwnLag }},
			} {
				want := map[int64]int64{}
				var n, oor int64
				for _, p := range parts {
					for v, c := range counts(decode(t, h.get(p.Result))) {
						want[v] += c
					}
					n += h.get(p.Result).Count
					oor += h.get(p.Result).OutOfRange
				}
				got := counts(decode(t, h.get(m)))
				if len(got) != len(want) {
					t.Errorf("%s: %d distinct values merged, want %d", h.name, len(got), len(want))
				}
				for v, c := range want {
					if got[v] != c {
						t.Errorf("%s: count at %d is %d, want %d", h.name, v, got[v], c)
						break
					}
				}
				if s := h.get(m); s.Count != n || s.OutOfRange != oor {
					t.Errorf("%s: count %d, out of range %d; want %d, %d", h.name, s.Count, s.OutOfRange, n, oor)
				}
			}
			var ok, errs int64
			var rate float64
			for _, p := range parts {
				ok += p.Result.Requests.OK
				errs += p.Result.Errors["status_busy"]
				rate += p.Result.AchievedRatePerS
			}
			if m.Requests.OK != ok || m.Errors["status_busy"] != errs || m.AchievedRatePerS != rate {
				t.Errorf("ok %d, errors %d, rate %g; want %d, %d, %g", m.Requests.OK, m.Errors["status_busy"], m.AchievedRatePerS, ok, errs, rate)
			}
			if m.Generator.BusyFraction != 0.2 || m.Generator.Workers != 2 {
				t.Errorf("generator busy %g over %d workers, want the largest (0.2) over 2", m.Generator.BusyFraction, m.Generator.Workers)
			}
			if len(m.LagShares) != len(reportedPercentiles) {
				t.Errorf("%d lag shares, want %d", len(m.LagShares), len(reportedPercentiles))
			}
		})
	}
}

// TestMergeRejectsOtherGeometry checks that a part whose histogram range
// differs from the run's is an error, not a silent loss.
func TestMergeRejectsOtherGeometry(t *testing.T) {
	cfg := Config{Addr: "10.0.0.1:80", Rate: 100, Duration: time.Second, HistHighest: time.Second}
	wide := cfg
	wide.HistHighest = time.Minute
	p := partResult(t, wide, 1, 10)
	h := newHistogram(&p.Config)
	h.RecordValue(int64(30 * time.Second))
	p.Latency = Summarize(h, 0)
	if _, err := Merge(cfg, []Part{{Label: "a", Result: p}}); err == nil || !strings.Contains(err.Error(), "range") {
		t.Fatalf("Merge of a part beyond the range: %v, want an error naming the range", err)
	}
}

// TestStartAt checks that a run with Config.StartAt starts its schedule
// at that instant: the measurement starts exactly a warm-up after it.
func TestStartAt(t *testing.T) {
	s := startServer(t, "http", nil)
	at := time.Now().Add(time.Second).Round(0) // ample for priming one connection
	r, err := Run(context.Background(), Config{Addr: s.addr(), Rate: 200, Conns: 1, Duration: 100 * time.Millisecond,
		Warmup: 100 * time.Millisecond, StartAt: time.Unix(0, at.UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	switch want := at.Add(100 * time.Millisecond); {
	case r.StartTime.Before(want):
		t.Errorf("measurement started at %v, before %v (StartAt + warm-up)", r.StartTime, want)
	case r.StartTime.After(want):
		// Priming outlasted the second given it: the schedule started at
		// once (Config.StartAt), which only a very loaded machine does.
		t.Skipf("measurement started at %v, %v after StartAt + warm-up: priming outlasted StartAt on this machine", r.StartTime, r.StartTime.Sub(want))
	}
}
