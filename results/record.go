package results

import (
	"fmt"
	"strconv"
	"time"

	"concbench/loadgen"
	"concbench/models"
)

// SchemaVersion is the version of the record format written by this code.
// Readers refuse records of another version rather than misread them.
const SchemaVersion = 1

// Kind is what a point measures.
type Kind string

// The kinds of point.
const (
	// KindCapacity is a closed-loop saturation run: its achieved rate is the
	// configuration's capacity, which sets the open-loop points' rates.
	KindCapacity Kind = "capacity"
	// KindOpen is an open-loop run at a fixed offered rate, a fraction of
	// the configuration's capacity (Point.Fraction).
	KindOpen Kind = "open"
	// KindRate is an open-loop run at an absolute offered rate, the same
	// for every configuration and workload (Point.OfferedRatePerS; its
	// Fraction is 0): the connections profile compares costs at one rate
	// that every model sustains, so no capacity is measured for it.
	KindRate Kind = "rate"
	// KindProbe is one open-loop probe of a latency-objective search at
	// the rate the search chose (Point.OfferedRatePerS; Point.Probe is its
	// index in the repetition's search, Fraction the rate ÷ the capacity
	// the search started from).
	KindProbe Kind = "probe"
	// KindSLO is a search's result, not a measurement of its own: the
	// highest probed rate of the repetition that met the workload's
	// latency objective (Point.SLO). It has no load-generator result.
	KindSLO Kind = "slo"
	// KindMechanisms is a short open-loop window at an equal-load rate
	// (Point.OfferedRatePerS, as KindRate), on the same server right after
	// that rate's point, that counts the server's system calls by kind,
	// futex wake calls and wake-up interrupts (ServerCost.Mechanisms).
	// Counting them slows every system call, so this window measures
	// nothing else: its latency and costs are perturbed and belong to no
	// other statistic.
	KindMechanisms Kind = "mechanisms"
)

// Status is a point's outcome.
type Status string

// The outcomes.
const (
	StatusOK          Status = "ok"          // measured (the load generator's verdict is separate: Load.Valid)
	StatusFailed      Status = "failed"      // the server died, or the point could not be run; Failure says why
	StatusUnavailable Status = "unavailable" // the model cannot run on this machine (e.g. no io_uring); Failure says why
)

// ModelConfig identifies one server configuration of an experiment: a model
// and its settings. Name is unique within a run and labels it in figures.
type ModelConfig struct {
	Name    string   `json:"name"`    // e.g. "leaderfollowers/lifo"
	Model   string   `json:"model"`   // concbench serve --model
	Args    []string `json:"args"`    // further serve flags, e.g. ["--promotion", "lifo"]
	Threads int      `json:"threads"` // --threads (0: the model's default; Info has the effective value)
	// Sizing says where its threads and GOMAXPROCS came from: the sizing
	// rule with its numbers ("rule: 1 CPU → 1 threads; GOMAXPROCS 1"),
	// or "fixed by the profile" (harness.Size.Rule).
	Sizing string `json:"sizing,omitempty"`
}

// Workload is what the load generator sends, in its flag syntax.
type Workload struct {
	Protocol string `json:"protocol"`
	Conns    int    `json:"conns"`
	Depth    int    `json:"depth"`
	Arrival  string `json:"arrival"` // open loop: poisson, constant, onoff
	CPU      string `json:"cpu"`     // distribution, e.g. "10us", "exp:10us"
	Block    string `json:"block"`
	Size     string `json:"size"`
	Ops      string `json:"ops"`
	// Idle is the connections held open and idle through the point, to a
	// second server (not the measured one) on the server's CPUs: the
	// control that separates what connections cost the machine from what
	// the measured server does with its own.
	Idle int `json:"idle,omitempty"`
	// ConnRequests is how many requests a connection carries before the
	// load generator closes it and opens another (loadgen's
	// Config.ConnRequests): 1 opens a connection per request ("churn");
	// 0, the default, keeps connections alive.
	ConnRequests int `json:"conn_requests,omitempty"`
}

// FailedBy is what failed a point.
type FailedBy string

// What can fail a point.
const (
	FailedServer FailedBy = "server"
	FailedLoad   FailedBy = "load"
	FailedNoRate FailedBy = "no-rate"
)

