package loadgen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concbench/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goodResult returns a synthetic valid open-loop result.
func goodResult() *Result {
	cfg := Config{Addr: "127.0.0.1:8080", Rate: 20000, Conns: 64, Duration: 10 * time.Second, Warmup: time.Second, Seed: 1}.WithDefaults()
	r := &Result{
		Mode:              cfg.Mode(),
		Config:            cfg,
		WarmupNs:          int64(time.Second),
		WindowNs:          int64(10 * time.Second),
		TargetRatePerS:    20000,
		ScheduledRatePerS: 19987.3,
		SentRatePerS:      19987.3,
		AchievedRatePerS:  19987.3,
		Requests:          Counts{Scheduled: 199873, Sent: 199873, Completed: 199873, InWindow: 199870, OK: 199873, Warmup: 20011},
		Errors:            map[string]int64{},
		Latency:           Summary{Count: 199873, MinNs: 14000, MeanNs: 41230.5, P50Ns: 38000, P90Ns: 52000, P99Ns: 91000, P999Ns: 412000, P9999Ns: 1900000, MaxNs: 2100000},
		Uncorrected:       Summary{Count: 199873, MinNs: 13000, MeanNs: 35120.2, P50Ns: 33000, P90Ns: 45000, P99Ns: 70000, P999Ns: 150000, P9999Ns: 800000, MaxNs: 900000},
		SendLag:           Summary{Count: 199873, P50Ns: 800, P99Ns: 9000, P999Ns: 31000, MaxNs: 120000},
		Histogram:         HistogramParams{LowestNs: 1000, HighestNs: 60e9, SignificantDigits: 3},
		Generator:         Generator{Workers: 1, WorkerUserNs: 1.1e9, WorkerSystemNs: 2.3e9, ProcessCPUNs: 3.5e9, CPUNsPerRequest: 17010.4, BusyFraction: 0.41, RunQueueFraction: 0.004, GOMAXPROCS: 1, CPUs: "1"},
		SendProcess:       SendProcess{Applicable: true, Judged: true, Gaps: 2040, KSD: 0.02, KSP: 0.39, Lag1Rho: 0.03, Lag1Z: 1.3, PlannedKSD: 0.012, PlannedKSP: 0.93, PlannedLag1Rho: 0.007, PlannedLag1Z: 0.3},
		Trend: &Trend{
			SliceMeanNs: []int64{41000, 40500, 42000, 41200, 40800, 41900, 41100, 40700, 41600, 41300},
			InFlight:    []int64{1, 2, 0, 1, 3, 1, 0, 2, 1, 1, 1}, ScheduleDebtNs: make([]int64, 11),
		},
		Timing: Timing{Poll: PollBusy, ReceiveTimestamps: "kernel", KernelStamped: 199873,
			ProbeWakeLateness: Lateness{Count: 64, P50Ns: 57500, P99Ns: 156000, P999Ns: 156000, MaxNs: 156000},
			IdleIterations:    Lateness{Count: 4e6, P50Ns: 1500, P99Ns: 4000, P999Ns: 48000, MaxNs: 1260000},
			StalledNs:         int64(300 * time.Millisecond), StalledFraction: 0.03,
			ReceiveLag: Summary{Count: 199873, P50Ns: 1000, P99Ns: 5000}},
	}
	for _, p := range reportedPercentiles {
		l := map[float64]int64{50: 38000, 90: 52000, 99: 91000, 99.9: 412000, 99.99: 1900000}[p]
		s := l - l/50 // 2% of each percentile may be the generator's
		r.LagShares = append(r.LagShares, LagShare{Percentile: p, LatencyNs: l, WithoutLagNs: s, Share: 0.02, BoundNs: l / 2,
			Judged: 199873*(1-p/100) >= minTail})
	}
	if r.Trend != nil {
		var means, infl []float64
		for _, v := range r.Trend.SliceMeanNs {
			means = append(means, float64(v))
		}
		for _, v := range r.Trend.InFlight {
			infl = append(infl, float64(v))
		}
		r.Trend.LatencyZ, r.Trend.InFlightZ = stats.MannKendallZ(means), stats.MannKendallZ(infl)
	}
	return r
}

// growing returns n values rising linearly from a to b.
func growing(n int, a, b int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = a + (b-a)*int64(i)/int64(n-1)
	}
	return out
}

// overloaded makes r's trend the trend of a server that falls behind.
func overloaded(r *Result) {
	r.Trend.SliceMeanNs = growing(10, 50000, 180e6)
	r.Trend.InFlight = growing(11, 3, 5400)
	r.Trend.LatencyZ, r.Trend.InFlightZ = 5.0, 5.3
}

