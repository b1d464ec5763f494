// Package ktrace counts what the kernel does for a server process: perf
// software counters on its threads (context switches, CPU migrations,
// task clock: PerfSet) and, for the harness's mechanisms point, the
// system-call tracepoints by kind, the futex wake calls and the wake-up
// IPIs sent to the server's CPUs (MechSet). Counters are opened before a
// measured window and read at its two edges, so that the edges cost a
// read per counter; a count that cannot be opened comes back as nil and
// the reason, which the result records (never a silent zero).
//
// The counters need perf_event_open (root, or a low
// kernel.perf_event_paranoid) and, for the tracepoints, tracefs, which
// MountTracefs mounts where it is missing. What the counts mean and when
// the harness takes them: package harness, "The mechanisms point".
package ktrace
