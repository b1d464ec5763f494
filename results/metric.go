package results

import "concbench/loadgen"

// Metric extracts one quantity from a point. Value reports false when the
// point does not carry the quantity (a failed point, a point of another
// kind, a counter the kernel did not expose): such points are skipped and
// counted, never read as zero.
type Metric struct {
	// Name is the metric's CSV column: lower case, with its unit, e.g.
	// "latency_p99_ns".
	Name string
	// Label is a human name, e.g. "p99 latency (corrected)".
	Label string
	// Unit is the unit of Value, as printed, e.g. "ns", "ctxsw/req".
	Unit string
	// BenchUnit is the unit in the Go benchmark format, one benchstat
	// understands (e.g. "p99-ns", "ctxsw/op"); empty if the metric is not
	// exported there.
	BenchUnit string
	// BenchScale converts Value to BenchUnit (0 means 1), e.g. 1e3 for
	// µs/req written as cpu-ns/op.
	BenchScale float64
	// HigherIsBetter is true for throughput-like metrics.
	HigherIsBetter bool
	// Percentile, for a percentile of the corrected latency (50, 90, 99,
	// 99.9), lets aggregates leave out a point whose load-generator verdict
	// does not trust that percentile (loadgen.Result.Trusted); 0 for other
	// metrics.
	Percentile float64
	// Mechanism marks a mechanisms point's metric (system calls, futex
	// wakes, wake-up IPIs per request): it has a value on KindMechanisms
	// points only, whose other metrics the counting perturbs, so that
	// bench.txt gives a mechanisms point these metrics and no other.
	Mechanism bool
	// Value returns the point's value of the metric.
	Value func(p *Point) (float64, bool)
}

// load returns p's load-generator result if p was measured.
func load(p *Point) (*loadgen.Result, bool) {
	if p.Status != StatusOK || p.Load == nil {
		return nil, false
	}
	return p.Load, true
}

// latency returns a percentile of p's corrected (or uncorrected) latency,
// if any successful response was measured.
func latency(uncorrected bool, pick func(*loadgen.Summary) int64) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		l, ok := load(p)
		if !ok {
			return 0, false
		}
		s := &l.Latency
		if uncorrected {
			s = &l.Uncorrected
		}
		if s.Count == 0 {
			return 0, false
		}
		return float64(pick(s)), true
	}
}

// server returns a per-request server cost of p, if the server completed
// requests in the window (the harness measured it).
func server(pick func(*ServerCost) float64) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		if p.Status != StatusOK || p.Server.Requests == 0 {
			return 0, false
		}
		return pick(&p.Server), true
	}
}

// other returns a per-request cost of p's other threads
// (ServerCost.Other), if they were read.
func other(pick func(*OtherThreads) float64) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		if p.Status != StatusOK || p.Server.Requests == 0 || p.Server.Other == nil {
			return 0, false
		}
		return pick(p.Server.Other), true
	}
}

// goHeap returns a per-request cost of p's Go heap, if the server has
// one (not a foreign server, ServerCost.Foreign).
func goHeap(pick func(*ServerCost) float64) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		if p.Server.Foreign != "" {
			return 0, false
		}
		return server(pick)(p)
	}
}

// balance returns a value of p's thread balance (ServerCost.Balance), if
// the point was measured, has one and the value is present (not 0).
func balance(pick func(*ThreadBalance) float64) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		if p.Status != StatusOK || p.Server.Balance == nil {
			return 0, false
		}
		v := pick(p.Server.Balance)
		return v, v > 0
	}
}

