// Package loadgen is the suite's load generator: open loop (the default)
// with coordinated-omission-corrected latency, or closed loop, labelled; HDR
// histograms merged across workers, never averaged; every response
// verified; and self-checks that mark a run invalid when the generator, not
// the server, is what it measured. The harness calls Run in-process;
// "concbench load" is its command-line front end.
//
// # Participants
//
//   - Config and Run: what to run, and the run. Result: what came of it.
//   - arrivals: one worker's share of the global arrival process, generated
//     lazily (Poisson, constant, or Poisson in on/off bursts).
//   - pacer: assigns a worker's batches to its connections round-robin,
//     skipping connections at their in-flight bound.
//   - worker: one event-loop thread (a goroutine locked to its OS thread,
//     blocking in epoll_pwait2 on raw non-blocking sockets that Go's
//     netpoller never sees) owning a share of the connections, its
//     arrivals, its histograms and counters. Workers share nothing while
//     they run; Run merges them at the end.
//   - conn: a connection's buffers and its FIFO of requests in flight
//     (ring), against which responses are matched in order.
//   - mixer: draws each request's operation, CPU work, blocking work,
//     response size and priority from the configured distributions.
//   - recorder: an HDR histogram that clamps out-of-range values and
//     counts them; intervals and mergeIntervals: the per-interval histograms of the
//     .hlog, merged across workers by a collector goroutine.
//
// # The worker's loop
//
// Each iteration: read the clock; do the periodic work if due (start of the
// measurement, end of the window, interval rotation, reconnects, request
// timeouts, every 5 ms at most); send every batch whose intended time has
// come (open loop) to the next connection with room; write every
// connection with new output; then wait in epoll until the next deadline
// and handle the events — reading responses, checking them, recording
// their latency, and (closed loop) sending the next requests. Within Spin
// of a scheduled send the worker polls epoll instead of sleeping, because a
// thread woken by a timer on a VM whose idle vCPU halts arrives tens of µs
// late (../shared/notes/go-on-linux-facts.md); Config.Spin sets the window
// (negative: never spin). A worker does not allocate per request in steady
// state (TestSteadyStateAllocs, BenchmarkRoundTrip).
//
// # Open loop
//
// Requests are issued on a schedule independent of the responses. The
// global rate is split exactly (see arrivals): with one worker the
// schedule is literally the global process; across workers it is
// interleaved (constant) or superposed (Poisson). Each scheduled arrival is
// a batch of Depth requests (Depth 1: no pipelining) with one intended
// time; batches go round-robin to the worker's connections, so a rate
// below the connection count gives each connection every C-th arrival — no
// per-connection rate rounds to zero, nothing locks up, nothing bursts.
//
// Latency is measured from the intended send time (Result.Latency,
// "corrected") and, beside it, from the actual send (Result.Uncorrected).
// Requests on a connection may be pipelined up to MaxInFlight; a batch
// that finds every connection at the bound is held — not skipped — and
// sent as soon as a response frees a slot, marked held and counted
// (Counts.Held, HeldLag), its corrected latency still running from its
// intended time. Holding keeps the server's slowness in the corrected
// latency, where skipping would hide it again; and the schedule behind a
// held batch is a position in a lazily generated sequence, so a server that
// falls behind costs no memory (vegeta's unbounded workers are the failure
// avoided). Requests still held when the window ends are counted as unsent.
//
// # Closed loop
//
// Each connection keeps Outstanding requests in flight, sending a batch of
// Depth whenever Depth have completed. There is no schedule: the intended
// time is the actual send, so the corrected and uncorrected latencies
// coincide, and every output says "closed-loop".
//
// # Measurement
//
// Warm-up (Config.Warmup) runs the load unmeasured: only requests intended
// (open loop) or sent (closed loop) at or after its end are measured, and
// the histograms, rates, CPU and allocation counts start there. Before the
// schedule starts, every connection is primed with one request, so that
// none carries its first request inside the window, and so that a server
// that cannot answer fails the run at once (Run returns an error).
//
// Every response is verified (Config.Verify): its id against the oldest
// request in flight on its connection (responses come back in request
// order in both protocols; an id that belongs to a later request is an
// order violation), its checksum, and an OpWork body against
// wire.AppendBody, using wire.Verify. A failed request is counted by kind
// (Result.Errors) and never enters a latency histogram. A response that
// does not decode, a reset, an unexpected close or a timeout fails the
// connection's requests in flight and the connection is reopened with
// backoff; a clean close (Connection: close, or EOF with nothing in flight,
// as nginx does after keepalive_requests) reopens it at once and resends
// the requests it had not answered, keeping their intended times.
//
// Each worker records into its own HDR histograms (range HistLowest..
// HistHighest, HistDigits significant digits, recorded in the Result);
// values beyond the range are clamped and counted, never dropped; Run
// merges the workers' histograms, and Result carries each merged histogram
// encoded, so that repetitions can be merged too. With HlogPath, the
// corrected and uncorrected latency are also written per HlogInterval as an
// HdrHistogram log (see hlog).
//
// # Self-checks and the verdict
//
// Result.Valid is false, with Reasons, when:
//   - answered requests fall below 99% of the requests the schedule put in
//     the window (open loop; the schedule's own count, not Rate × Duration,
//     because a Poisson count varies by about 1/√n around its mean);
//   - the send lag's p99 exceeds MaxSendLag (default DefaultMaxSendLag,
//     100 µs, justified there);
//   - any request failed, other than the ledger's normal outcomes
//     (insufficient funds, a guarded withdrawal's timeout), which are
//     counted and reported as warnings;
//   - any request failed during warm-up;
//   - the warm-up is shorter than MinWarmup (100 ms);
//   - any value fell outside a histogram's range;
//   - no response was measured at all, the run was interrupted, or a
//     worker had no connection for Timeout (the server went away) and
//     stopped early.
//
// Warnings report held and unsent requests, a generator busy over 90% of
// its time (near saturation), worker threads that waited for a CPU over 1%
// of the window (another process shares the generator's CPU: its send lag
// is then the machine's doing), GC pauses over 1 ms, and clamped draws.
// The generator measures its own CPU and context switches (RUSAGE_THREAD
// per worker, RUSAGE_SELF for the process), its run-queue wait
// (/proc/thread-self/schedstat), GC pauses and cycles (runtime.MemStats,
// read only before and after the run: it stops the world), and heap
// allocations per request (runtime/metrics, whole process). An hlog adds
// none in steady state: workers record intervals into histogram pairs made
// before the measurement and recycled, and a collector thread at nice 19
// merges, encodes and writes them with buffers it reuses; a worker
// allocates a pair only when the collector is ivSpares intervals behind
// (2 s' worth, at most 8), and counts it (ivAllocated).
//
// # Protocols and foreign servers
//
// Both wire protocols are spoken through wire.New's codecs, so the
// generator drives the project's models and any HTTP/1.1 server. nginx and
// other foreign servers echo neither X-Request-Id nor X-Checksum and need
// not return the requested body size: use VerifyAuto (checks what the
// response carries), VerifyStatus or VerifyNone for them.
//
// Everything here needs epoll: on other systems Run returns ErrUnsupported.
package loadgen
