// Package queueing holds the suite's queueing-theory checks. Validate
// checks the whole measurement chain (generator, loopback, kernel,
// server) against the queue on the effective service time, from measured
// inputs (harness.Validate); Theory compares c servers sharing one queue
// (M/G/c) with c partitioned ones (c × M/G/1) by simulation beside the
// closed forms (CompareQueues). Their methods are in "concbench help validate" and
// "concbench help theory", docs/usage.md and the results package's doc
// (the queueing models).
package queueing