// The metrics. Latencies are in nanoseconds, as recorded.
var (
	// Capacity is the achieved rate of a capacity (closed-loop
	// saturation) point.
	Capacity = Metric{Name: "capacity_req_per_s", Label: "capacity", Unit: "req/s", BenchUnit: "req/s", HigherIsBetter: true,
		Value: func(p *Point) (float64, bool) {
			l, ok := load(p)
			if !ok || p.Kind != KindCapacity {
				return 0, false
			}
			return l.AchievedRatePerS, true
		}}
	// SLOCapacity is a latency-objective search's result (KindSLO): the
	// highest probed open-loop rate whose percentile met the workload's
	// bound (SLOResult.RatePerS), 0 if none did. A result spoiled by a
	// generator-invalid probe has none.
	SLOCapacity = Metric{Name: "slo_capacity_req_per_s", Label: "SLO capacity", Unit: "req/s", BenchUnit: "slo-req/s", HigherIsBetter: true,
		Value: func(p *Point) (float64, bool) {
			if p.Kind != KindSLO || p.Status != StatusOK || p.SLO == nil || p.SLO.Invalid != "" {
				return 0, false
			}
			return p.SLO.RatePerS, true
		}}
	// AchievedRate is the rate of responses (any outcome) of any point.
	AchievedRate = Metric{Name: "achieved_req_per_s", Label: "achieved rate", Unit: "req/s", BenchUnit: "achieved-req/s", HigherIsBetter: true,
		Value: func(p *Point) (float64, bool) {
			l, ok := load(p)
			if !ok {
				return 0, false
			}
			return l.AchievedRatePerS, true
		}}

	LatencyP50 = Metric{Name: "latency_p50_ns", Label: "p50 latency", Unit: "ns", BenchUnit: "p50-ns", Percentile: 50, Value: latency(false, func(s *loadgen.Summary) int64 { return s.P50Ns })}
	LatencyP90 = Metric{Name: "latency_p90_ns", Label: "p90 latency", Unit: "ns", BenchUnit: "p90-ns", Percentile: 90, Value: latency(false, func(s *loadgen.Summary) int64 { return s.P90Ns })}
	LatencyP99 = Metric{Name: "latency_p99_ns", Label: "p99 latency", Unit: "ns", BenchUnit: "p99-ns", Percentile: 99, Value: latency(false, func(s *loadgen.Summary) int64 { return s.P99Ns })}
	// LatencyP99Intervals is the median of the corrected latency's p99s
	// of the window's 100 ms intervals (loadgen.IntervalTail): a tail that
	// one stall of the machine cannot set, beside the window's own p99.
	LatencyP99Intervals = Metric{Name: "latency_p99_intervals_median_ns", Label: "p99 of 100 ms intervals, median", Unit: "ns", BenchUnit: "p99-intervals-ns", Percentile: 99,
		Value: func(p *Point) (float64, bool) {
			l, ok := load(p)
			if !ok || l.Intervals == nil || l.Intervals.Intervals == 0 {
				return 0, false
			}
			return float64(l.Intervals.P99MedianNs), true
		}}
	LatencyP999 = Metric{Name: "latency_p99_9_ns", Label: "p99.9 latency", Unit: "ns", BenchUnit: "p99.9-ns", Percentile: 99.9, Value: latency(false, func(s *loadgen.Summary) int64 { return s.P999Ns })}

	UncorrectedP50  = Metric{Name: "uncorrected_latency_p50_ns", Label: "p50 latency (uncorrected)", Unit: "ns", BenchUnit: "uncorrected-p50-ns", Value: latency(true, func(s *loadgen.Summary) int64 { return s.P50Ns })}
	UncorrectedP90  = Metric{Name: "uncorrected_latency_p90_ns", Label: "p90 latency (uncorrected)", Unit: "ns", BenchUnit: "uncorrected-p90-ns", Value: latency(true, func(s *loadgen.Summary) int64 { return s.P90Ns })}
	UncorrectedP99  = Metric{Name: "uncorrected_latency_p99_ns", Label: "p99 latency (uncorrected)", Unit: "ns", BenchUnit: "uncorrected-p99-ns", Value: latency(true, func(s *loadgen.Summary) int64 { return s.P99Ns })}
	UncorrectedP999 = Metric{Name: "uncorrected_latency_p99_9_ns", Label: "p99.9 latency (uncorrected)", Unit: "ns", BenchUnit: "uncorrected-p99.9-ns", Value: latency(true, func(s *loadgen.Summary) int64 { return s.P999Ns })}

	// SendLagP99 is the load generator's send lag p99 (open loop only).
	SendLagP99 = Metric{Name: "send_lag_p99_ns", Label: "send lag p99", Unit: "ns", BenchUnit: "send-lag-p99-ns",
		Value: func(p *Point) (float64, bool) {
			l, ok := load(p)
			if !ok || l.SendLag.Count == 0 {
				return 0, false
			}
			return float64(l.SendLag.P99Ns), true
		}}

	CtxswPerReq            = Metric{Name: "ctxsw_per_req", Label: "context switches per request", Unit: "ctxsw/req", BenchUnit: "ctxsw/op", Value: server(func(s *ServerCost) float64 { return s.CtxswPerRequest })}
	VoluntaryCtxswPerReq   = Metric{Name: "voluntary_ctxsw_per_req", Label: "voluntary context switches per request", Unit: "ctxsw/req", BenchUnit: "vctxsw/op", Value: server(func(s *ServerCost) float64 { return s.VoluntaryCtxswPerRequest })}
	InvoluntaryCtxswPerReq = Metric{Name: "involuntary_ctxsw_per_req", Label: "involuntary context switches per request", Unit: "ctxsw/req", BenchUnit: "ivctxsw/op", Value: server(func(s *ServerCost) float64 { return s.InvoluntaryCtxswPerRequest })}
	// CPUPerReq is the server's user+system CPU per request, in µs
	// (cpu-ns/op in the benchmark format).
	CPUPerReq = Metric{Name: "cpu_us_per_req", Label: "server CPU per request", Unit: "µs/req", BenchUnit: "cpu-ns/op", BenchScale: 1e3, Value: server(func(s *ServerCost) float64 { return s.CPUNsPerRequest / 1e3 })}
	// UserCPUPerReq is the server's user CPU per request, in µs: the code
	// the server runs, without the kernel's share (system calls, wake-ups),
	// which varies with how the machine schedules.
	UserCPUPerReq  = Metric{Name: "user_cpu_us_per_req", Label: "server user CPU per request", Unit: "µs/req", BenchUnit: "user-cpu-ns/op", BenchScale: 1e3, Value: server(func(s *ServerCost) float64 { return s.UserNsPerRequest / 1e3 })}
	AllocsPerReq   = Metric{Name: "allocs_per_req", Label: "allocations per request", Unit: "allocs/req", BenchUnit: "allocs/op", Value: goHeap(func(s *ServerCost) float64 { return s.AllocsPerRequest })}
	BytesPerReq    = Metric{Name: "alloc_bytes_per_req", Label: "allocated bytes per request", Unit: "B/req", BenchUnit: "B/op", Value: goHeap(func(s *ServerCost) float64 { return s.BytesPerRequest })}
	RunQueuePerReq = Metric{Name: "runqueue_ns_per_req", Label: "run-queue wait per request", Unit: "ns/req", BenchUnit: "runq-ns/op",
		Value: func(p *Point) (float64, bool) {
			if p.Status != StatusOK || p.Server.Requests == 0 || !p.Server.SchedStat {
				return 0, false
			}
			return p.Server.RunQueueNsPerRequest, true
		}}
	// OtherCPUPerReq and OtherSlicesPerReq are the CPU and the switches
	// in per request of the server's threads outside its per-thread
	// counters (ServerCost.Other: the Go runtime's, nginx's master):
	// the nginx section's columns, not CSV columns.
	OtherCPUPerReq    = Metric{Name: "other_cpu_us_per_req", Label: "other threads' CPU per request", Unit: "µs/req", Value: other(func(o *OtherThreads) float64 { return o.CPUNsPerRequest / 1e3 })}
	OtherSlicesPerReq = Metric{Name: "other_slices_per_req", Label: "other threads' switches per request", Unit: "/req", Value: other(func(o *OtherThreads) float64 { return o.SlicesPerRequest })}
	RSS               = Metric{Name: "rss_bytes", Label: "server RSS", Unit: "B", BenchUnit: "rss-B",
		Value: func(p *Point) (float64, bool) {
			if p.Status != StatusOK || p.Server.RSSBytes <= 0 {
				return 0, false
			}
			return float64(p.Server.RSSBytes), true
		}}
)

