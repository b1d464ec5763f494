// Package sysstat reads the process-level costs the harness charges to a
// server: CPU time and context switches over all threads, run-queue wait,
// resident memory, and the Go heap's allocation counters. It also reads
// them per thread: the calling thread's CPU time, context switches and
// run-queue wait (Thread, ThreadRunQueueNs: a load generator worker's own
// costs), and each live thread's scheduler counters by thread id (time on
// a CPU, run-queue wait, switches in: SchedByThread, over TaskIDs, what
// the harness differences across a measured window).
//
// Where the numbers come from, and their traps (measured on a 2-vCPU VM):
//
//   - getrusage(RUSAGE_SELF) sums every thread of the process, including
//     threads that have exited. /proc/<pid>/status alone counts only the
//     main thread, which is why it is never used for the process.
//   - /proc/self/task/*/status and /proc/self/task/*/schedstat are read per
//     live thread and summed (ReadTasks): they cross-check rusage and give
//     the run-queue wait (time runnable but not running), which rusage
//     lacks. Threads that exited are missing from these sums, so a
//     difference of two sums is wrong when a thread exits in between;
//     SchedByThread keeps the threads apart, so that two readings can
//     be matched by thread id instead.
//   - runtime/metrics /gc/heap/allocs:objects and :bytes count whole spans
//     at mcache refill or flush, so a delta over one request is
//     meaningless; over thousands of requests the error is one span per
//     size class per P. Only deltas over many requests may be reported.
//
// Every reader of counters returns a snapshot; subtract two snapshots for
// a delta.
package sysstat