// Point is one measured point: one configuration, one kind, one offered
// load, one repetition. It is written as one JSON file, atomically.
type Point struct {
	Schema   int         `json:"schema"`
	Run      string      `json:"run"` // the run's id
	Config   ModelConfig `json:"config"`
	Workload Workload    `json:"workload"`
	// WorkloadName names the workload in a run of several (Config.Name is
	// then "<configuration>/<workload>"); empty in a run of one.
	WorkloadName    string  `json:"workload_name,omitempty"`
	Kind            Kind    `json:"kind"`
	Fraction        float64 `json:"fraction"`           // open: offered rate ÷ capacity; capacity: 1; rate: 0
	OfferedRatePerS float64 `json:"offered_rate_per_s"` // open and rate: the target rate; capacity: 0 (closed loop)
	Repetition      int     `json:"repetition"`         // 0-based
	// Probe is a KindProbe point's index in its repetition's search
	// (0-based); 0 for the other kinds.
	Probe   int    `json:"probe,omitempty"`
	Status  Status `json:"status"`
	Failure string `json:"failure,omitempty"` // why the point failed, with the tail of the server's stderr
	// FailedBy says, for a failed point, what failed: FailedServer (the
	// server died, did not start, or its control channel broke),
	// FailedLoad (the load generator could not run the load: no
	// connection, a priming request unanswered), or FailedNoRate (an open
	// point that had no valid capacity measurement to take its rate from,
	// so nothing was offered).
	FailedBy  FailedBy  `json:"failed_by,omitempty"`
	StartTime time.Time `json:"start_time"`

	// Load is the load generator's result (latency histograms, achieved
	// rate, validity verdict). Nil when the point failed before measuring.
	Load *loadgen.Result `json:"load,omitempty"`
	// Server is what the server process spent over the measured window.
	Server ServerCost `json:"server"`
	// ServerInfo describes the server process (effective threads,
	// GOMAXPROCS, CPUs, calibration).
	ServerInfo models.Info `json:"server_info"`
	// Theory is the ideal latency of this configuration at this load.
	Theory *Theory `json:"theory,omitempty"`

	// SLO is a KindSLO point's result; nil for the other kinds.
	SLO *SLOResult `json:"slo,omitempty"`

	Provenance Provenance `json:"provenance"`
	Warnings   []string   `json:"warnings,omitempty"`
}

// SLOResult is one repetition's capacity at a latency objective: the
// highest probed open-loop rate whose percentile stayed within the bound
// with a valid load-generator verdict.
type SLOResult struct {
	Percentile float64 `json:"percentile"` // e.g. 99
	BoundNs    int64   `json:"bound_ns"`   // the percentile's bound
	// RatePerS is the highest passing probe's rate (req/s); 0 if no probe
	// passed (Reason says why).
	RatePerS float64 `json:"rate_per_s"`
	// LoPerS and HiPerS bracket the true capacity at the objective: the
	// highest passing rate (0 if none) and the lowest failing one (the
	// search's upper bracket, the closed-loop capacity, if none failed).
	LoPerS float64 `json:"lo_per_s"`
	HiPerS float64 `json:"hi_per_s"`
	// CapacityPerS is the closed-loop capacity the search was bounded by
	// (the median of the valid capacity measurements so far); PriorPerS
	// the median of the earlier repetitions' results it started from (0:
	// none, a bisection of [0, capacity]).
	CapacityPerS float64 `json:"capacity_per_s"`
	PriorPerS    float64 `json:"prior_per_s,omitempty"`
	Probes       int     `json:"probes"` // probes run
	// Invalid, if set, says why the result cannot be trusted: a probe's
	// verdict was invalid for the load generator's own reason (its CPU,
	// its timers), which says nothing of the server. Such a result is in
	// no statistic (Group.Aggregate excludes it).
	Invalid string `json:"invalid,omitempty"`
	// Reason explains a result of 0, or an early stop.
	Reason string `json:"reason,omitempty"`
	// Censored says the result is a lower bound: every probe passed, up to
	// an upper bracket that the load generator's ceiling set, not the
	// server (the closed-loop capacity was beyond what the generator
	// measures). Comparisons take it as "≥ RatePerS" (Capped).
	Censored bool `json:"censored,omitempty"`
}

// Bound returns r's bound as a duration.
func (r *SLOResult) Bound() time.Duration { return time.Duration(r.BoundNs) }

// Objective names r's objective: "p99 ≤ 1ms".
func (r *SLOResult) Objective() string { return ObjectiveText(r.Percentile, r.Bound()) }

// ObjectiveText names a latency objective: "p99 ≤ 1ms".
func ObjectiveText(percentile float64, bound time.Duration) string {
	return fmt.Sprintf("p%s ≤ %v", strconv.FormatFloat(percentile, 'f', -1, 64), bound)
}

