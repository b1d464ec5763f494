// Package proactor is the Proactor model on io_uring: the server initiates
// asynchronous operations (accept, receive, send) and reacts to their
// completions, not to readiness. On Linux the facility that completes socket
// operations asynchronously is io_uring (Linux AIO runs socket reads
// synchronously), reached through concbench/internal/uring.
//
// # Participants
//
// The pattern's participants (POSA2, Proactor) and the identifiers that
// play them:
//
//   - Asynchronous Operation Processor: the kernel, through the ring
//     (uring.Ring). It performs the accepts, receives and sends: socket
//     operations are poll-driven inside the kernel, and with
//     IORING_SETUP_DEFER_TASKRUN their completion work runs in the
//     dispatcher thread's own context while it waits in io_uring_enter, so
//     no kernel worker threads are involved.
//   - Asynchronous Operations: a multishot accept per ring
//     (uring.SQE.PrepMultishotAccept), receives into provided buffers
//     (PrepRecvMultishot, or PrepRecvProvided re-armed per completion),
//     sends (PrepSend), cancellations, closes, a timeout for accept
//     back-off, and one poll per connection for its peer's hang-up
//     (PrepPollAdd of POLLRDHUP), which works around a multishot receive
//     that misses a reset (see conn_linux.go: the hang-up poll).
//   - Initiator: the proactor's start and cancel methods (startAccept,
//     startRecv, startSend, cancelRecv, cancelAll, startClose,
//     startBackoff), called at start-up and from the completion handlers;
//     they fill SQEs that the next io_uring_enter submits.
//   - Completion Event Queue: the ring's completion queue (CQ), drained by
//     uring.Ring.Reap.
//   - Proactor: type proactor, one per dispatcher thread. Its loop submits
//     what was initiated, waits for completions (uring.Ring.SubmitAndWait),
//     and dispatch demultiplexes each CQE, by the operation and connection
//     encoded in its user data, to its completion handler.
//   - Completion Handlers: handleAccept (a new connection: adopt it and
//     start receiving; past Config.MaxConns, refuse it with one
//     synchronous write(2) of the refusal and close it, see
//     connio.Limit), handleRecv (bytes into the connection's
//     connio.Session input, served by Session.Process; end of stream;
//     errors), handleSend (consume what the kernel sent, resubmit the rest
//     of a partial send), handleHup (the peer hung up: receive
//     single-shot from now on), and the bookkeeping handlers handleClose,
//     handleBackoff and handleWake. advance is the per-connection state
//     machine they all end in.
//
// Protocol handling is connio's, as in every model: received bytes go into
// the Session's In (In.Append), Session.Process serves complete requests,
// responses accumulate in its Out.
//
// # Threads and work sharing
//
// Config.Threads dispatcher threads (default: the number of CPUs in the
// process's affinity mask, DefaultThreads). Each is a goroutine locked to
// its OS thread that owns one ring, set up with SINGLE_ISSUER,
// DEFER_TASKRUN and SUBMIT_ALL, one provided-buffer ring, one listening
// socket of an SO_REUSEPORT group with its multishot accept, and every
// connection accepted on it, for the connection's whole life. A thread is
// either waiting in io_uring_enter (where the kernel also runs the
// completion work of its sockets) or dispatching a batch of completions,
// which includes running the service for each request served. It exits
// still locked, so the Go runtime destroys it.
//
// The choice is a ring per thread, with connections spread by the kernel's
// SO_REUSEPORT hash, rather than one ring whose completion queue the
// threads take turns draining (Leader/Followers over the completion port):
//
//   - SINGLE_ISSUER and DEFER_TASKRUN need one submitting thread per ring.
//     A shared ring would have to give them up (completion work would then
//     interrupt whichever thread submitted, by task-work signalling) and
//     put a lock around submission, since any thread may initiate.
//   - Draining one CQ by turns is a promotion protocol: the leader reaps,
//     hands leadership to a follower and runs handlers. A futex hand-off
//     between two locked threads costs context switches and a round trip
//     through the kernel (docs/findings.md), paid per batch; and two
//     threads could run completions of one connection at once, so each
//     session would need a lock or a per-connection serialization.
//   - With a ring per thread nothing is shared on the request path: no
//     lock, no hand-off, no cross-thread wake-up.
//
// What it costs: the balance of load between threads is the kernel's
// 4-tuple hash, which is uneven for few connections; and a handler that
// blocks (the service's blocking work) stalls every other connection of
// its ring — the classic Proactor trade-off of running completion handlers
// on the dispatcher thread. The default of one thread per CPU follows from
// the first half of that: a dispatcher never blocks in I/O, so more threads
// than CPUs only add switching unless the service blocks, in which case
// raise Config.Threads.
//
// Note: a single listening socket with a multishot accept in every ring was
// rejected: accept waits are exclusive, and the kernel wakes the first
// waiter, piling connections onto one ring.
//
// Note: an emulated Proactor over epoll (boost.asio's approach on Linux)
// is not implemented; it would be a relabelled reactor.
//
// Note: each connection is both an ordinary descriptor and a registered
// file (IORING_REGISTER_FILES, a slot per connection slot up to
// maxFixedFiles and the descriptor limit): its operations name the
// registered file (SQEFixedFile), so the kernel takes no reference on the
// file per send — about 0.9 % of the thread's CPU at capacity, measured in
// docs/findings.md ("Lean"). The descriptor stays open for what ordinary
// system calls do (the reaper's shutdown, the refusal write); startClose
// empties the slot before closing it. Direct descriptors (accepted into
// the table only) would save the descriptor too, but cannot be shut down
// or written to by ordinary system calls. A connection without a slot is
// served by its descriptor (the plain_files counter).
//
// Note: what is Go's and what the pattern's. The pattern's are the
// operations above, one CQE each, and the batch of them a wait returns.
// Go's: the runtime's entry and exit around each io_uring_enter, the
// thread's yield once per connio.SliceLength (a hand-off of its P to
// another thread and back), and the runtime's own threads (its monitor,
// about 100 wake-ups a second); together about 3 % of the CPU at
// capacity (docs/findings.md, "Lean"). Nothing else runs on the request
// path.
//
// # Buffer ownership
//
//   - Receive buffers are provided buffers: anonymous mmap'd memory outside
//     the Go heap, registered as the ring's buffer group, a cache line
//     apart beyond their size (uring.NewBufRing: at a 4-KiB stride every
//     buffer's first lines would share a few cache sets). The kernel owns a
//     buffer until the CQE that names it; the receive handler copies its
//     bytes into the session and recycles it at once, and the recycled
//     buffers are handed back (one release store of the ring tail) at the
//     end of each dispatch batch.
//   - Send buffers are the session's output buffer: a send hands the kernel
//     the exact pending slice of connio.Out and keeps a reference to it
//     (conn.sending) until the send's CQE; only then is Out.Advance called,
//     with the count the kernel reports. Responses produced meanwhile are
//     appended after the bytes in flight; Out never moves or rewrites
//     pending bytes in place (TestOutPendingBytesStable guards this), and a
//     reallocated array stays alive through the reference. One send is in
//     flight per connection.
//   - Ring memory (SQ, CQ, SQE array) is mapped from the ring and unmapped
//     when the ring closes.
//
// # Guarantees
//
// A connection's requests are served in order by one thread, and its
// responses are sent in order. Memory is bounded: per connection, the input
// buffer holds at most one maximal request plus bytes that arrived before
// a cancellation took effect, and the output at most MaxPendingOutput plus
// one response; per ring, Options.Buffers × Options.BufferSize of receive
// buffers (each padded by a cache line where the size is a multiple of
// 1 KiB). Back-pressure: while a connection's pending output is at least
// Config.MaxPendingOutput, it is not received from (a multishot receive is
// cancelled; a single-shot one is not re-armed); receiving resumes once the
// output drains below the bound. An accept error (EMFILE, …) ends the
// multishot accept, which is re-armed after a back-off of 1 ms doubling to
// 1 s, counted as accept_backoff (or accept). Close cancels the accepts,
// cancels every operation of every connection and waits for the
// cancellations' completions, closes every connection, unregisters and
// unmaps the buffers, closes the rings and listening sockets, and waits for
// the threads to exit: no ring descriptor or mapping is left.
//
// Where io_uring is unavailable (an old kernel, the kernel.io_uring_disabled
// sysctl, a seccomp filter) Start fails with an error that names the reason;
// it never falls back to another mechanism. It needs Linux 6.1
// (DEFER_TASKRUN; provided-buffer rings and multishot accept are 5.19).
// Multishot receive (6.0) is probed and used when present (Options.Recv,
// Stats.Variant "mode=ring-per-thread,recv=multishot"); otherwise
// single-shot receives are re-armed after each completion
// ("recv=single").
//
// Not guaranteed: fairness between the connections of a ring beyond the
// order of their completions in the CQ, balance between rings, or progress
// for a ring's other connections while one of its handlers blocks.
//
// # Counters
//
// Stats.PerThread has one "dispatcher" entry per thread: Events counts the
// completions it dispatched, Requests the requests it served.
// Stats.Counters, summed over threads:
//
//   - sqes_submitted: SQEs the kernel consumed;
//   - enter_calls: io_uring_enter system calls;
//   - completions: CQEs reaped;
//   - accepts: connections accepted;
//   - recv_multishot_rearms: multishot receives armed again on a
//     connection after the previous one ended (buffer exhaustion,
//     back-pressure);
//   - partial_sends: sends the kernel completed with fewer bytes than
//     submitted (the rest is resubmitted);
//   - buffers_exhausted: receives ended by ENOBUFS because the
//     provided-buffer ring was empty;
//   - plain_files: connections served by their descriptor, without a
//     registered-file slot (beyond the table, or no table);
//   - backpressure_pauses: times a connection stopped being received from
//     because its pending output reached the bound.
package proactor
