package loadgen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goodResult returns a synthetic valid open-loop result.
func goodResult() *Result {
	cfg := Config{Addr: "127.0.0.1:8080", Rate: 20000, Conns: 64, Duration: 10 * time.Second, Warmup: time.Second, Seed: 1}.WithDefaults()
	return &Result{
		Mode:              cfg.Mode(),
		Config:            cfg,
		WarmupNs:          int64(time.Second),
		WindowNs:          int64(10 * time.Second),
		TargetRatePerS:    20000,
		ScheduledRatePerS: 19987.3,
		SentRatePerS:      19987.3,
		AchievedRatePerS:  19987.3,
		Requests:          Counts{Scheduled: 199873, Sent: 199873, Completed: 199873, OK: 199873, Warmup: 20011},
		Errors:            map[string]int64{},
		Latency:           Summary{Count: 199873, MinNs: 14000, MeanNs: 41230.5, P50Ns: 38000, P90Ns: 52000, P99Ns: 91000, P999Ns: 412000, P9999Ns: 1900000, MaxNs: 2100000},
		Uncorrected:       Summary{Count: 199873, MinNs: 13000, MeanNs: 35120.2, P50Ns: 33000, P90Ns: 45000, P99Ns: 70000, P999Ns: 150000, P9999Ns: 800000, MaxNs: 900000},
		SendLag:           Summary{Count: 199873, P50Ns: 800, P99Ns: 9000, P999Ns: 31000, MaxNs: 120000},
		Histogram:         HistogramParams{LowestNs: 1000, HighestNs: 60e9, SignificantDigits: 3},
		Generator:         Generator{Workers: 1, WorkerUserNs: 1.1e9, WorkerSystemNs: 2.3e9, ProcessCPUNs: 3.5e9, CPUNsPerRequest: 17010.4, BusyFraction: 0.41, GOMAXPROCS: 1, CPUs: "1"},
	}
}

// TestJudge checks each verdict rule on its own.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*Result)
		failure string
		reason  string // "" for valid
		warning string
	}{
		{name: "valid", change: func(*Result) {}},
		{name: "achieved-below-99%", change: func(r *Result) { r.Requests.Completed = 197000; r.AchievedRatePerS = 19700 },
			reason: "achieved 19700 req/s is below 99% of the 19987 req/s scheduled (target 20000)"},
		{name: "achieved-at-99%", change: func(r *Result) { r.Requests.Completed = 197875 }},
		{name: "send-lag", change: func(r *Result) { r.SendLag.P99Ns = 250000 }, reason: "send lag p99 250µs exceeds 100µs"},
		{name: "send-lag-closed", change: func(r *Result) { r.Config.Closed = true; r.SendLag.P99Ns = 250000 }},
		{name: "verify-errors", change: func(r *Result) { r.Errors = map[string]int64{"verify_id": 2, "timeout": 1} },
			reason: "errors: timeout 1, verify_id 2"},
		{name: "ledger-outcomes", change: func(r *Result) { r.Errors = map[string]int64{"status_insufficient_funds": 7} },
			warning: "7 ledger requests ended insufficient_funds"},
		{name: "warmup-errors", change: func(r *Result) { r.Requests.WarmupErrors = 3 }, reason: "3 requests failed during warm-up"},
		{name: "warmup-short", change: func(r *Result) { r.WarmupNs = int64(50 * time.Millisecond) }, reason: "warm-up 50ms is shorter than 100ms"},
		{name: "out-of-range", change: func(r *Result) { r.Latency.OutOfRange = 4 }, reason: "4 latency values fell outside the histogram range 1.00µs..60.0s"},
		{name: "no-responses", change: func(r *Result) { r.Requests.OK = 0 }, reason: "no successful responses"},
		{name: "interrupted", change: func(*Result) {}, failure: "the run was interrupted", reason: "the run was interrupted"},
		{name: "held", change: func(r *Result) { r.Requests.Held = 10; r.HeldLag.P99Ns = 3e6 }, warning: "10 requests (0.01%) waited for the in-flight bound (256 per connection)"},
		{name: "busy", change: func(r *Result) { r.Generator.BusyFraction = 0.95 }, warning: "busy 95% of the time"},
		{name: "gc", change: func(r *Result) { r.Generator.GCPauseNs = 2e6 }, warning: "GC paused 2.00ms"},
		{name: "run-queue", change: func(r *Result) { r.Generator.WorkerRunQueueNs = 2e8; r.Generator.WorkerInvoluntaryCtxsw = 900 },
			warning: "waited 200ms for a CPU during the window (900 involuntary context switches)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := goodResult()
			tc.change(r)
			var failures []string
			if tc.failure != "" {
				failures = append(failures, tc.failure)
			}
			judge(r, failures...)
			reasons := strings.Join(r.Reasons, "\n")
			switch {
			case tc.reason == "" && !r.Valid:
				t.Errorf("invalid: %q", r.Reasons)
			case tc.reason != "" && (r.Valid || !strings.Contains(reasons, tc.reason)):
				t.Errorf("valid %t, reasons %q: want a reason containing %q", r.Valid, r.Reasons, tc.reason)
			}
			if tc.warning != "" && !strings.Contains(strings.Join(r.Warnings, "\n"), tc.warning) {
				t.Errorf("warnings %q: want one containing %q", r.Warnings, tc.warning)
			}
		})
	}
}

// TestWriteTextGolden checks the human summary against golden files
// (regenerate with go test -update).
func TestWriteTextGolden(t *testing.T) {
	closed := goodResult()
	closed.Config.Closed, closed.Config.Rate, closed.Config.Outstanding = true, 0, 1
	closed.Mode = closed.Config.Mode()
	closed.TargetRatePerS, closed.ScheduledRatePerS = 0, 0
	closed.Errors = map[string]int64{"verify_checksum": 1, "status_internal": 2}
	closed.Requests.Failed = 3
	closed.Hlog = "out.hlog"
	for _, tc := range []struct {
		name string
		r    *Result
	}{
		{name: "open-valid", r: goodResult()},
		{name: "closed-invalid", r: closed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judge(tc.r)
			var b bytes.Buffer
			if err := tc.r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("summary differs from %s:\n%s\nwant:\n%s", path, b.String(), want)
			}
		})
	}
}

// TestFormatNs checks the three-significant-digit duration format.
func TestFormatNs(t *testing.T) {
	for ns, want := range map[int64]string{0: "0ns", 812: "812ns", 45123: "45.1µs", 1234567: "1.23ms", 200e6: "200ms", 1.5e9: "1.50s", 61e9: "61.0s"} {
		if got := FormatNs(ns); got != want {
			t.Errorf("FormatNs(%d) = %q, want %q", ns, got, want)
		}
	}
}