// ServerCost is the server process's cost over a point's measured window,
// from control-channel snapshots taken at the window's edges (all threads,
// exited ones included, for rusage). Per-request values divide by Requests.
type ServerCost struct {
	Requests uint64 `json:"requests"` // requests the server completed in the window
	WindowNs int64  `json:"window_ns"`

	VoluntaryCtxswPerRequest   float64 `json:"voluntary_ctxsw_per_request"`
	InvoluntaryCtxswPerRequest float64 `json:"involuntary_ctxsw_per_request"`
	CtxswPerRequest            float64 `json:"ctxsw_per_request"` // the sum of the two
	UserNsPerRequest           float64 `json:"user_ns_per_request"`
	SystemNsPerRequest         float64 `json:"system_ns_per_request"`
	CPUNsPerRequest            float64 `json:"cpu_ns_per_request"` // user + system
	AllocsPerRequest           float64 `json:"allocs_per_request"` // runtime/metrics delta ÷ requests
	BytesPerRequest            float64 `json:"alloc_bytes_per_request"`
	RSSBytes                   int64   `json:"rss_bytes"`  // at the window's end
	GoThreads                  int64   `json:"go_threads"` // at the window's end

	// Threads and FDs are the server process's OS threads (all of them,
	// the runtime's included: /proc/<pid>/status) and open file
	// descriptors (/proc/<pid>/fd), read by the harness just after the
	// window's end, with the connections still open: listing thousands of
	// descriptors is not cheap, so it is never done inside the window.
	// 0 when they could not be read (ProcUnavailable says why).
	Threads         int64  `json:"threads,omitempty"`
	FDs             int64  `json:"fds,omitempty"`
	ProcUnavailable string `json:"proc_unavailable,omitempty"`

	// RunQueueNsPerRequest is the time the server's threads waited
	// runnable for a CPU (schedstat), summed over the threads alive at both
	// edges; SchedStat reports whether it was read: the kernel may not
	// expose it, and the harness does not read it for a server with more
	// threads than it can read in time (RunQueueSkipped says so).
	RunQueueNsPerRequest float64 `json:"runqueue_ns_per_request"`
	SchedStat            bool    `json:"schedstat"`
	RunQueueSkipped      string  `json:"runqueue_skipped,omitempty"`

	// StealNs is the time the hypervisor took from the server's CPUs
	// during the window (their steal time in /proc/stat, in ticks of
	// 10 ms), StealFraction its share of the window over those CPUs;
	// StealUnavailable says why they are not known. A point whose verdict
	// is invalid for what the server did is the host's, not the server's,
	// when StealFraction passes MaxServerSteal (Point.Fault).
	StealNs          int64   `json:"steal_ns,omitempty"`
	StealFraction    float64 `json:"steal_fraction,omitempty"`
	StealUnavailable string  `json:"steal_unavailable,omitempty"`

	// Other is where the time of the server's threads that are not its
	// model's went (schedstat, the threads alive at both edges): those
	// not among PerThread's ids — the Go runtime's (its monitor, idle
	// threads, the collector), nginx's master process, asio's main
	// thread — and, in models whose per-thread counters are not every
	// thread's (thread per connection, the front end: their connection
	// threads; Active Object: its scheduler threads; netpoll: none are
	// named), those threads too. Nil when the schedstat was not read or
	// the server names no thread.
	Other *OtherThreads `json:"other_threads,omitempty"`

	// Perf holds perf software counters (migrations, task clock, context
	// switches) when the kernel allows them; PerfUnavailable says why not.
	Perf            *PerfCounters `json:"perf,omitempty"`
	PerfUnavailable string        `json:"perf_unavailable,omitempty"`

	// Mechanisms are a KindMechanisms point's counts over its window;
	// nil for the other kinds, and for a mechanisms point whose counters
	// the kernel refused, when MechanismsUnavailable says why (never
	// zeros).
	Mechanisms            *Mechanisms `json:"mechanisms,omitempty"`
	MechanismsUnavailable string      `json:"mechanisms_unavailable,omitempty"`

	// Counters and PerThread are the model's own counters, as deltas over
	// the window. A counter that decreased over the window is a gauge
	// (open connections, idle followers): it is left out of Counters and
	// its value is in CountersAtEnd, which holds every counter's value at
	// the window's end.
	Counters      map[string]uint64    `json:"counters,omitempty"`
	CountersAtEnd map[string]uint64    `json:"counters_at_end,omitempty"`
	PerThread     []models.ThreadStats `json:"per_thread,omitempty"`
	Errors        map[string]uint64    `json:"errors,omitempty"`

	// Balance is how evenly the point's connections and requests spread
	// over the serving threads (Balance, from PerThread: requests over the
	// window, connections accepted from before the load connected to the
	// window's end); nil where the model has no per-thread stats.
	Balance *ThreadBalance `json:"balance,omitempty"`

	// Foreign names a server that is not concbench's (nginx, with its
	// version), whose costs the harness read from /proc and the server's
	// own status page instead of a control channel: it has no Go heap,
	// so allocations per request are absent, not 0.
	Foreign string `json:"foreign,omitempty"`
}