// TestJudge checks each verdict rule on its own.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*Result)
		failure string
		reason  string // "" for valid
		check   Check  // the main check, with reason
		warning string
	}{
		{name: "valid", change: func(*Result) {}},
		{name: "achieved-below-99%", change: func(r *Result) { r.Requests.InWindow = 197000; r.AchievedRatePerS = 19700 },
			reason: "achieved 19700 req/s is below 99% of the 19987 req/s scheduled (target 20000)", check: CheckRate},
		{name: "answered-after-the-window", change: func(r *Result) { r.Requests.InWindow = 150000 }, // Completed stays 199873
			reason: "150000 of 199873 scheduled requests were sent and answered inside the window", check: CheckRate},
		{name: "achieved-at-99%", change: func(r *Result) { r.Requests.InWindow = 197875 }},
		{name: "over-capacity", change: overloaded, reason: "over capacity: the server fell behind the offered 20000 req/s", check: CheckOverCapacity},
		{name: "over-capacity-is-the-main-reason", change: func(r *Result) { overloaded(r); r.Requests.InWindow = 150000 },
			reason: "achieved", check: CheckOverCapacity},
		{name: "latency-trend-alone", change: func(r *Result) { // a stall late in the window, not a backlog
			r.Trend.SliceMeanNs = growing(10, 50000, 5e6)
			r.Trend.LatencyZ = 5.0
		}, warning: "while the requests in flight did not: stalls late in the window"},
		{name: "latency-trend-too-small", change: func(r *Result) { // significant but below growthFactor
			r.Trend.SliceMeanNs = growing(10, 50000, 80000)
			r.Trend.LatencyZ = 5.0
		}},
		{name: "in-flight-trend-too-small", change: func(r *Result) { // significant but not 1% of the requests
			r.Trend.InFlight = growing(11, 3, 40)
			r.Trend.InFlightZ = 5.0
		}},
		{name: "schedule-debt", change: func(r *Result) { r.Trend.ScheduleDebtNs[10] = int64(300 * time.Millisecond) },
			reason: "the next send was 300ms behind its schedule", check: CheckOverCapacity},
		{name: "generator-lag-p99", change: func(r *Result) { r.LagShares[2].WithoutLagNs = 40000; r.LagShares[2].Share = 0.56 },
			reason: "the generator's own lateness may account for p99 by 51.0µs (91.0µs with it, 40.0µs without; 56%)", check: CheckBias},
		{name: "generator-lag-at-bound", change: func(r *Result) { r.LagShares[2].WithoutLagNs = 91000 - 45500; r.LagShares[2].Share = 0.5 },
			warning: "the generator's own lateness may account for p99 by 45.5µs"},
		{name: "generator-lag-p99.9-untrusted", change: func(r *Result) { r.LagShares[3].WithoutLagNs = 100000; r.LagShares[3].Share = 0.76 },
			warning: "not to be trusted, left out of reports' aggregates: the generator's own lateness may account for p99.9 by 312µs"},
		{name: "generator-lag-unjudged", change: func(r *Result) {
			r.LagShares[4].WithoutLagNs = 1000
			r.LagShares[4].Judged = false
		}, warning: "p99.99 of 199873 responses rest on fewer than 5 responses"},
		{name: "relaxed", change: func(r *Result) { r.Config.Limits.MaxRunQueue = 1; r.Generator.RunQueueFraction = 0.3 },
			warning: "the checks on the generator's own health were relaxed"},
		{name: "generator-lag-closed", change: func(r *Result) { r.Config.Closed = true; r.LagShares = nil }},
		{name: "send-process-ks", change: func(r *Result) { r.SendProcess.KSD, r.SendProcess.KSP = 0.19, 1e-12 },
			reason: "are not exponential (Kolmogorov–Smirnov D 0.190", check: CheckSendProcess},
		{name: "send-process-schedule-unusual", change: func(r *Result) { // the control fails too: not the generator's doing
			r.SendProcess.KSP, r.SendProcess.PlannedKSP = 1e-5, 1e-4
		}},
		{name: "send-process-small", change: func(r *Result) { r.SendProcess.KSD, r.SendProcess.KSP = 0.05, 1e-5 },
			warning: "below the distortion the verdict fails a run for (0.10)"},
		{name: "send-process-lag1", change: func(r *Result) { r.SendProcess.Lag1Rho, r.SendProcess.Lag1Z = -0.2, -9 },
			reason: "consecutive gaps between the requests as sent are correlated", check: CheckSendProcess},
		{name: "send-process-not-applicable", change: func(r *Result) { r.SendProcess = SendProcess{Note: "not applicable"} }},
		{name: "send-process-not-judged", change: func(r *Result) {
			r.SendProcess.Judged, r.SendProcess.KSD, r.SendProcess.KSP = false, 0.09, 1e-12
			r.SendProcess.Note = "the generator's workers were busy 30% of the time"
		}, warning: "not judged: the generator's workers were busy 30% of the time"},
		{name: "unsent", change: func(r *Result) { r.Requests.Unsent = 3 }, reason: "3 scheduled requests were never sent", check: CheckUnsent},
		{name: "verify-errors", change: func(r *Result) { r.Errors = map[string]int64{"verify_id": 2, "timeout": 1} },
			reason: "errors: timeout 1, verify_id 2", check: CheckErrors},
		{name: "ledger-outcomes", change: func(r *Result) { r.Errors = map[string]int64{"status_insufficient_funds": 7} },
			warning: "7 ledger requests ended insufficient_funds"},
		{name: "warmup-errors", change: func(r *Result) { r.Requests.WarmupErrors = 3 }, reason: "3 requests failed during warm-up", check: CheckWarmup},
		{name: "warmup-short", change: func(r *Result) { r.WarmupNs = int64(50 * time.Millisecond) }, reason: "warm-up 50ms is shorter than 100ms", check: CheckWarmup},
		{name: "out-of-range", change: func(r *Result) { r.Latency.OutOfRange = 4 }, reason: "4 latency values fell outside the histogram range 1.00µs..60.0s", check: CheckOutOfRange},
		{name: "no-responses", change: func(r *Result) { r.Requests.OK = 0 }, reason: "no successful responses", check: CheckNoResponses},
		{name: "interrupted", change: func(*Result) {}, failure: "the run was interrupted", reason: "the run was interrupted", check: CheckAborted},
		{name: "held", change: func(r *Result) { r.Requests.Held = 10; r.HeldLag.P99Ns = 3e6 }, warning: "10 requests (0.01%) waited for the in-flight bound (256 per connection)"},
		{name: "busy", change: func(r *Result) { r.Generator.BusyFraction = 0.95 }, reason: "busy 95% of the time (at most 90%)", check: CheckBusy},
		{name: "busy-closed", change: func(r *Result) { r.Config.Closed = true; r.Generator.BusyFraction = 0.95 }, reason: "busy 95%", check: CheckBusy},
		{name: "gc", change: func(r *Result) { r.Generator.GCPauseNs = 2e6 }, warning: "GC paused 2.00ms"},
		{name: "run-queue", change: func(r *Result) {
			r.Generator.WorkerRunQueueNs, r.Generator.RunQueueFraction, r.Generator.WorkerInvoluntaryCtxsw = 1.2e9, 0.12, 900
		}, reason: "waited 1.20s for a CPU, 12.0% of their time (at most 10%; 900 involuntary context switches)", check: CheckCPU},
		{name: "run-queue-closed", change: func(r *Result) { r.Config.Closed = true; r.Generator.RunQueueFraction = 0.3 }, reason: "for a CPU", check: CheckCPU},
		{name: "steal", change: func(r *Result) { r.Generator.StealNs, r.Generator.StealFraction = 8e8, 0.08 },
			reason: "the hypervisor took 800ms (8.0%, at most 5%)", check: CheckCPU},
		{name: "machine-stalls", change: func(r *Result) { r.Timing.StalledFraction = 0.07 }, warning: "stalled the generator's busy-polling thread for 7.0% of the window"},
		{name: "user-timestamps", change: func(r *Result) { r.Timing.UserStamped = 10 }, warning: "10 of 199883 reads had no kernel receive timestamp"},
		{name: "clock-step", change: func(r *Result) { r.Timing.ClockStepNs = -int64(time.Millisecond) },
			reason: "the wall clock was stepped by 1.00ms", check: CheckClock},
		{name: "clock-step-tiny", change: func(r *Result) { r.Timing.ClockStepNs = 900 }},
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
			if len(r.Checks) != len(r.Reasons) {
				t.Errorf("%d checks for %d reasons", len(r.Checks), len(r.Reasons))
			}
			if tc.check != "" && (len(r.Checks) == 0 || r.Checks[0] != tc.check) {
				t.Errorf("checks %q: want %q first", r.Checks, tc.check)
			}
			if tc.name == "generator-lag-p99.9-untrusted" && (r.Trusted(99.9) || !r.Trusted(99)) {
				t.Errorf("Trusted(99.9) %t, Trusted(99) %t: want only p99.9 untrusted", r.Trusted(99.9), r.Trusted(99))
			}
			if over := tc.check == CheckOverCapacity; r.OverCapacity != over {
				t.Errorf("OverCapacity %t, want %t", r.OverCapacity, over)
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
