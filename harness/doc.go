// Package harness runs experiments: it starts each configuration's server
// as its own process ("concbench serve"), finds its capacity, measures
// open-loop points at fractions of it with the load generator running in
// this process, reads what the server spent over each measured window,
// and writes every point as it is measured (package results). "concbench
// bench" is its command-line front end.
//
// # Participants
//
//   - Experiment: what a run measures — configurations (Config: a model
//     and its serve flags) × workloads × load points (capacity, then
//     Fractions of it, then absolute Rates) × Repetitions, with the windows, the CPU split and
//     the server binary — one for the experiment, or one per
//     configuration (Config.ServerBinary: the CI gate's base and head
//     builds as two configurations, interleaved A B A B within every
//     repetition; each point's provenance names the commit that served
//     it). Validate names every bad value and its range; Profile returns
//     the named ones (ProfileNames; docs/profiles.md says what each
//     measures); Resolve fixes what they leave automatic: the CPU split,
//     the load generator's workers and every configuration's size by the
//     sizing rule (Size; "CPUs, sizing and GOMAXPROCS" below).
//   - Run and Resume: the run. Run writes run.json at once; each point is
//     written atomically (results.WritePoint) as soon as it is measured;
//     run.json is written again at the end (Finished) or when the context
//     is cancelled (Interrupted). Resume reads the experiment back from
//     run.json (ExperimentOf, exported for other readers of a run
//     folder) and measures the points that are not there yet
//     (results.HasPoint).
//   - provenance: the machine and the build measured, in run.json and
//     every point. The commit is the server binary's VCS stamp (read once
//     per binary per run), else "unknown" with a run warning — never the
//     working directory's HEAD, which may be another tree. GitHead is
//     exported for tools that need a tree's commit (the gate).
//   - chain configurations (Config.Backend): a front end (model frontend)
//     measured with its back end, a second "concbench serve" started
//     before it on the same server CPUs (binary protocol) and stopped
//     with it; the point's costs are the front end's. Profile "chain"
//     runs them (ChainConfigs).
//   - server: one "concbench serve" process: started, readiness-checked
//     (its address line, "info" on the control channel, and one verified
//     probe request), queried ("snapshot"), stopped ("quit", then SIGTERM
//     after 5 s, then SIGKILL after 2 s more). Its stderr's last 20 lines
//     are kept for failure reports.
//   - nginxServer: real nginx (Config.Model NginxModel), the reference
//     the nginx-style model is checked against: a generated nginx.conf,
//     its master in the foreground, read through stub_status and /proc
//     instead of a control channel ("Real nginx" below).
//   - asioServer: real boost.asio (Config.Model AsioModel), the reference
//     the sharedqueue model is checked against: bin/asio-server, started
//     and stopped as a server is, read through its own "stats" line and
//     /proc ("Real asio" below). Every driver is a proc (start, reaping,
//     the escalating stop) behind one interface, target, which is all the
//     runner knows of the server it measures.
//   - spawner: the locked OS thread every server is forked from. A
//     server's parent-death signal (SIGKILL) fires when the thread that
//     forked it exits; forking from an ordinary goroutine could pick a
//     thread that a load-generator worker later locks and takes down with
//     it. Servers also run in their own process group, so a Ctrl-C at the
//     terminal reaches the harness, which finishes the current point, and
//     not the server under measurement.
//   - ceiling: the load generator's own ceiling, measured at the start
//     of a run (MeasureCeilings for the thesis's parts), and the mark on
//     every point beyond it ("The load generator's ceiling" below).
//   - window: what is read at the two edges of a point's measured window,
//     and cost, which turns it into a results.ServerCost.
//   - internal/ktrace: the perf software counters on the server's
//     threads and a mechanisms point's tracepoint counters ("The
//     mechanisms point" below).
//
// # A point
//
// Per configuration and repetition the server is started once, on the
// server CPUs, and serves the capacity point, then the open points in
// ascending order of load, the rate points, and, under a workload with a
// latency objective, that repetition's search's probes (see "Capacity at
// a latency objective"); the next configuration gets a fresh process. A
// point whose server died gets a new server for the next point.
//
// The capacity is the achieved rate of a closed loop (every connection
// keeps CapacityOutstanding requests in flight) over the window — Duration,
// or, with CapacityRequests, as long as that many requests take, so that a
// check needing a number of requests in the window (the gate's allocation
// rows) gets them on a slow machine too. Each open
// point's rate is its fraction of the median of the valid capacity
// measurements, in the repetitions measured so far (0..r), of the
// configuration itself — or of the one its Config.RatesFrom names, so that
// two configurations are offered the same absolute rates (the CI gate's
// head is offered the base's) — so a one-off capacity outlier is outvoted
// from the second repetition on. Each point records its offered rate, so
// the report can also compare models at the same absolute load. Without a
// valid capacity the open points of that repetition fail, saying so
// (results.FailedNoRate: nothing was offered).
//
// Rate points (Experiment.Rates, results.KindRate) are offered the same
// absolute rate in every configuration and workload, after the fraction
// points; an experiment without fractions measures no capacity at all
// (the connections profile). A configuration with a connection cap of its
// own (Config.MaxConns: thread per connection's thread cap) is not run
// under a workload with more connections: its points there are
// unavailable, with the model's reason, in the run's Unavailable list
// too, so that figures show the limit rather than an error.
//
// Repetitions are interleaved: repetition 0 of every configuration, then
// repetition 1, and so on, so that drift of the machine hits every
// configuration alike; with Experiment.Counterbalance the configurations'
// order is reversed in every odd repetition (A B, B A, …), so that none is
// measured first, or right after another, more often. The load
// generator's seed depends on the repetition and the point's index, not on
// the configuration: at a given repetition and fraction every
// configuration sees the same arrival process scaled to its rate (common
// random numbers).
//
// # The window and the server's cost
//
// The load generator calls back just before its window starts (20 ms
// before the warm-up ends, so that this work on the generator's CPU does
// not preempt its busy-polling worker inside the window) and when its
// window has drained (loadgen.Config.OnWindow). At the start the harness
// reads
// the server threads' run-queue waits (/proc/<pid>/task/*/schedstat,
// through sysstat.SchedByThread), its perf counters, and a
// control-channel snapshot; at the end the same in mirror order, and
// then, outside the window, the server's OS threads (/proc/<pid>/status)
// and open descriptors (a listing of /proc/<pid>/fd, milliseconds at tens
// of thousands). The run-queue read costs the generator's CPU time per
// thread, so it is skipped for a server with more than 512 threads
// (thread per connection at hundreds of connections), which the point
// records (ServerCost.RunQueueSkipped): at thousands of threads it ends
// far past the 20 ms lead, and the generator's lag would have been
// measured instead of the server (docs/findings.md). The cost is the difference, divided by the
// requests the server itself completed between the snapshots:
//
//   - voluntary and involuntary context switches and CPU (user, system)
//     from getrusage(RUSAGE_SELF) in the server: all threads, exited ones
//     included;
//   - heap allocations and bytes from runtime/metrics, which counts a span
//     at a time: meaningful over thousands of requests only (a point with
//     fewer than 10000 gets a warning);
//   - run-queue wait summed over the threads alive at both edges, read by
//     the harness rather than through "snapshot tasks", which sums over
//     live threads (a thread exiting in the window would falsify the
//     difference) and costs the server CPU time per thread inside the
//     window it measures;
//   - perf software counters (context switches, CPU migrations, task
//     clock), opened before the load starts — one counter per event per
//     existing thread, with inherit, since a counter on the process alone
//     misses threads that Go creates from other threads — and read at the
//     edges, so the edges cost a read per counter. Where the kernel
//     refuses (not root, perf_event_paranoid) the point records why
//     (PerfUnavailable);
//   - RSS and the runtime's thread count at the end, the model's counters
//     and per-thread work as differences (a counter that went down is a
//     gauge: only its end value is kept), and its error counts.
//
// The snapshots cost the server a few µs and allocations of their own
// (marshalling the answer), once per window edge: negligible over a
// window's thousands of requests, but not zero.
//
// One more snapshot is taken before the load generator connects: a
// model that reports the connections each thread accepts
// (models.ThreadStats.Accepted) accepts the point's connections before
// the window, so they count from there. From the per-thread stats the
// point gets its thread balance (results.Balance): connections and
// requests per serving thread as max ÷ mean, and the busiest thread's
// share, absent where the model has no pool.
//
// # Real nginx
//
// A configuration of model NginxModel runs nginx itself (NginxConfigs:
// "nginx/mutex", "nginx/exclusive", "nginx/reuseport", the accept mode in
// the nginx-style model's flag syntax, --accept MODE), where it is
// installed (make nginx: Debian's nginx-light); where it is not, its
// points are unavailable, with that reason, never failed. For each
// server start the harness writes <run>/nginx/<configuration>.conf:
// worker_processes the sizing rule's n (a worker per server CPU, nginx
// doing none of the workload's work; the nginx profile's floor is the
// practised profile's, PractisedFloor), worker_cpu_affinity every worker
// on the server CPUs (and the master pinned there once it runs),
// accept_mutex on for mutex and off otherwise (nginx then registers the
// listening socket with EPOLLEXCLUSIVE, its default), listen … reuseport
// for reuseport, keep-alive for the whole run, no access log, the error
// log beside the file, "location = /work { return 200 NginxBody; }" for
// the HTTP dialect and stub_status on a second port. nginx runs in the
// foreground (daemon off, master_process on) in a process group of its
// own, stopped with SIGQUIT, then SIGTERM, then SIGKILL to the group; if
// the harness dies the kernel sends the master SIGTERM, which ends its
// workers. The load generator checks what nginx's responses carry
// (loadgen.VerifyAuto: the status; nginx echoes no id).
//
// At each edge the harness reads, as a snapshot: requests and accepted
// connections from stub_status (less its own status requests); CPU time
// as schedstat's run time over the master and the workers, split into
// user and system in /proc/<pid>/stat's ratio (what getrusage does for a
// concbench server), context switches from /proc/<pid>/task/*/status,
// resident memory; and per worker a ThreadStats: its responses, the
// write calls of /proc/<pid>/io (a response of this configuration is one
// writev: amend drops them, with a warning, where they do not add up to
// stub_status's count), and at the window's end the connections it holds
// (the established sockets on the listening port in /proc/net/tcp,
// matched by inode to its descriptors). A point of nginx has no
// allocations per request (it has no Go heap: ServerCost.Foreign) and no
// M/M/c ideal.
//
// # Real asio
//
// A configuration of model AsioModel (AsioConfig: "asio", the asio
// profile's, beside sharedqueue: AsioPair) runs bin/asio-server, built by
// make asio from realservers/asio/server.cpp on Debian's libasio-dev
// (standalone asio); the harness looks for it beside its own binary, in
// bin/ of the working directory or one above it, then in PATH, and where
// it is absent the configuration is unavailable, with that reason. It is
// one process: an asio::io_context run by the sizing rule's n threads (a
// thread per server CPU, asio doing none of the workload's work; the
// profile's floor is PractisedFloor), one acceptor re-armed from its
// handler, and per connection async_read_some, the answers to every
// complete request in the buffer in one async_write, async_read_some
// again; /work is answered as nginx answers it (NginxBody, keep-alive),
// malformed input closes the connection. It binds port 0 on the
// measured server's host and prints the address once every thread runs;
// the harness then pins all its threads to the server CPUs and probes
// /work. Its stdin is a control channel: "stats" answers the connections
// accepted and each io_context thread's id and requests, "quit" (or the
// end of stdin) stops it, escalating as for a concbench server. At each
// edge the harness reads those counters (a ThreadStats per thread, role
// "pool", so the balance is of requests alone: asio's threads own no
// connections) and, as for nginx, CPU time from schedstat split in
// /proc/<pid>/stat's ratio, context switches over /proc/<pid>/task and
// resident memory. Like nginx's, its points have no allocations per
// request and no M/M/c ideal, and the generator checks the status only
// (loadgen.VerifyAuto).
//
// # The mechanisms point
//
// The costs above say how much a model spends; the mechanisms point
// (results.KindMechanisms, Experiment.Mechanisms, bench --mechanisms)
// says on what, from the kernel's own counters: per request, the system
// calls the server's threads (nginx's master's and workers') enter by kind (results.SyscallKinds:
// epoll_wait, epoll_ctl, read, write, futex, io_uring_enter, accept, and
// other), their futex wake calls, and the cross-CPU wake-ups.
//
//   - System calls: a perf counter per kind and server thread (with
//     inherit, as the perf counters above) of the tracepoint
//     raw_syscalls:sys_enter, filtered on the kind's system-call numbers
//     (ktrace's table of this architecture's), and one unfiltered for
//     the total; other is the total less the named kinds.
//   - Futex wake calls: syscalls:sys_enter_futex filtered on its op
//     (FUTEX_WAKE, FUTEX_WAKE_OP, FUTEX_WAKE_BITSET, private or not), and
//     futex_wake(2). Calls, not threads woken.
//   - Cross-CPU wake-ups: the reschedule and call-function-single IPIs
//     other CPUs sent the server's CPUs — what waking a thread on another
//     CPU costs, an interrupt (a VM exit on a VM). IPIs are per CPU, not
//     per thread, so they are counted per CPU: where the kernel sends
//     them (ipi:ipi_send_cpu, Linux 6.5 and later, filtered on the target
//     CPU, on every CPU), else where they arrive (x86's irq_vectors, on
//     the server's CPUs); whatever else runs on the server's CPUs is in
//     them. A wake-up on the waker's own CPU, or of a CPU polling in idle,
//     sends none.
//
// Enabling a system-call tracepoint slows every system call of the
// machine, the load generator's included, so the counters would perturb
// the very costs the points compare. They are therefore opened for one
// short window of their own, which measures nothing else: in the first
// Mechanisms repetitions, right after each rate-from-the-slowest point
// (the equal load), on the same server, at the same rate and with the
// same arrivals, after a warm-up of MechanismsWarmup, a window of
// MechanismsDuration (DefaultMechanismsWarmup, DefaultMechanismsDuration:
// the default profile measures one per configuration and workload). The
// counters are opened before its load starts and read at its window's
// edges like the perf counters (the IPIs read last at the start and
// first at the end: reading a counter of a running thread sends its CPU
// an IPI), and closed after it, while the server stops and the next one
// starts: the next point's load waits for them, so no other point runs
// with them. Closing a tracepoint's last counter waits for an RCU grace
// period, which is why the kinds are filters on one tracepoint rather
// than a tracepoint per system call (three tracepoints in all, four with
// irq_vectors). The point's latency and costs are recorded but
// perturbed, and in no statistic but its own counts (bench.txt gives it
// those alone). In a run with a budget the mechanisms points are among
// the planned points: their time comes out of what is left for extra
// rounds, and the extra rounds have none.
//
// Where the kernel refuses (not root: tracefs is readable by root only,
// and perf_event_paranoid) the point records why
// (ServerCost.MechanismsUnavailable), never zeros, and the report says
// "not counted" with the reason. TestPerfCheck, run only when asked
// (CONCBENCH_PERFCHECK=<model>), checks the counts against perf stat -e
// 'syscalls:sys_enter_*' -p PID over the same window.
//
// # The ideal
//
// Every open point stores the M/M/c ideal (results.MMc) for its offered
// rate: c is the number of CPUs the server may run Go code on — its CPU
// affinity, at most its GOMAXPROCS — and at most its thread count
// (Leader/Followers with 4 threads on 1 CPU is c = 1 for CPU-bound work);
// the service time is the workload's mean CPU work, the calibrated
// computation the server runs per request and nothing else, so that the
// gap between the ideal and the measurement is the model's overhead. The
// profiles draw the CPU work exponentially, which makes M/M/c the exact
// ideal; with fixed work it overstates an ideal server's queueing, and the
// point says so. A workload with blocking work has no ideal here (the
// servers are then the threads, not the CPUs) and the point says that
// too.
//
// # Validating the measurement chain
//
// Validate (concbench validate, and one short experiment at the end of
// every bench run) checks the chain that produces every number above
// against queueing results whose answer is known. One server thread
// (Leader/Followers with 1 thread and GOMAXPROCS 1, pinned to one CPU)
// serves open-loop Poisson arrivals from one busy-polling worker on
// another CPU, with exponential (M/M/1) or constant (M/D/1) CPU work; a
// fresh server serves each experiment. The prediction's inputs are
// measured, never assumed: the service-time distribution as the server
// itself timed it, the server's own gap between two services and an idle
// server's set-up (from the decomposition), the return time, the achieved
// arrival rate, and the floor, a run with zero work at a low rate in which
// every request finds the server idle. A closed-loop run (one request in
// flight per connection) measures the service time under closed load too,
// to compare with the open load's. results.AnalyzeChain states the models
// (the queue on the effective service time, judged; the plain M/G/1 by
// Pollaczek–Khinchine plus the floor, and the textbook closed form,
// shown) and the attribution of the gap.
//
// With Threads c > 1 the server runs c threads on c CPUs (GOMAXPROCS c)
// and the experiments run at c times the rates, judged as c servers: one
// shared queue (M/G/c) for Leader/Followers, a queue per thread (c ×
// M/G/1, fed the split the server made) for a partitioned model. The
// models the validation can judge are a table (chainModels) keyed by the
// registry's names, so that a model plugs in by its row; one the build
// lacks is reported as not available. Fewer than c + 1 CPUs is an error
// before anything runs: c servers on fewer CPUs are not c servers, and the
// generator busy-polls a CPU of its own. The trace records each request's
// thread, so that the decomposition's queue and dispatch are the thread's
// that served it.
//
// Why per-request traces on a shared clock. A mean of the server's
// service time and a mean of the latency cannot say where a gap comes
// from; the question of issue 15 ("the chain adds delay, or the service
// time under open load differs?") needs each request's path. The server
// records, per request, its id and the start and end of Service.Do
// (service.Trace, concbench serve --trace N), the generator the
// intended send, the actual send and the kernel's receive timestamp
// (loadgen.Config.Trace); both on CLOCK_MONOTONIC, which all processes on
// a host share (internal/monoclock: Go's own vDSO clock read plus an
// offset measured once, to well under a µs, which the validation
// reports), so joining the two by request id decomposes every response
// time exactly (results.Parts). Both traces are opt-in and preallocated:
// off, the server pays one nil check per request in Service.Do — the one
// hook, shared by every model that serves through Do (all but the Active
// Object, whose servant calls Work; the validation uses Leader/Followers)
// — and the generator one capacity check per response, so neither the
// bench nor the CI gate measures them. The server's trace is read back
// over the control channel after the run (command "trace"); it holds the
// warm-up's requests too, which are earlier services for the window's
// first ones.
// Note: stamping the read and the write inside the models' session code
// as well would split "dispatch" and "return" further, at the cost of
// hooks in four models' hot paths; the validation derives the idle
// server's set-up and the busy server's gap between services from the
// joined timestamps instead (results.Decomposition).
//
// # The workload suite
//
// One workload cannot say where a pattern wins: under CPU work alone a
// pool's threads can only add hand-offs beyond the CPUs, and under
// blocking work a loop that blocks serves nobody. The default profile (SuiteWorkloads)
// therefore runs five, each chosen so that some pattern should win it and
// another lose, at equal absolute load (RatesFromSlowest) beside each
// model's capacity:
//
//   - cpu: exponential CPU work, mean 10 µs — the profiles' workload.
//     Pure computation: the fewest hand-offs should win
//     (netpoll, Proactor, Leader/Followers' leader that processes its
//     own event), the queue hand-off of Half-Sync/Half-Reactive and
//     Active Object should lose.
//   - tiny: mean 1 µs. The service vanishes and each model's own cost
//     per request (system calls, wake-ups, queue operations) decides:
//     the widest margins between models of one family, and the clearest
//     test of CPU and context switches per request.
//   - block: the same CPU work plus a 300 µs blocking back-end call
//     (nanosleep of the serving thread). A thread that blocks stalls
//     every connection it serves, so the sizing rule gives every
//     thread-based model the threads Little's law asks for (a pool, the
//     Proactor's dispatchers, Active Object's schedulers alike), and the
//     comparison is of how each model hides the call with them: a
//     hand-off per request (Half-Sync/Half-Reactive, Active Object)
//     against a leader that blocks with its own request (Leader/
//     Followers), a thread per connection, and netpoll, whose runtime
//     hands the P on while a goroutine is in the system call. The M/M/c
//     ideal does not apply (the point's theory says so).
//   - bimodal: CPU work 5 µs, or 1 ms for 1% of requests (mean 15 µs):
//     heavy-tailed. A run-to-completion loop makes every request behind
//     a long one wait for all of it (head-of-line blocking); the kernel
//     time-slices a pool's threads, so short requests overtake. Pools
//     should win the p99, the event loops their capacity.
//   - ledger: the monitor's ledger (service.Monitor) in equal parts with
//     CPU work: deposits, guarded withdrawals (which wait for funds),
//     transfers and totals over all 1024 accounts behind one lock.
//     Threads that contend for the monitor's lock on one CPU convoy
//     behind a preempted holder; Active Object's servant is touched by
//     its scheduler threads through its activation queue instead, and
//     the single-threaded loops never contend.
//
// The practised profile adds churn (ChurnWorkload): the cpu workload
// with a new connection per request, where accepting is first-order —
// which thread accepts, and whether the connections spread over the
// threads or pile up on one, is what nginx's accept modes, Cherokee's
// listeners' lock and the partitioned server differ in.
//
// Every workload runs one configuration per model family (Families),
// each sized by the sizing rule; the variants (the promotion orders,
// Half-Sync/Half-Reactive pooled) have a profile of their own. The
// report opens with the table of who wins each workload by each metric.
//
// # The thread sweep
//
// The sizing rule fixes each pool at a thread per server CPU (more for
// blocking work); the threads profile makes the count a dimension
// (ThreadsConfigs, Experiment.Sweep): 1, 2, 4, … up to max(8, 2n)
// threads on a server of n CPUs (ThreadCounts) of Leader/Followers
// (lifo), workers of Half-Sync/Half-Reactive and active objects
// (scheduler threads) of Active Object — the thread that each pool adds
// per unit of the count — each with GOMAXPROCS by the one rule below,
// beside the Proactor and netpoll, sized by the rule, as references.
// Two workloads pull in opposite directions:
//
//   - cpu: the profiles' CPU work alone. Threads beyond the server's
//     CPUs cannot run anything in parallel: they can only add hand-offs,
//     wake-ups and context switches, so the capacity should stop growing
//     at n threads, or fall.
//   - block: the same plus a 300 µs blocking call per request. A thread
//     in the call serves nobody, so a pool of k threads serves at most
//     about k ÷ 310 µs requests a second while the CPUs are idle:
//     capacity should grow with k until the CPUs saturate — at the
//     server's whole CPU per request (the 10 µs of work plus the model's
//     system calls and the wake-ups around the call, which every point
//     measures), not at the work alone.
//
// The equal load of each workload is SuiteRateFromSlowest of its slowest
// configuration's capacity, so that p99 and costs compare at a rate
// every configuration sustains. A configuration whose capacity was beyond
// the load generator's ceiling in every repetition counts as the
// ceiling's bound, a lower bound on its capacity (DerivedRates.Bound, and
// a warning in run.json): where every capacity is beyond it — the
// nginx profile on a 2-vCPU machine — the equal load is a fraction of
// what the generator can measure, still below every configuration's
// capacity. The report's thread-sweep figure draws
// capacity and p99 at that load against the thread count, a series per
// pool model and the references as horizontal lines, and its caption
// names each model's best count. What it measured is in
// docs/findings.md.
//
// # Capacity at a latency objective
//
// Closed-loop capacity says how fast a model goes with its latency
// unbounded; a user asks how much load it takes while its p99 stays
// fast enough. Each suite workload therefore has an objective
// (Workload.SLO, SuiteSLOs), a bound on its corrected p99. The bounds are
// a user's statements, stated as constants, not measurements:
//
//   - cpu, tiny and ledger: p99 ≤ 1 ms, a hundred times the default
//     workload's mean work of 10 µs and well above the loopback floor
//     (tens of µs), so that only queueing, not the work or the network,
//     can break it;
//   - block: p99 ≤ 2 ms: every request blocks 300 µs, so the bound
//     leaves about five blocking calls' worth of queueing;
//   - bimodal: p99 ≤ 5 ms: 1% of its requests carry 1 ms of work, so its
//     p99 is at 1 ms or more by construction and a 1 ms bound would fail
//     at any load; 5 ms leaves queueing behind a long request room, and
//     head-of-line blocking (several long requests in a row behind one
//     loop) breaks it.
//
// concbench bench --slo sets one bound for every workload (--slo 0
// removes them). For every configuration, workload with an objective and
// repetition, after the repetition's capacity point and on the same
// server process, a search (sloSearch) offers open-loop probes
// (KindProbe points, each with its own short warm-up and window,
// Experiment.SLOWarmup and SLODuration) at rates it chooses. A probe
// passes when the load generator's verdict is valid (not over capacity,
// the rate achieved, the generator healthy) and the percentile is within
// the bound (the generator's own lateness only adds latency: a probe
// within the bound with it passes; one above it is the generator's only
// when it is within the bound without it). The search's upper bracket is
// the repetition's own closed-loop capacity, measured just before on the
// same server; rate 0 its lower. Nothing of another repetition enters it
// — not its capacity, not its result —, so that the repetitions are
// independent and their spread is the spread between runs (until
// 2026-12 later repetitions started at the median of the earlier ones'
// results, and their spread understated it: docs/findings.md). The first
// probe is at half the capacity; each later one where the percentile is
// expected to reach the bound — interpolated in the logarithm of the
// percentile between the highest passing and the lowest failing probe,
// or, with no failure yet, as a queue whose percentile grows as
// 1/(1 − rate/capacity) would reach it — kept a tenth of the bracket from
// its ends; a search stops early once its bracket is narrower than
// SLOResolution of the capacity. A search whose probes all failed has
// found no rate that meets the objective, only rates that miss it: it
// goes on halving the lowest failing rate, for as many probes again,
// until one passes. Its result (a KindSLO point, results.SLOResult) is
// the rate at which the percentile reaches the bound, interpolated
// between the highest passing and the lowest failing probe (the midpoint
// where the failing probe's percentile does not bracket the bound), with
// the bracket; the highest passing rate when none failed — a lower bound
// (SLOResult.Censored) when the bracket was the generator's ceiling —;
// or 0 with the reason when no probe passed down to SLOResolution of the
// capacity, which the comparisons take as below the lowest failing rate.
// A repetition without a valid capacity point (the generator spoiled it)
// is bounded by the rate its invalid capacity point achieved, and says
// so; one whose capacity is beyond the generator's ceiling, by that
// ceiling. The bound is the workload's objective as the run states it
// (results.Objective): relative to the machine's floor where that takes
// more than a quarter of the published bound. A probe
// invalid for the generator's own reason (its CPU, its timers:
// generator-cpu, generator-lag, …; a server reason such as over-capacity
// or a missed rate is a failure, as results.Point.Fault tells them apart)
// says nothing of the server: it is measured once more at the same rate;
// a second such probe ends the search, and the repetition's result is
// invalid with that reason, excluded from the median and the tests like
// an invalid capacity point. The results' median and confidence interval
// across repetitions are the report's SLO capacity (the who-wins table's
// first column, and the Summary).
//
// # Deciding within a budget
//
// A run with a time budget (Experiment.Budget; the default profile's is
// SuiteBudget) decides the who-wins table in two looks, at
// results.LookAlphas (0.01 and 0.04: results.DecisionPlan): Bonferroni
// over the looks keeps every cell's claim at its level whatever the
// first look led the run to measure next, and the uneven split keeps most
// of it for the look that sees every round. The planned rounds are sized
// from the time a round takes on this machine (enoughRounds): after each
// planned round of capacities and searches from the third on, the run
// measures no more of them when one more, and the equal-load rounds that
// go with them, would leave less than results.ExtraShare of the budget
// (a third) for the extra rounds; run.json records what it planned and
// what it measured. After its planned points it decides every cell on
// them (the first look); then it spends what is left of the budget on
// extra rounds for the cells that look left undecided and whose rounds —
// as many as they are estimated to need (stats.Decision.Need) — fit in
// what is left of it:
// each round measures the cell's contenders — the best and every
// configuration the look could show neither behind it nor equivalent to
// it, and the A/A twin with its original — once more, interleaved among
// themselves in a seeded random order, as a repetition numbered after the
// planned ones (an equal-load point for the equal-load columns, shared by
// a workload's cells; a capacity point and a search for the SLO
// capacity), cheapest cell first (rounds needed × contenders × a point's
// time), a round at a time across the cells, until a round no longer fits
// the budget. A configuration shown behind is not measured again: its
// time goes to the contenders. The report decides those cells again on
// every round (the second look); a cell keeps a first-look decision.
// run.json records the plan and the rounds (Run.Decisions), and the
// report says what they were for.
//
// # CPUs, sizing and GOMAXPROCS
//
// By default the server runs on the first half of this process's CPUs and
// the load generator on the rest (SplitCPUs) — on a 2-CPU machine CPU 0
// and CPU 1, on 16 CPUs 0-7 and 8-15 — both recorded in every point's
// provenance; --server-cpus and --load-cpus choose others. The server's
// share is half, not all but one: the generator's work grows with the
// server's capacity. Resolve fixes what is automatic before the run (and
// for bench --print-experiment): the split, the generator's workers and
// every configuration's size.
//
// The load generator runs in this process, which pins itself to the load
// CPUs. Its workers are placed by loadgen.Placement: a busy-polling worker
// per load CPU but the first, each pinned to its own CPU, at most one per
// connection of the smallest workload; the first load CPU is left to the
// process's other threads (the Go runtime's, the harness's) and the
// kernel's work there, which would otherwise preempt a busy worker for a
// scheduler slice (milliseconds; loadgen.Placement's note). On a 2-CPU
// machine that is one worker on CPU 1, sharing it. GOMAXPROCS is
// loadgen.Procs of the workers. With a CPU per worker the generator
// busy-polls (loadgen.PollBusy): on a VM whose idle vCPUs halt a sleeping
// generator wakes tens of µs late for every send. With a single CPU both
// run unpinned, the generator sleeps between sends, and run.json and
// every point carry a warning that the generator's work is in the
// measurement.
//
// Every model is sized from the server's CPUs n and the workload by one
// rule (Config.Sizing SizeRule; Pool):
//
//	T = ⌈n × (cpu + block) ÷ cpu⌉, at most the requests in flight
//
// the mean CPU and blocking work of the workload's requests: a thread
// per CPU without blocking work (no thread beyond the CPUs can run in
// parallel), and by Little's law with it (n × (cpu + block) ÷ cpu
// requests must be in service to keep n CPUs busy, each holding its
// thread while it blocks). The rule counts the workload's CPU work only:
// the server's own cost per request only lowers the threads needed, so
// it errs towards enough. Every thread-based model gets T alike: a
// Leader/Followers pool of T threads, Half-Sync/Half-Reactive T workers
// beside its one reactor (the pattern's half-reactive layer is one
// thread), the Proactor T dispatchers (a ring each), Active Object T
// active objects (a scheduler thread each, at most activeobject's 256)
// beside n I/O threads, one per CPU, that decode requests and invoke the
// proxy; thread per connection a thread per connection (its thread cap
// twice the connections, so that a connection reopened while its
// predecessor's thread ends is not refused); netpoll
// GOMAXPROCS n, whose runtime adds threads for blocking calls itself.
// Leader/Followers' priority order spreads its threads' nice values
// over 0..15 for any T. A profile may name a floor (Config.MinPool: the
// variants profile's promotion orders get at least the model table's floor of 4 threads,
// since an order chooses among followers) or fixed sizes (the gate, the
// thread sweep's counts, the chain); each point records which
// (results.ModelConfig.Sizing, the rule with its numbers).
//
// GOMAXPROCS is the number of OS threads the model runs by design (pool,
// reactor, acceptor, schedulers, I/O threads or dispatchers) and one
// spare (registry.SpareProcs), and for netpoll the server's CPUs. Without
// the spare, every P is held by a thread blocked in a system call, and
// the runtime's monitor takes the P of each one that blocks over 20 µs
// and is woken by its return: at 5 000 req/s on one CPU, about 2.3 context
// switches per request of the monitor's alone (docs/findings.md, "Lean").
// A server with fewer Ps than threads has its
// threads hand the Ps around: a thread the kernel wakes (a promoted
// follower, a worker handed a request) must wait for the thread holding
// the P to enter a system call and for sysmon to retake it (20 µs to
// 10 ms) — waits that are the Go runtime's, not the pattern's (measured:
// docs/findings.md). A P per thread leaves the kernel alone to decide
// which thread runs, as the patterns assume. The choice is recorded in
// every point (ServerInfo.GOMAXPROCS, Provenance.ServerGOMAXPROCS, the
// configuration's Args) and overridable (bench --gomaxprocs).
//
// # The load generator's ceiling
//
// A capacity is the server's only if the load generator could have asked
// for more. At its start every run measures the generator's own ceiling
// (results.Ceiling, in run.json and the report), once per protocol: a
// closed loop, as a capacity point runs it, with the run's workers, CPUs
// and polling, against a server that answers at once (the Proactor, else
// netpoll, with no work, on the server CPUs); the ceiling is the achieved
// rate over the share of their time the workers were busy. A busier
// generator batches more responses per system call, so the estimate errs
// low. Every point whose rate — a capacity's achieved rate, an open
// point's offered one — reaches CeilingFraction (80%) of it is marked
// invalid for the generator's reason (loadgen.CheckCeiling, the
// generator's fault: results.Point.Fault), reported as beyond what this
// generator measures here with what to do (more load CPUs, --agents),
// and never as the model's number. A search for the capacity at the
// latency objective whose closed-loop capacity was beyond the ceiling
// searches up to CeilingFraction of the ceiling instead, and says so.
// With the generator's limits relaxed (tests on a busy machine) the
// ceiling is recorded but marks nothing. The measurement also times a
// server's start and a point's overhead beyond its windows, from which
// the run prints its estimated duration (Experiment.Estimate).
//
// Where even one server CPU serves more than the generator's ceiling (a
// 2-CPU machine, a server with no work per request), a server CPU quota
// (Experiment.ServerCPUQuota, bench --server-cpu-quota; the lean
// profile's) keeps capacities the server's: the run makes one cgroup
// with the cpu controller (v1's cpu.cfs_quota_us per a 10-ms
// cpu.cfs_period_us, or v2's cpu.max), moves every process of each
// measured server into it once the server is ready (its threads, and
// those it starts later, follow), and removes it at the end. Every
// configuration gets the same share, so capacities and CPU per request
// compare per unit of CPU; a period's throttled rest shows in the
// latencies, which are not the server's under a quota. The generator's
// ceiling is measured without one. The provenance records the quota.
//
// # Kernel threads that stall a CPU
//
// Some kernel threads wake at a fixed period and then run for
// milliseconds on whichever CPU they wake on; a stall on the server's CPU
// delays every request queued behind it, one on a load CPU delays the
// generator's sends, and either can decide the p99 of a window of a
// second or less. (Measured on one VM, quieting DAMON's thread did not
// move p99 detectably: the VM's other stalls dominate there;
// docs/findings.md.) The harness knows them by name (disturbers: DAMON's kdamond,
// which some hosts run on their guests to find cold memory) and, for the
// length of a run, gives each SCHED_IDLE — it then runs only in its CPU's
// idle time and yields at once when a server or generator thread wakes;
// its work is delayed, not lost — and restores its policy afterwards
// (also when the run is interrupted; a killed harness leaves it
// SCHED_IDLE, which is harmless). That needs root (CAP_SYS_NICE); without
// it the run warns, naming the thread and the command that would quiet
// it. Provenance.KernelThreads records what was found and done, and the
// report's Provenance shows it. Options.KeepKernelThreads (bench and gate
// --keep-kernel-threads) leaves them as they are.
//
// # Calibration
//
// A request's CPU work is a number of iterations of the service's loop,
// converted from the workload's nanoseconds with a calibration (ns per
// iteration, service.Calibration). A server that calibrates itself
// converts with its own 25 ms measurement, so two servers of one run may
// do different work for the same request. With Experiment.CalibrateOnce
// (every profile but gate) the run measures the calibration once at its
// start, in the harness process pinned to the server CPUs, records it in
// run.json (the experiment's ns_per_iter and the provenance, which the
// report shows) and gives it to every server it starts, a chain's back end
// included (serve --ns-per-iter); each point's ServerInfo.NsPerIter shows
// the value its server used. A resumed run keeps the recorded value.
//
// # Failures
//
// A configuration whose server does not start the first time it is
// asked to (serve exits with its reason — an unknown model, io_uring not
// permitted, a bad flag — or never becomes ready) is unavailable: run.json
// lists it with the reason, and each of its points is written with status
// unavailable and that reason, never skipped silently. A server that
// started before and fails to start again fails that point only. A server
// that dies in mid-point fails the point, with its exit status and
// stderr's tail; the load generator is stopped at once, and the next point
// starts a new server. A load generator error, or a control channel that
// does not answer, fails the point too; the run goes on. A server that
// does not quit cleanly becomes a run warning.
//
// Cancelling Run's context stops the run after the current point (the
// point's load is never cut short: an interrupt cannot produce a partial
// point), and run.json records Interrupted; Resume continues.
package harness