// OtherThreads is the scheduler's account, per request, of a server's
// threads outside its per-thread counters (ServerCost.Other).
type OtherThreads struct {
	Threads               int     `json:"threads"`                  // such threads alive at both edges
	CPUNsPerRequest       float64 `json:"cpu_ns_per_request"`       // their time on a CPU
	SlicesPerRequest      float64 `json:"slices_per_request"`       // their times put on a CPU: their switches in
	NamedSlicesPerRequest float64 `json:"named_slices_per_request"` // the named (the model's) threads', beside
}

// PerfCounters are perf software-event counts over the window, summed over
// the server's threads.
type PerfCounters struct {
	ContextSwitches uint64 `json:"context_switches"`
	CPUMigrations   uint64 `json:"cpu_migrations"`
	TaskClockNs     uint64 `json:"task_clock_ns"`
}

// Theory is a queueing model's ideal for a configuration: C servers, the
// calibrated service time, the offered rate. The gap between it and the
// measured latency is the model's overhead.
type Theory struct {
	Model       string  `json:"model"` // "M/M/c"
	C           int     `json:"c"`     // servers: the CPUs the server may use, at most its threads
	ServiceNs   float64 `json:"service_ns"`
	RatePerS    float64 `json:"rate_per_s"`
	Utilization float64 `json:"utilization"`
	Stable      bool    `json:"stable"` // utilization < 1; otherwise the latencies are 0 and meaningless
	MeanNs      float64 `json:"mean_ns"`
	P50Ns       float64 `json:"p50_ns"`
	P99Ns       float64 `json:"p99_ns"`
	P999Ns      float64 `json:"p99_9_ns"`
}

// Provenance is what a result needs to be reproduced and compared.
type Provenance struct {
	// Tracefs says what the harness found or did about tracefs, which
	// the mechanisms points count with: "" when it was mounted, else
	// mounted by the harness, or what to run where it could not.
	Tracefs          string `json:"tracefs,omitempty"`
	Commit           string `json:"commit"` // git HEAD of the tree that was measured ("unknown" outside git)
	Dirty            bool   `json:"dirty"`  // uncommitted changes were present
	GoVersion        string `json:"go_version"`
	OS               string `json:"os"`
	Arch             string `json:"arch"`
	Kernel           string `json:"kernel"`    // uname -r
	CPUModel         string `json:"cpu_model"` // /proc/cpuinfo "model name"
	NumCPU           int    `json:"num_cpu"`
	Hostname         string `json:"hostname"`
	ServerCPUs       string `json:"server_cpus"` // affinity of the server process
	LoadCPUs         string `json:"load_cpus"`   // affinity of the load generator
	ServerGOMAXPROCS int    `json:"server_gomaxprocs"`
	LoadGOMAXPROCS   int    `json:"load_gomaxprocs"`
	// ServerCPUQuota says how the measured servers' CPU time was limited
	// (harness Experiment.ServerCPUQuota): the share of one CPU and the
	// cgroup that enforced it; empty for no quota.
	ServerCPUQuota string `json:"server_cpu_quota,omitempty"`
	// LoadWorkers are the load generator's workers, and LoadWorkerCPUs
	// the CPUs they are pinned to, one each (empty: unpinned).
	LoadWorkers    int    `json:"load_workers,omitempty"`
	LoadWorkerCPUs string `json:"load_worker_cpus,omitempty"`
	// NsPerIter is the CPU-work calibration the harness gave every server
	// of the run (serve --ns-per-iter), ns per iteration; 0 if each
	// server measured its own (each point's ServerInfo has the value used).
	NsPerIter float64 `json:"ns_per_iter,omitempty"`
	// KernelThreads are the kernel threads known to disturb measurements
	// that the run found, and what it did about each (harness: "Kernel
	// threads that stall a CPU").
	KernelThreads []KernelThread `json:"kernel_threads,omitempty"`
	Time          time.Time      `json:"time"`
}

// KernelThread is a kernel thread that runs for milliseconds at a fixed
// period on whichever CPU it wakes on, and what the run did about it.
type KernelThread struct {
	Name string `json:"name"` // its comm, e.g. "kdamond.0"
	PID  int    `json:"pid"`
	Why  string `json:"why"` // what it does that stalls a CPU
	// From and To are its scheduling policy before the run and during
	// it ("SCHED_OTHER", "SCHED_IDLE"); To is empty when the run could
	// not change it, and Err says why.
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	Err  string `json:"error,omitempty"`
}
