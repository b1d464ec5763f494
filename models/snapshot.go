package models

import (
	"runtime/metrics"
	"time"

	"concbench/internal/sysstat"
)

// Snapshot is what a server process reports on its control channel: the
// model's Stats plus the process-wide costs the harness divides by the
// request count. Take one before and one after a measurement and subtract:
// every field but the gauges (RSSBytes, GoThreads, Tasks.Threads) is
// cumulative since the process started.
type Snapshot struct {
	TimeUnixNs int64          `json:"time_unix_ns"`
	Rusage     sysstat.Rusage `json:"rusage"`          // all threads, exited ones included
	Alloc      sysstat.Alloc  `json:"alloc"`           // Go heap allocations
	RSSBytes   int64          `json:"rss_bytes"`       // resident set size now
	GoThreads  int64          `json:"go_threads"`      // OS threads the Go runtime has now
	Tasks      *sysstat.Tasks `json:"tasks,omitempty"` // per-thread sums, when asked for (costly)
	Stats      Stats          `json:"stats"`
	Errors     []string       `json:"errors,omitempty"` // what could not be read, and why
}

// TakeSnapshot reads the process's counters and srv's Stats. With tasks it
// also sums /proc/self/task/*, which costs CPU time per thread.
func TakeSnapshot(srv Server, tasks bool) Snapshot {
	s := Snapshot{TimeUnixNs: time.Now().UnixNano()}
	var err error
	if s.Rusage, err = sysstat.Self(); err != nil {
		s.Errors = append(s.Errors, "rusage: "+err.Error())
	}
	s.Alloc = sysstat.ReadAlloc()
	if s.RSSBytes, err = sysstat.RSS(); err != nil {
		s.Errors = append(s.Errors, "rss: "+err.Error())
	}
	m := []metrics.Sample{{Name: "/sched/threads/total:threads"}}
	metrics.Read(m)
	if m[0].Value.Kind() == metrics.KindUint64 {
		s.GoThreads = int64(m[0].Value.Uint64())
	}
	if tasks {
		t, err := sysstat.ReadTasks(0)
		if err != nil {
			s.Errors = append(s.Errors, "tasks: "+err.Error())
		} else {
			s.Tasks = &t
		}
	}
	s.Stats = srv.Stats()
	return s
}

// Info describes a server process once: what runs and under which settings.
type Info struct {
	Model            string  `json:"model"`
	Variant          string  `json:"variant,omitempty"`
	Protocol         string  `json:"protocol"`
	Addr             string  `json:"addr"`
	Threads          int     `json:"threads"`
	GOMAXPROCS       int     `json:"gomaxprocs"`
	NumCPU           int     `json:"num_cpu"`
	CPUs             string  `json:"cpus"` // affinity, cpulist syntax
	PID              int     `json:"pid"`
	GoVersion        string  `json:"go_version"`
	NsPerIter        float64 `json:"ns_per_iter"`
	CalibrationMin   float64 `json:"calibration_min_ns_per_iter"`
	CalibrationMax   float64 `json:"calibration_max_ns_per_iter"`
	MaxPendingOutput int     `json:"max_pending_output_bytes"`
	HeaderTimeoutNs  int64   `json:"header_timeout_ns"`   // 0: disabled
	MaxConns         int     `json:"max_conns,omitempty"` // Config.MaxConns; 0: no cap
	MaxPayload       int     `json:"max_payload_bytes"`
	Accounts         int     `json:"accounts"`
	InitialBalance   int64   `json:"initial_balance"`
	// MaxFDs is the server process's descriptor limit (its RLIMIT_NOFILE
	// soft limit, raised to the hard limit at start where the system
	// allows): about the most connections it can hold. 0: unknown.
	MaxFDs uint64 `json:"max_fds,omitempty"`
}
