// Package halfsynchalfreactive is the Half-Sync/Half-Reactive thread pool:
// one reactor thread demultiplexes every connection and hands each request
// through a bounded queue to a pool of worker threads that serve it
// synchronously. It is the design the Leader/Followers paper
// (Schmidt, O'Ryan, Kircher, Pyarali, Buschmann, PLoP 2000, section 2)
// measures itself against: passing a
// request from the network I/O thread to a worker costs "a dynamic memory
// allocation, multiple synchronization operations, and a context switch".
// This package pays exactly those costs, where the pattern puts them, and
// no others it can avoid.
//
// # Participants
//
//   - Asynchronous (reactive) layer: the reactor, one locked OS thread
//     (reactor.run) waiting on the shared handleset.Set, in which the
//     listener, every connection and a notification eventfd are registered.
//     Its hook methods (HandleEvent of acceptor, *conn and notifyHandler)
//     accept connections, read into each connection's connio.In and decode
//     requests (reactor.read, reactor.dispatch). For every request it
//     creates a request object — the pattern's request message: a copy of
//     the decoded wire.Request including its Payload (the decoded Payload
//     aliases In, which the next read overwrites), the connection, and the
//     request's sequence number on it — and puts it on the queue.
//   - Queueing layer: queue, a bounded buffer written as a Monitor Object:
//     a futex.Mutex and two futex.Conds, notEmpty and notFull. queue.put is
//     the reactor's side; queue.get the workers'.
//   - Synchronous layer: the workers, Config.Threads locked OS threads
//     (worker.run, default DefaultThreads) that take request objects, run
//     Service.Do synchronously — a worker may block in the service's
//     blocking work or in a guarded withdrawal, which is what this layer is
//     for — and deliver the response to its connection (conn.complete).
//
// So Config.Threads counts the workers; the server runs Threads+1 threads.
// Stats.PerThread lists the reactor first (role "reactor"; Events: handle-set
// events dispatched; Requests: 0) and then the workers (role "worker";
// Events: requests taken from the queue; Requests: responses produced).
//
// # What one request costs, and where
//
//   - Allocation: the reactor allocates the request object with new, and a
//     copy of the payload when there is one (reactor.acquire, request.fill).
//     The variant Options.Pooled (Stats.Variant "pooled") recycles request
//     objects and their payload buffers through a free list kept inside the
//     queue's monitor, taken and returned in the same critical sections as
//     the hand-off itself, so pooling removes the allocation and nothing
//     else. Counter request_allocs counts the objects allocated.
//   - Synchronization: the queue's mutex, taken once by the reactor (put)
//     and once by the worker (get); the connection's mutex, taken by the
//     worker to write the response and by the reactor to reconcile the
//     handle's interest after serving an event; the atomic in-flight counts.
//     A condition is signalled only when a thread waits on it (waiters
//     register inside the monitor), so when the pool is busy a hand-off makes
//     no futex system call, as with pthread condition variables.
//   - Context switch: a worker that found the queue empty sleeps in the
//     kernel on notEmpty; the reactor's put wakes it (one FUTEX_WAKE, one
//     switch). At light load that is every request: the cost the
//     Leader/Followers pattern removes. Futexes, not Go channels or
//     sync.Cond: on locked threads those cost 5–7 switches per hand-off here.
//
// # Ordering
//
// Workers finish a connection's requests in any order, but responses leave
// in request order (HTTP/1.1 pipelining requires it; the binary protocol
// carries ids but keeps the same order for uniformity). Each conn has an
// output state guarded by its futex.Mutex: out (a connio.Out) and ring, the
// connection's connio.Ring — the in-order ring of every model that hands
// requests off — of models.MaxInFlight slots indexed by sequence number,
// which the reactor assigns when it dispatches a request (ring.Push) and
// whose Next is the response due. A worker whose response is due encodes it
// into out, appends every consecutive response already waiting in the ring,
// and writes out with non-blocking writes; a worker whose response is not
// due parks a copy of it (payload included: the worker's scratch space is
// reused) in its slot, and the worker that later writes the due response
// writes it too. Counter out_of_order counts parked responses. At most
// models.MaxInFlight requests of a connection are in flight, so the
// in-flight sequence numbers span fewer than that many values and their
// slots never collide. A request that fails to decode is answered by the
// reactor with the protocol's error response, taking its turn after the
// responses in flight, after which the connection closes.
//
// Writing under the connection's mutex is what serializes writers on a
// socket; encoding a response happens under it too (into out directly, as
// in every other model, instead of into a private buffer and then copying).
//
// # Who arms the handle, and how the reactor learns what workers did
//
// Only the reactor changes a connection's registration (reactor.reconcile),
// and only with the connection's mutex held; c.armed records what it set.
// The interest follows the state (conn.desired): Readable while the
// connection admits more requests, level-triggered — a single thread waits
// on the set, so a steadily readable connection costs no epoll_ctl per
// event; Writable, one-shot, while output waits for the socket (a worker
// may drain the output meanwhile; a one-shot handle then reports at most one
// needless event); nothing while it is paused. When a worker's write leaves output behind (EAGAIN),
// or its response makes room on a paused connection, or finishes a
// connection that is to close, it compares the desired interest with
// c.armed under the same mutex and, if the reactor must add something, puts
// the connection on the notifier's list and signals its eventfd (once per
// batch). The reactor then serves the connection: it arms Writable (and
// finishes the output when the socket drains), dispatches requests a bound
// held back in In (no new bytes may ever arrive for them, so readability
// alone would not wake it), re-arms Readable, or closes.
//
// Note: workers could instead re-arm handles themselves with Set.Reactivate
// (the set allows it), but requests held back in In need the reactor
// anyway, and one owner of the registration keeps c.armed exact. The
// notification costs a system call only in the back-pressure paths, never
// in the steady state.
//
// # Back-pressure
//
//   - Queue full: put waits on notFull. The reactor then reads nothing
//     from any connection until a worker takes a request — the classic
//     bounded buffer, never an unbounded queue. Counter reactor_blocked
//     counts the puts that waited; queue_high_water the deepest the queue
//     got (at most queue_capacity, Options.QueueSize).
//   - Per connection: a connection is not read, and its buffered requests
//     are not dispatched, while models.MaxInFlight (64) of its requests are
//     in flight, or while its committed output — pending in out, plus what
//     its requests in flight are expected to produce — reaches
//     Config.MaxPendingOutput (conn.admits, connio.Ring's admission rule,
//     the same as Active Object's). As with connio.Session, one response
//     may overshoot the bound. A request's expected output (request.est,
//     connio.Reserve) is the response size the request itself declares
//     (wire.Request.Size of an OpWork) plus models.ResponseOverhead (256
//     bytes) for the head. Counter conn_inflight_high_water is the most
//     requests one connection had in flight.
//
// Note: bounding only the bytes already in out, as a server that serves one
// request at a time can, is not enough here: the reactor decodes ahead, so
// a client that pipelines 32 requests for 1 MiB responses and reads none
// would have all of them in flight at once, 32 MiB per connection. Counting
// the declared size keeps a connection to the bound plus one response.
//
// # Closing a connection
//
// A connection closes when it is broken (a read or write failed; its output
// and later responses are dropped) or its input is done (end of stream, a
// decode error, or a request asking to close) and all its output is
// written — and, in both cases, nothing is in flight. The in-flight count is
// the reference count: a request object holds a reference to its connection
// from put until its response is appended to out or dropped, which happens
// with the connection's mutex held; the reactor closes a connection only
// after seeing the count at zero under that mutex. So no worker can write to
// a descriptor after it was closed and its number reused. A connection broken
// while a worker serves one of its requests therefore stays open until that
// request is done.
//
// # Priority
//
// Options.Priority (variant "priority") makes the queueing layer a priority
// queue: a worker takes the queued request with the highest
// wire.Request.Priority, the oldest among equals (prioHeap), instead of
// the oldest. The request object, and so the hand-off, are unchanged, and
// a connection's responses still leave in request order (the reorder
// ring), so a priority is per request: one connection may mix them. What
// it does not change: the reactor reads connections in the order epoll
// reports them, and while the queue is full the reactor waits and reads
// nothing — a high-priority request that arrives then waits behind the
// low-priority ones that filled the queue (the inversion a bounded queue
// keeps); and a worker already serving a low-priority request is not
// preempted. Strict priority can starve low priorities under sustained
// high-priority load; the low-priority requests still queued keep their
// order among themselves.
//
// # Guarantees
//
// A connection's responses are written in request order, each exactly once,
// unless the connection breaks. No thread blocks in I/O: every descriptor is
// non-blocking; the reactor blocks only in epoll_wait, on a full queue, and
// briefly on a connection's mutex while a worker encodes and writes a
// response. Memory is bounded: the queue by QueueSize, a connection by one
// maximal request in In, models.MaxInFlight request objects (each at most
// models.InFlightRecord bytes and a copy of its payload), and
// MaxPendingOutput plus one response of output (models.ConnMemoryBound). The reactor accepts
// with connio.AcceptBatch, the accept policy every readiness-driven model
// shares: temporary accept failures (EMFILE, …) disarm the listener for a
// delay that doubles from 1 ms to 1 s (a connio.ListenPause bounds the
// reactor's wait meanwhile).
//
// Not guaranteed: fairness between connections beyond the reactor's bounded
// reads per event; any order between different connections' requests; an
// upper bound on latency (a full queue delays every connection). Requests
// of one connection may run concurrently on different workers, so a client
// that pipelines dependent ledger operations sees them in any order (as with
// any multi-threaded server; the ledger's monitor keeps each atomic).
//
// Close closes the queue (waking every worker and a reactor blocked on
// notFull), closes the handle set (waking the reactor in epoll_wait), waits
// for every thread to exit still locked, then closes every connection.
// Requests still queued are dropped; a worker finishes the request it is
// serving first. The threads are gone when Close returns.
//
// # Counters
//
// Stats.Counters holds queue_capacity, queue_high_water, reactor_blocked,
// handoffs (requests put on the queue), request_allocs, out_of_order,
// conn_inflight_high_water and notifications (connections the reactor served
// because a worker asked).
package halfsynchalfreactive
