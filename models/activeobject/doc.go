// Package activeobject is the Active Object model: the ledger service runs
// on K active objects, each a servant (a shard of the accounts) serialized
// by its own scheduler thread, invoked asynchronously through a proxy that
// turns calls into method requests on an activation queue and returns
// futures. The network side is a reactor-style I/O layer on the shared
// handle set that plays the client.
//
// # Participants (Active Object pattern, POSA2 / Lavender & Schmidt)
//
//   - Proxy: Proxy. Typed methods Balance, Deposit, Withdraw, Transfer,
//     Total and Work (and Audit); each runs in the caller's thread, builds a
//     method request, enqueues it on the activation queue of the active
//     object that owns the account, and returns a Future at once.
//   - Method Request: the MethodRequest interface — Guard (may it run
//     now?), Call (execute it on the servant, complete the future) and
//     Cancel (complete the future with ErrClosed at shutdown). Concrete
//     requests: workRequest, balanceRequest, depositRequest,
//     withdrawRequest (guarded, with a deadline), transferRequest (both
//     accounts in one shard), transferOutRequest and transferInRequest (a
//     transfer between shards), refundRequest (guarded), snapStartRequest
//     and snapMarkerRequest (Total and Audit). One is allocated per
//     invocation, as the pattern's proxy does, and garbage-collected.
//   - Activation Queue: ActivationQueue, a bounded buffer on a futex.Mutex
//     with futex.Conds, shared by the client threads (producers) and one
//     scheduler (consumer).
//   - Activation list: the scheduler's deferred requests (guard failed,
//     oldest first) followed by the batch it just took from the queue.
//   - Scheduler: scheduler; run is the pattern's svc_run, dispatch its
//     dispatch. One locked OS thread per active object.
//   - Servant: servant, which holds the unsynchronized service.Ledger of
//     one shard (accounts [i·N/K, (i+1)·N/K), with the service's initial
//     balance, so totals match the other models) plus the bookkeeping of
//     money sent to and received from other shards. It has no lock; only
//     its scheduler's thread touches it.
//   - Future: Future, the result (value, error, wire status, body). A client
//     blocks in Wait or polls Ready; a connection's future instead posts the
//     connection to the completing scheduler's completion port.
//   - Client: the I/O threads (or any goroutine using Server.Proxy).
//
// Several active objects, each with its own servant, are how the model uses
// more than one core (Options.Objects, default 2, the cores of the machine
// the suite is measured on).
//
// # Threads
//
//   - I/O threads (Config.Threads, default 1; Stats role "io"): they wait
//     on the shared handle set, where every handle is registered OneShot, so
//     an event reaches one thread, which owns the handle until it re-arms
//     it. An I/O thread accepts connections (connio.AcceptBatch, the
//     accept policy the readiness-driven models share; after a descriptor
//     shortage the listener stays disarmed for a connio.ListenPause, which
//     bounds every I/O thread's wait), reads and decodes requests,
//     invokes the proxy for each (it is the pattern's client), and encodes
//     and writes the responses of completed futures. A connection's state is
//     also guarded by its own futex.Mutex, because a completion may reach it
//     while a readiness event does.
//   - Scheduler threads (Options.Objects; role "scheduler"): each takes
//     batches from its activation queue and dispatches them to its servant.
//     They never do network I/O and never block on another scheduler.
//
// Both kinds exit still locked, so the runtime destroys their threads.
//
// # Request and response path
//
// An I/O thread decodes a request and calls the proxy, which enqueues the
// method request (waking the scheduler through its queue's condition if it
// sleeps: one futex wake). OpWork runs on the active object the connection
// was assigned round robin at accept (so one connection's work stays in
// order on one scheduler); ledger operations run on the owner of their
// account. The scheduler runs the method — for OpWork cfg.Service.Work(cpu,
// block) then the body wire.AppendBody(id, size) (a connection's body over
// wire.MaxInlineBody is not built: the future carries its length and the
// connection's output streams it, see connio.Out); for a ledger request its
// work spec, if any, then the ledger operation — and completes the future.
//
// The completed future's response is written by an I/O thread: the
// scheduler appends the connection to its completion port's list and, if
// the list was empty, signals the port's eventfd (a handleset.Wakeup
// registered in the handle set); the I/O thread that receives the event
// encodes, in request order, every response of the connection whose future
// is ready, and writes. Why not let the scheduler write: see
// completionPort. So a request costs up to two thread hand-offs (I/O →
// scheduler, scheduler → I/O), fewer per request under load because both
// the queue and the completion port hand over batches. These hand-offs are
// the model's cost that the suite measures.
//
// Responses of one connection leave in request order (HTTP pipelining)
// even when futures on different active objects complete out of order: a
// connection's requests in flight sit in its connio.Ring, the in-order
// ring of every model that hands requests off, by sequence number, and
// only the oldest ready ones are encoded. A slot (its future, and the
// future's body buffer) is reused from the connection's free list, so a
// connection keeps as many as it has had requests in flight at once.
//
// # Bounds and back-pressure
//
// A connection puts at most Options.MaxInFlight requests in flight
// (default models.MaxInFlight, 64), and admits a new one only while its
// pending output plus the output reserved by its requests in flight
// (connio.Reserve: their bodies plus models.ResponseOverhead, 256 bytes,
// for the head) is below Config.MaxPendingOutput: connio.Ring's admission
// rule, the same as Half-Sync/Half-Reactive's, so back-pressure does not
// differ between the two. A connection that cannot admit is not read.
// An activation queue holds at most Options.QueueCapacity client requests,
// counted until they finish (including those deferred by their guard);
// Enqueue then blocks the calling I/O thread (back-pressure; counted as
// enqueue_blocked). The second half of a transfer, a refund, and a Total's
// markers are continuations: enqueued by one scheduler on another without
// a slot of their own and without ever blocking, so schedulers cannot
// deadlock on each other's full queues. They are bounded all the same: a
// transfer keeps its source queue's slot until its money is credited (or
// refunded), and a Total sends at most K−1 markers from each object.
//
// # Transfers between active objects
//
// A transfer whose accounts belong to different objects is two method
// requests. TransferOut, on the source's object, validates and debits the
// source exactly as Ledger.Transfer would (a transfer never waits for
// funds: ErrInsufficientFunds at once, as Monitor.Transfer), records the
// debit as sent, and enqueues TransferIn on the destination's object, which
// credits the money, records it as received, and completes the future with
// the source's balance after the debit. If the credit would overflow, the
// destination bounces the money back as a Refund, which credits the source
// once it has room (its guard) and fails the transfer with ErrOverflow, so
// money is never created or lost. No lock is held across the two halves and
// no scheduler waits for another: there is nothing to deadlock on.
//
// The shards share one service.Supply, the ledger's money: a client's
// deposit reserves its amount there and is refused (ErrOverflow, wire
// status overflow) if the money would exceed math.MaxInt64; a withdrawal
// gives it back; the two halves of a transfer (service.Ledger's Debit and
// Credit) leave it alone. Every balance and every amount in flight is a
// part of it, so a Total cannot wrap, and a credit cannot overflow: the
// Refund path above is reached only without the Supply (an in-package
// test option) and stays as the defence should that accounting ever break.
//
// Invariant: the money in all balances, plus the money in flight (debited
// by a TransferOut, not yet credited by its TransferIn or Refund), equals
// accounts × initial + deposits − withdrawals ≤ math.MaxInt64, at every
// consistent cut.
// Because a transfer's future completes only when its money has landed,
// nothing is in flight once every transfer a client issued has its
// response.
//
// Total (and Audit) is a Chandy–Lamport snapshot over the channels between
// the objects (see snapshot): it returns the balances plus the money in
// flight at one consistent cut — the conserved total, exact even while
// transfers are in flight — and, once no transfer is in flight, exactly the
// sum of the balances. Audit reports the two parts separately, with each
// servant's own ledger audit.
//
// # Guards
//
// A guarded withdrawal (Withdraw with a timeout) whose balance is short
// stays in the activation list; the scheduler runs the oldest request whose
// guard holds, re-evaluates the deferred guards after every request that
// changed its servant, and sleeps on its queue no longer than the nearest
// deadline, so a withdrawal fails with ErrTimeout (StatusTimeout) even when
// nothing else arrives. A withdrawal issued before the deposit that covers
// it therefore executes after it.
//
// # Stats
//
// Stats.Requests counts responses produced. PerThread lists the I/O threads
// (Events: handle-set events) and the schedulers (Events: batches taken
// from the queue; Requests: method requests executed, not part of
// Stats.Requests). Counters: queue_high_water_<i> (the most slots ever
// charged on object i's queue) and queue_high_water (their maximum),
// handoffs (method requests put on any activation queue: one per request
// plus continuations), enqueue_blocked, guard_deferrals (guard evaluations
// that failed: times a request was passed over), guard_timeouts,
// cross_shard_transfers, completion_signals (eventfd signals from
// schedulers to the I/O side), objects, queue_capacity, open_conns.
//
// # Priority
//
// The model has no priority activation queue. Note: it was considered and
// left out, for three reasons. (1) The scheduler takes every arrived method
// request in one batch and runs them in arrival order; ordering a batch by
// priority would help only requests that arrive together, and a
// high-priority request arriving during a batch waits for all of it
// whatever the order, since one scheduler thread executes one method at a
// time and the work runs on it. (2) The activation queue is also the
// channel of continuations and of Total's snapshot markers, whose
// consistency needs each channel to stay FIFO: a priority order would have
// to keep those in arrival order among client requests it reorders. (3)
// Reordering one connection's pipelined ledger operations by priority
// would change their results (a withdrawal overtaking the deposit it needs),
// which requests of one priority never see today. Half-Sync/Half-Reactive's
// priority request queue (its Options.Priority) and Leader/Followers' lanes
// are where the suite measures priority.
//
// # Guarantees
//
// A servant's state is touched by its scheduler thread only. A
// connection's responses leave in request order. Money is conserved and
// Total is consistent. Close stops the I/O threads, cancels every pending
// method request (its future completes with ErrClosed, StatusUnavailable;
// the connections are closed with whatever they had in flight), joins every
// thread and closes every descriptor.
//
// Not guaranteed: the requests one connection pipelines to different
// active objects execute concurrently, not in request order (a pipelined
// transfer and a balance of its destination may run either way round); a
// client that waits for each response sees its requests in order. A
// request's work (CPU and blocking) runs on its scheduler and so holds up
// its whole shard, where service.Do runs it outside the monitor lock. An
// I/O thread blocked on a full queue stalls all its connections. Requests
// deferred by their guard count against the queue's capacity, as in the
// pattern: a queue full of waiting withdrawals blocks enqueuers until their
// deadlines pass. A refund that must wait for room (possible only without
// the shared Supply, see above) delays its transfer's response until room
// appears.
package activeobject
