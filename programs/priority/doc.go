// Package priority measures whether a server's priority support protects
// high-priority requests: a fixed-rate high-priority stream's latency
// under a growing low-priority flood, per server configuration, as a
// table and a figure ("concbench help priority", docs/usage.md).
//
// Both streams are generated in this process, by two load generators run
// at once (loadgen.Run), sleep-polling on the load CPUs so that they share
// them, as the two "concbench load" processes the command used to start
// did. The high stream's generator gets its nice value (Config.HighNice)
// on its own threads: each of its workers, a locked thread, is given it
// with setpriority on its thread id (loadgen.Config.Nice), where nice(1)
// once gave it to the whole child process. What a generator reports of
// the process as a whole (its CPU time, allocations, GC) covers both.
package priority