// The thread balance of a point (ServerCost.Balance): the serving
// threads, connections and requests per thread as max ÷ mean, and the
// busiest thread's share of the requests. Absent where the model has no
// per-thread stats, and connections where it reports none per thread.
var (
	BalanceThreads = Metric{Name: "balance_threads", Label: "serving threads", Unit: "threads",
		Value: balance(func(b *ThreadBalance) float64 { return float64(b.Threads) })}
	ConnsMaxMean = Metric{Name: "conns_per_thread_max_mean", Label: "connections per thread, max ÷ mean", Unit: "×",
		Value: balance(func(b *ThreadBalance) float64 { return b.ConnsMaxMean })}
	RequestsMaxMean = Metric{Name: "requests_per_thread_max_mean", Label: "requests per thread, max ÷ mean", Unit: "×",
		Value: balance(func(b *ThreadBalance) float64 { return b.RequestsMaxMean })}
	BusiestShare = Metric{Name: "busiest_thread_share_pct", Label: "busiest thread's share of requests", Unit: "%",
		Value: balance(func(b *ThreadBalance) float64 { return b.BusiestShare })}
)

// The server's OS threads and open descriptors after the window
// (ServerCost.Threads, FDs), for the connections figure. They are not in
// Metrics: points.csv and bench.txt keep their columns.
var (
	ServerThreads = Metric{Name: "server_threads", Label: "server OS threads", Unit: "threads",
		Value: func(p *Point) (float64, bool) {
			if p.Status != StatusOK || p.Server.Threads <= 0 {
				return 0, false
			}
			return float64(p.Server.Threads), true
		}}
	ServerFDs = Metric{Name: "server_fds", Label: "server open descriptors", Unit: "fds",
		Value: func(p *Point) (float64, bool) {
			if p.Status != StatusOK || p.Server.FDs <= 0 {
				return 0, false
			}
			return float64(p.Server.FDs), true
		}}
)

