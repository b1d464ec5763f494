// Package sharedqueue is Leader/Followers as boost.asio practises it: one
// io_context run by n threads on Linux — its scheduler (one operation
// queue shared by every thread, with a reactor token in it) over its
// epoll_reactor — with the ledger served through strands. The leader role
// is the token: the thread that dequeues it runs epoll_wait, queues what
// is ready and puts the token back at the end of the queue, so the role
// passes from thread to thread through the queue, and the thread that
// polled usually serves the first ready connection itself.
//
// # Participants
//
// asio's names (include/boost/asio/detail/impl/scheduler.ipp,
// epoll_reactor.ipp, strand_service.ipp), and what the code calls them:
//
//   - scheduler: scheduler, with mutex_ (mu, a futex.Mutex), op_queue_
//     (queue), task_operation_ (task, the reactor token),
//     task_interrupted_ (taskInterrupted) and wakeup_event_ (wakeup, a
//     futex.Cond on which idle threads wait).
//   - scheduler::run / do_run_one: thread.run, on each of Config.Threads
//     locked OS threads (default a thread per CPU, DefaultThreads; asio's
//     server3 example). A thread pops the head of the queue. The token:
//     it becomes the poller (thread.react) — if more is queued it signals
//     one idle thread (unlock_and_signal_one) and polls without blocking,
//     else it blocks; any other op: if more is queued it wakes another
//     thread (wake_one_thread_and_unlock), then performs the op. An empty
//     queue: the thread waits on wakeup.
//   - epoll_reactor::run: the middle of thread.react. It does no I/O: each
//     ready handle's op (asio's descriptor_state) goes to the thread's
//     private queue (private_op_queue), at most 128 per turn.
//     task_cleanup: then, under mu, the private ops and the due timers'
//     expiries are appended to the shared queue and the token after them,
//     so that everything this turn found runs before the next turn. The
//     same thread then dequeues the first of them and, seeing more,
//     signals one idle thread.
//   - wake_one_thread_and_unlock: scheduler.wakeOneAndUnlock: signal one
//     idle thread if there is one; else, if the poller is blocked
//     (!task_interrupted_), interrupt it (epoll_reactor::interrupt) through
//     the interrupter, an eventfd in the handle set, so that it comes
//     back for the work.
//   - descriptor_state::perform_io and the handler it runs inline:
//     conn.perform. Whoever dequeues a connection's op reads, serves every
//     complete request and writes the responses (connio.Session.OnReady):
//     the read handler with its async_write, whose first write is tried at
//     once (start_op's speculative write).
//   - The write's completion (Options.Completion): with Posted, asio's
//     default, a write that completed at once is still delivered through
//     the scheduler (start_op → post_immediate_completion): the
//     connection's op is posted to the shared queue, waking an idle thread
//     or interrupting the reactor, and whichever thread dequeues it runs
//     the write handler (conn.writing), which re-arms the handle for the
//     next read, or closes a connection that is done. So a request costs
//     two ops, and the write handler may run on another thread, as in
//     asio's HTTP server examples, which chain async_read_some →
//     async_write → async_read_some. With Inline the
//     read handler re-arms the handle itself, in the one op: an
//     application that writes synchronously from its read handler. A
//     write that would block waits for writability either way, and its
//     completion runs inline in the op that finishes it, as perform_io
//     runs the first completed operation's handler.
//   - The acceptor's async_accept: acceptor.perform accepts one
//     connection per op (connio.AcceptAdmittedUpTo) and registers it; if
//     it took one, it posts itself again (the handler's next accept,
//     completing at once while the backlog holds more, is posted as
//     above), and re-arms the listener once accept finds the backlog
//     empty.
//   - post_immediate_completion, post_deferred_completion:
//     scheduler.post (the shared queue, then wake_one_thread_and_unlock),
//     used by write and accept completions, by a strand queued by
//     dispatch or post, and by connections handed back from a strand.
//     With is_continuation, from a thread inside run: thread.proceed, the
//     thread's private queue (thread_info's private_op_queue), moved to
//     the end of the shared queue when the op returns (work_cleanup),
//     waking no thread, since the thread dequeues next.
//   - strand_service::strand_impl with its mutex_, locked_, waiting_queue_
//     and ready_queue_: strand, one per ledger shard. dispatch (do_dispatch)
//     runs a handler at once on the calling thread if the strand is free,
//     otherwise queues it; post (do_post) queues it, and queues the strand
//     on the scheduler if it was free; a run of the strand from the queue
//     (do_complete) runs every ready handler. Either exit (exitStrand)
//     makes the waiting handlers ready and, if there are any, the strand
//     is queued again, still locked: after a dispatch by scheduler.post
//     (on_dispatch_exit, not a continuation), after a run by
//     thread.proceed (on_do_complete_exit, a continuation).
//   - deadline_timer on the reactor: the scheduler's timers, a heap of the
//     deadlines of guarded withdrawals, which bound the poller's wait; a
//     due one queues its shard's expiry.
//
// # The ledger through strands
//
// The ledger's accounts are split into Options.Shards shards (default
// DefaultShards; shard i holds [i·N/K, (i+1)·N/K)). Each shard's servant —
// an unsynchronized service.Ledger, sharing one service.Supply with the
// others, and its waiting withdrawals — is touched only by handlers
// running in the shard's strand, so it has no lock: Active Object's
// guarantee (serialized access to the servant's state without locks in
// the servant) without a dedicated thread. A connection's ledger request
// runs its work spec on the connection's thread, outside every strand (as
// Service.Do runs it outside the monitor's lock), then is dispatched to
// the strand of its account's shard. If it ran at once, the response is
// written at once; otherwise the connection is suspended
// (connio.AsyncService): it is not re-armed, and its next requests wait,
// until the handler has run and posted the connection back to the
// scheduler, where any thread goes on with it. A connection therefore has
// at most one ledger request pending and its responses leave in order,
// as an asio connection that chains one asynchronous operation after the
// other.
//
// A transfer between shards is two handlers: the debit in the source's
// strand (validated exactly as service.Ledger.Transfer validates), which
// dispatches the credit to the destination's strand. A guarded withdrawal
// whose balance is short waits in its shard, with no thread waiting: a
// deposit or credit to the shard re-checks it (oldest first), and its
// deadline, through the scheduler's timers, times it out. Total is a
// Chandy–Lamport snapshot over the strands (see snapshot): the ledger's
// money at one consistent cut, exact while transfers are in flight.
//
// # Thread roles
//
//   - Poller (the leader): at most one thread, the one that dequeued the
//     token, in epoll_wait; blocked only when the queue was empty.
//   - Processing: any number of threads, each performing one op: a
//     connection's I/O and requests, a write's completion, an accept, or a
//     strand's handlers.
//   - Idle (the followers): threads waiting on wakeup, the scheduler's
//     condition, for queued work.
//
// # Where Go or Linux differs from asio
//
//   - Handles are registered with EPOLLONESHOT (the suite's deactivation
//     protocol, see handleset) and re-armed after each op, where asio
//     registers each descriptor once, edge-triggered, and guards
//     perform_io with the descriptor's mutex. Either way one thread at a
//     time performs a connection's I/O; here it costs an epoll_ctl per
//     event, there a mutex per event.
//   - The interrupter is read when it fires; asio re-arms it with
//     EPOLL_CTL_MOD and never reads it.
//   - Reads are not speculative: asio's start_op tries a read before
//     queuing it, here the write handler re-arms the handle and the read
//     waits for readiness. When nothing has arrived it is one system call
//     either way (an epoll_ctl here, a recv that finds nothing there);
//     when the next request is already there, asio's read completes at
//     once and its handler is posted, where here it waits for the next
//     reactor turn to be queued. Writes are speculative: a
//     connection's responses are written at once after its requests are
//     served (OnReady), and with Posted their completion then goes
//     through the queue as asio's does.
//   - asio's accept handler tries the next accept itself and posts its
//     completion; here the acceptor posts itself and the thread that
//     dequeues it accepts: the same pass through the queue and wake-up
//     per connection, the accept on the other thread.
//   - The legacy strand_service maps strands onto 193 shared
//     implementations, so unrelated strands may serialize each other;
//     here each shard has its own.
//   - asio with a concurrency hint of 1 (one_thread_) sends every post
//     from inside run to the thread's private queue; here only
//     continuations go there, as with more threads.
//   - wait_usec_ and task_usec_ (spinning variants) are not offered: idle
//     threads and the poller sleep.
//   - The lock and the condition are futex-based (futex.Mutex,
//     futex.Cond), not pthread's, and the threads are locked goroutines
//     blocking in raw system calls on descriptors Go's netpoller never
//     sees. Go channels and sync.Cond on locked threads would cost
//     several context switches per hand-off. Like glibc's, the
//     condition makes no wake call for a waiter already signalled, and
//     the reactor is interrupted with the lock held, as asio does it (so
//     a reactor woken on the same CPU may sleep on the lock, as asio's
//     does). Unlike glibc, a thread back from a condition wait re-takes
//     the lock uncontended: glibc re-takes it marked contended
//     (lll_cond_lock), so the unlock that follows makes a FUTEX_WAKE
//     whether or not anyone waits — most of asio's futex wake calls
//     (docs/findings.md, "Real asio beside its model").
//   - Ledger requests served through strands are not traced
//     (service.Config.Trace), as in Active Object; OpWork is.
//
// # Stats
//
// PerThread lists the pool threads (role "pool") in order: Events, the
// connection and listener ops performed after readiness (not a posted
// write completion or accept); Requests, the
// requests served (a ledger request counts on the thread that wrote its
// response); Promotions, the reactor turns (times the thread took the
// token). Accepted stays 0: no thread owns a connection. Counters: polls
// (reactor turns), poll_events (ready handles queued), wakeups (idle
// threads signalled), interrupts (blocked reactor woken for work no idle
// thread could take), queue_high_water, shards, strand_inline (handlers
// run at once by their dispatcher), strand_queued (handlers that waited
// for their strand), strand_runs (strands run from the queue),
// deferred_completions (connections handed back to the scheduler by a
// strand), posted_writes (write completions posted, Posted), posted_accepts
// (accepts posted after one that took a connection), continuations
// (strands re-queued through their thread's private queue),
// cross_shard_transfers, guard_waits, guard_timeouts,
// open_conns, stale_events.
//
// # Guarantees
//
// A shard's servant is touched by one handler at a time, and its handlers
// run in the order they reached the strand. One thread at a time performs
// a connection's op; a connection's responses leave in request order.
// Money is conserved and Total is consistent. Close stops the scheduler,
// joins every thread and closes every descriptor; ledger requests still
// queued in strands, and withdrawals waiting for funds, are abandoned with
// their connections.
//
// Not guaranteed: a connection's ledger requests are not pipelined into
// the ledger (one pending at a time per connection). Blocking and CPU work
// hold the thread that performs the connection's op, as in
// Leader/Followers; a handler waiting for its strand holds no thread. The
// poller's turn, every hand-back and (Posted) every write's completion
// pass through the one queue and its lock, which every thread contends
// for; a completion's wake-up may find its op already taken by the thread
// that posted it, as in asio.
package sharedqueue
