// Package sysstat reads the process-level costs the harness charges to a
// server: CPU time and context switches over all threads, run-queue wait,
// resident memory, and the Go heap's allocation counters.
//
// Where the numbers come from, and their traps (measured on this VM, see
// ../shared/notes/go-on-linux-facts.md, sections 2 and 3):
//
//   - getrusage(RUSAGE_SELF) sums every thread of the process, including
//     threads that have exited. /proc/<pid>/status alone counts only the
//     main thread, which is why it is never used for the process.
//   - /proc/self/task/*/status and /proc/self/task/*/schedstat are read per
//     live thread and summed: they cross-check rusage and give the
//     run-queue wait (time runnable but not running), which rusage lacks.
//     Threads that exited are missing from these sums.
//   - runtime/metrics /gc/heap/allocs:objects and :bytes count whole spans
//     at mcache refill or flush, so a delta over one request is
//     meaningless; over thousands of requests the error is one span per
//     size class per P. Only deltas over many requests may be reported.
//
// Every reader returns a snapshot; subtract two snapshots for a delta.
package sysstat