// mechanism returns a per-request count of a mechanisms point, if it
// was counted (pick's false: that count was not) and the server
// completed requests in the window.
func mechanism(pick func(*Mechanisms) (uint64, bool)) func(*Point) (float64, bool) {
	return func(p *Point) (float64, bool) {
		m := p.Server.Mechanisms
		if p.Status != StatusOK || p.Server.Requests == 0 || m == nil {
			return 0, false
		}
		v, ok := pick(m)
		if !ok {
			return 0, false
		}
		return float64(v) / float64(p.Server.Requests), true
	}
}

// The mechanisms point's metrics (Metric.Mechanism), per request.
var (
	// SyscallsPerReq is every system call the server's threads entered.
	SyscallsPerReq = Metric{Name: "syscalls_per_req", Label: "system calls per request", Unit: "syscalls/req", BenchUnit: "syscalls/op", Mechanism: true,
		Value: mechanism(func(m *Mechanisms) (uint64, bool) { return m.Total, true })}
	// FutexWakesPerReq is the futex wake calls (Mechanisms.FutexWakes).
	FutexWakesPerReq = Metric{Name: "futex_wakes_per_req", Label: "futex wake calls per request", Unit: "wakes/req", BenchUnit: "futex-wakes/op", Mechanism: true,
		Value: mechanism(func(m *Mechanisms) (uint64, bool) { return m.FutexWakes, true })}
	// WakeIPIsPerReq is the cross-CPU wake-ups: the wake-up interrupts
	// the server's CPUs received (Mechanisms.WakeIPIs).
	WakeIPIsPerReq = Metric{Name: "wake_ipis_per_req", Label: "cross-CPU wake-ups (wake-up IPIs) per request", Unit: "IPIs/req", BenchUnit: "wake-ipis/op", Mechanism: true,
		Value: mechanism(func(m *Mechanisms) (uint64, bool) { return m.WakeIPIs, m.WakeIPIsUnavailable == "" })}
)

// SyscallKindPerReq returns the metric of one kind of system call per
// request (a name of SyscallKindNames), column syscalls_<kind>_per_req.
func SyscallKindPerReq(kind string) Metric {
	return Metric{Name: "syscalls_" + kind + "_per_req", Label: kind + " system calls per request", Unit: "syscalls/req",
		BenchUnit: kind + "-syscalls/op", Mechanism: true,
		Value: mechanism(func(m *Mechanisms) (uint64, bool) {
			v, ok := m.Syscalls[kind]
			return v, ok
		})}
}

// MechanismMetrics returns the mechanisms point's metrics: system calls
// per request in all and by kind, futex wake calls and cross-CPU
// wake-ups per request.
func MechanismMetrics() []Metric {
	ms := []Metric{SyscallsPerReq}
	for _, k := range SyscallKindNames() {
		ms = append(ms, SyscallKindPerReq(k))
	}
	return append(ms, FutexWakesPerReq, WakeIPIsPerReq)
}

// Metrics returns every metric, in the order of the CSV columns.
func Metrics() []Metric {
	return append([]Metric{
		Capacity, SLOCapacity, AchievedRate,
		LatencyP50, LatencyP90, LatencyP99, LatencyP999, LatencyP99Intervals,
		UncorrectedP50, UncorrectedP90, UncorrectedP99, UncorrectedP999,
		SendLagP99,
		CtxswPerReq, VoluntaryCtxswPerReq, InvoluntaryCtxswPerReq,
		CPUPerReq, UserCPUPerReq, AllocsPerReq, BytesPerReq, RunQueuePerReq, RSS,
		BalanceThreads, ConnsMaxMean, RequestsMaxMean, BusiestShare,
	}, MechanismMetrics()...)
}
