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
// their latency, and (closed loop) sending the next requests; between two
// events it sends whatever fell due meanwhile. A worker does not allocate
// per request in steady state (TestSteadyStateAllocs, BenchmarkRoundTrip).
//
// # Keeping the schedule
//
// How a worker waits is Config.Poll. PollBusy never sleeps: it polls
// epoll without a timeout (a raw system call, which also keeps the Go
// scheduler's sysmon from waking on the generator's CPU thousands of
// times a second), so a send leaves when it is due. It needs a CPU per
// worker, and the harness and "concbench load --cpus" give it one by
// default: on a VM whose idle vCPUs halt, a thread woken by a timer
// arrives late by more than the gaps between sends at high rates, even
// with the thread's timer slack at 1 ns (docs/findings.md).
// PollSleep sleeps in epoll_pwait2 until the next deadline and polls only
// for the last Spin before a send; a Spin of 0 (the default) is measured:
// before the run each worker probes how late its timed waits wake (64
// waits), and during the run it records every timed wait's lateness; the
// margin is 1.5 × the p99 of all of them, re-estimated every 5 ms. Every
// result reports the mode, the probed lateness, the margin in force and
// the lateness during the run (Result.Timing) — and, busy or not, the
// machine's own stalls as a busy-polling worker sees them (idle loop
// iterations far longer than usual: interrupts and the hypervisor) and
// how long each send system call took: on loopback a send runs the
// server's receive path and its wake-up in the sending thread, which is
// the floor of any single sending thread's punctuality on the machine.
//
// Responses are timestamped by the kernel (SO_TIMESTAMPNS on every
// connection: the wall-clock time the kernel received the data, converted
// to the run's monotonic clock with the offset at the start; a step of the
// wall clock during the run is detected and judged), so a worker that was
// busy with other connections, or asleep, does not add its own delay to a
// response's latency; the delay it would have added is reported
// (Timing.ReceiveLag). Without a kernel timestamp a read is stamped when it
// returns, and counted (Timing.UserStamped).
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
// Latency (Result.Latency, "corrected") is measured from the intended send
// time, so that coordinated omission is corrected — with one exception: a
// request that the generator itself sent late while none of its requests
// was in flight counts from its actual send. It found the server idle, so
// its lateness hid no queueing (a request sent on time would have met the
// same idle server), and charging the generator's lateness to the server
// would make the server look slower by the generator's doing. When other
// requests were in flight, the server's queue could have absorbed the
// lateness (had it been sent on time it would have waited anyway), so the
// lateness is charged. Beside it every result has the latency from the
// actual send (Uncorrected), the latency from the intended time for every
// request (FromIntended: wrk2's definition), and the latency that never
// charges the generator's lateness (WithoutOwnLag): what an on-time
// generator would have measured lies between WithoutOwnLag and Latency.
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
// that cannot answer fails the run at once (Run returns an error). A
// priming request is a plain work request with the configured priority
// when that is fixed (0 otherwise), so that a server that maps a connection
// to a priority lane by its first request sees the connection's class.
//
// Every response is verified (Config.Verify): its id against the oldest
// request in flight on its connection (responses come back in request
// order in both protocols; an id that belongs to a later request is an
// order violation), its checksum, and an OpWork body against
// wire.AppendBody, using wire.Verify; a successful ledger answer must be a
// balance (a non-negative decimal). A second response to a request the
// connection has had its answer to (one of its last 16) is a duplicate:
// counted and skipped, so that the answers behind it still meet their
// requests. A failed request is counted by kind (Result.Errors) and never
// enters a latency histogram. A response that does not decode, a reset,
// an unexpected close or a timeout fails the connection's requests in
// flight and the connection is reopened with backoff; a clean close
// (Connection: close, or EOF with nothing in flight, as nginx does after
// keepalive_requests) reopens it at once and resends the requests it had
// not answered, keeping their intended times. So does a server's refusal
// of a reopened connection at its limit (id 0, status unavailable, before
// any answer: it read none of the requests), after a backoff.
//
// # The ledger's money
//
// Every deposit and withdrawal is counted by its outcome (Result.Ledger):
// acknowledged, refused by the ledger (which changes nothing), or
// unknown (never answered, or answered by a response that failed
// verification or by a front end's 503 or 500). While none is unknown,
// the ledger's money after a run is exactly its money before plus the
// acknowledged deposits minus the acknowledged withdrawals ("concbench
// soak" checks it). Given that money before the run (Config.LedgerMoney),
// every total answered during it is checked too: the server took it after
// every deposit and withdrawal acknowledged before the total was sent and
// before any not yet sent when its answer was read, which bounds it on
// both sides (checkTotal); a total outside is verify_total. Withdrawals
// may wait for funds (Config.WithdrawWait: the ledger's guarded method).
//
// With Config.KillEvery the generator kills a connection now and then, as
// a client that vanishes mid-pipeline: it chooses one at random, stops
// sending on it, closes it with a reset as soon as it has no deposit,
// withdrawal or transfer in flight (so that no money operation is cut off
// and every outcome stays known), and reopens it at once. The requests it
// had in flight are abandoned (Counts.Abandoned), neither answered nor
// failed; those not yet written go to another connection.
//
// With Config.ConnRequests a connection carries that many requests (a
// priming request not counted) and, after the last one's response, is
// closed with a FIN, as a client without keep-alive closes, and reopened
// at once (Counts.Recycled); at 1 the server accepts a connection per
// request ("churn"). A request that falls due while no connection is open
// and idle waits for one (held), so its latency from its intended time
// includes the connect. On loopback the client's TIME_WAIT sockets are
// reused (net.ipv4.tcp_tw_reuse, on for loopback by default).
//
// Each worker records into its own HDR histograms (range HistLowest..
// HistHighest, HistDigits significant digits, recorded in the Result);
// values beyond the range are clamped and counted, never dropped; Run
// merges the workers' histograms, and Result carries each merged histogram
// encoded, so that repetitions can be merged too. With HlogPath, the
// corrected and uncorrected latency are also written per HlogInterval as an
// HdrHistogram log (see hlog).
// With PriorityClasses, each worker also records the corrected latency in
// one histogram per priority class (each request's priority travels in its
// in-flight entry; a lookup table maps it to its class, so nothing is
// allocated), merged into Result.Classes.
//
// With Config.Trace the workers also keep, in arrays preallocated before
// the run, one record per measured request answered ok: its id and its
// intended, actual send and receive times on the host's CLOCK_MONOTONIC
// (Result.Trace), which concbench validate joins by id with the server's
// own trace (concbench serve --trace) to decompose each response time.
//
// # Self-checks and the verdict
//
// Result.Valid is false, with Reasons and, for each, a short code in
// Result.Checks (the first is the main one), when:
//   - generator-lag: the generator's own lateness may account for more
//     than Limits.MaxLagShare (default half) of the corrected p50, p90 or
//     p99 latency, i.e. Latency and WithoutOwnLag differ by more than that
//     share at one of them: the number would say more about the generator
//     than about the server. The same test on p99.9 and p99.99 — which in
//     a short window rest on a few requests, and one stall of the
//     generator's CPU can move — marks that percentile untrusted
//     (LagShare.Exceeded, Result.Trusted; reports leave it out of their
//     aggregates) without failing the run. A percentile with fewer than 5
//     responses beyond it is not judged. Above a tenth the result warns.
//   - over-capacity (Result.OverCapacity): the server fell behind the
//     offered load: sampled at the eleven edges of the window's ten
//     slices, the requests in flight (the server's backlog as the
//     generator sees it) grew significantly (Mann–Kendall, one sided
//     p < 0.001) by more than 1% of the window's requests, or at the
//     window's end the next send was more than 1% of the window behind its
//     schedule for want of a connection with room. The slices' mean
//     latency is reported, and its growth only warned about: a few stalls
//     late in a window can multiply a mean while the backlog stays flat;
//   - rate: fewer than 99% of the requests the schedule put in the window
//     (its own count: a Poisson count varies by about 1/√n around the
//     rate) were sent and answered inside the window (AchievedRatePerS);
//     responses that arrive after the window, a falling-behind server's
//     backlog, do not count;
//   - generator-busy: the workers were busy (not polling or sleeping) over
//     Limits.MaxBusy (90%) of their time: the generator queued requests
//     itself — at a capacity point, it may have been the bottleneck;
//   - generator-cpu: the workers waited for their CPU over
//     Limits.MaxRunQueue (a tenth) of their time (schedstat: another
//     process competes for the CPU; the generator's own runtime threads
//     take a few percent at most: docs/findings.md), or the
//     hypervisor took over Limits.MaxSteal (5%) of the generator's CPUs
//     (steal time from /proc/stat; this kind of VM reports none, which is
//     why the machine's stalls are measured above);
//   - send-process: the requests as sent are not the arrival process
//     asked for, as Lancet checks it: the gaps between consecutive sends
//     (8 blocks of 256 consecutive arrivals spread over the window, held
//     and resent ones breaking the runs), in units of their mean, against
//     the exponential distribution (Kolmogorov–Smirnov) and for lag-1
//     rank correlation (Spearman), at Limits.SendProcessAlpha (0.001)
//     each and only if the distortion is material too (a distance or a
//     correlation above 0.1) and the same statistics of the same arrivals'
//     intended times pass (the schedule itself is the control). Gaps
//     shorter than one send system call count as that long on both sides.
//     It is judged only while the generator had slack (busy at most 10%):
//     a sender busy a share b of its time holds back about b of the sends
//     that fall due, which then leave together, so its gaps cannot be
//     exponential at the scale of its own work, however careful; its
//     lateness is judged through the percentiles instead. Smaller or
//     unjudged distortions are warnings;
//   - unsent: scheduled requests were never sent (held until the end):
//     their latency, the worst of the run, is unknown;
//   - errors: any request failed, other than the ledger's normal outcomes
//     (insufficient funds, a guarded withdrawal's timeout: counted and
//     reported as warnings);
//   - warm-up: a request failed during warm-up, or the warm-up is shorter
//     than MinWarmup (100 ms);
//   - out-of-range: a value fell outside a histogram's range;
//   - clock: the wall clock was stepped during the run by more than
//     MaxLagShare of the p50 (the kernel's receive timestamps are
//     wall-clock times);
//   - no-responses, aborted: no response was measured, the run was
//     interrupted, or a worker had no connection for Timeout (the server
//     went away) and stopped early.
//
// Warnings report held requests, machine stalls over 5% of the window,
// reads without a kernel timestamp, GC pauses over 1 ms, clamped draws,
// percentiles too thin to judge, and relaxed limits (Limits with a check
// turned off, as tests on a busy machine do: "relaxed" is then in every
// result). The limits were checked against 300-point default bench runs
// and 96-point gate runs on a 2-vCPU VM (the numbers above); the closing
// notes and README give the resulting valid fractions.
//
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
