// Package acceptmutex is nginx's worker model with threads for processes:
// Leader/Followers as nginx practises it. Config.Threads workers (default
// one per CPU, nginx's worker_processes auto) each run an event loop over
// a handle set of their own and own the connections they accept for the
// connections' whole life: there is no hand-off, and no lock guards a
// connection. What the three modes (Options.Accept) differ in is how a
// worker comes to accept:
//
//   - Mutex (nginx's accept_mutex on, its default before 1.11.3): the
//     leader is whoever wins a try-lock of the accept mutex; it puts the
//     one listening socket into its own set and waits on it and on its own
//     connections. The followers wait on their own connections only, at
//     most AcceptDelay (nginx's accept_mutex_delay, 500 ms), and try the
//     lock again; nobody wakes them when it is freed. The worker that
//     loops fastest takes the lock most often: the one that "grabs all
//     connections" that led nginx to turn the mutex off by default.
//   - Exclusive (accept_mutex off with EPOLLEXCLUSIVE, nginx's default
//     since 1.11.3, and this package's): every worker's set holds the
//     listening socket, registered EPOLLEXCLUSIVE; the kernel wakes one
//     waiting worker, so the kernel promotes the leader. Which one: with
//     an epoll set per worker, the kernel walks the listener's wait queue
//     in the order the sets were registered and stops at the first set
//     with a thread waiting in it (ep_poll_callback), "the process which
//     was first to add the listening socket", in nginx's words, so
//     without reordering the first worker takes most connections. A
//     worker re-registers the socket every ReorderEvery accept events (and
//     after each while it is short of slots) to go to the back of that
//     queue (ngx_reorder_accept_events, nginx 1.21.6). With the workers
//     sharing one CPU, a storm of new connections goes largely to the
//     worker the scheduler runs while they arrive: a storm's split ranges
//     from even to one-sided, in nginx as here, and only the distribution
//     over many storms compares (docs/findings.md, "exclusive on one
//     CPU").
//   - ReusePort (listen … reuseport): a listening socket per worker, all
//     bound to one port with SO_REUSEPORT; the kernel's hash of each
//     connection's addresses chooses the worker. No leader, no
//     coordination: the partitioned server's mechanism (models/partitioned
//     shares its code, eventloop.OwnListener).
//
// The default is Exclusive because it is nginx's on Linux: its maintainers
// turned the mutex off by default in the release that added EPOLLEXCLUSIVE
// (1.11.3), "it is believed that the accept mutex brings more harm than
// benefits".
//
// # Participants
//
// nginx's, as this code names them:
//
//   - Worker process, ngx_worker_process_cycle: a worker, one locked OS
//     thread (worker.run) with its eventloop.Loop. ngx_process_events_and_timers
//     is one round: worker.runMutex and worker.runExclusive around
//     eventloop.Loop.Round, or eventloop.OwnListener.Run for ReusePort.
//   - The accept mutex, ngx_accept_mutex over shared memory, and
//     ngx_shmtx_trylock / ngx_shmtx_unlock: acceptMutex, an atomic word,
//     tryLock (a load, then a compare-and-swap; never a wait) and unlock
//     (by its holder only).
//   - ngx_trylock_accept_mutex with ngx_enable_accept_events and
//     ngx_disable_accept_events: acceptState.begin decides,
//     worker.addListener and worker.removeListener register and remove
//     the listening socket (level-triggered, as nginx's listeners are);
//     ngx_accept_mutex_held is acceptState.held.
//   - ngx_accept_disabled = connection_n/8 − free_connection_n, computed
//     for each connection accepted before it takes a slot
//     (ngx_get_connection), as slotsListener records the free slots
//     (disabledAfter), and counted down a round at a time:
//     acceptState.disabled. worker_connections is
//     Options.WorkerConns (default 512), a worker's slots
//     (eventloop.Options.Slots).
//   - NGX_POST_EVENTS with ngx_posted_accept_events and ngx_posted_events:
//     runMutex's two passes over a round's events while it holds the lock
//     (accept events, unlock, then the rest), so that the lock is held for
//     the wait and the accepts alone. ngx_posted_next_events: the loop's
//     posted connections (see package eventloop).
//   - ngx_event_accept: worker.accept, through eventloop.Loop.Accept and
//     connio.AcceptUpTo: one connection per event, or with
//     Options.MultiAccept (multi_accept on) until EAGAIN.
//   - ngx_reorder_accept_events: the end of worker.accept, skipped, as
//     nginx returns before it, when the last connection found no slot.
//   - ngx_epoll_process_events with epoll_events 512: EpollEvents per
//     wait. ngx_epoll_add_connection, EPOLLIN|EPOLLOUT|EPOLLET|EPOLLRDHUP:
//     connections are edge-triggered (eventloop.Edge), registered once and
//     never re-armed.
//   - The HTTP module's handlers: connio.Session, the suite's one request
//     loop, served by the connection's worker.
//
// # Thread roles and states
//
// Every thread is a worker (role "worker" in Stats.PerThread). In Mutex
// mode a worker is, each round, the leader (it won the lock: it waits on
// the listening socket and its connections, holding the lock, without a
// time bound), a follower (it lost: it waits on its connections, at most
// AcceptDelay) or out of the running (under an eighth of its slots free,
// or backing off after accept ran out of descriptors). In Exclusive mode
// the kernel chooses among the workers waiting; in ReusePort the hash
// does. In every mode a worker then serves its ready connections itself.
//
// # Where Go and Linux differ from nginx
//
//   - Threads for processes: one address space, so the mutex is an atomic
//     word rather than a word in a shared-memory zone, and a worker's
//     connections are plain memory that no other worker touches. And one
//     descriptor table, where each nginx worker has its own: every
//     worker's connections and epoll set are descriptors of the one
//     process, so the descriptor limit (EMFILE) is shared by all workers,
//     allocating or closing a descriptor takes the one table's lock, and
//     a system call on a descriptor takes a reference that a
//     single-threaded process skips (fdget's fast path). nginx
//     uses neither the mutex nor EPOLLEXCLUSIVE with a single worker; here
//     every mode runs as configured (one worker always wins the lock, and
//     an exclusive registration with one waiter changes nothing).
//   - Running out of slots: nginx closes an accepted connection it has no
//     slot for ("worker_connections are not enough"); a worker here
//     refuses it like the server's cap (status unavailable, HTTP 503,
//     with a reason naming --worker-conns), counted as refused. Slots are
//     not derived from Config.MaxConns (see Options.WorkerConns); the cap
//     applies across workers on top.
//   - Running out of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
//     ENOMEM): nginx takes its listeners out and, with the mutex, frees it
//     and sits out a round, without it re-adds them after
//     accept_mutex_delay. Here the suite's one accept policy applies
//     (connio.AcceptBatch): the worker takes the listener out (and frees
//     the lock) for an exponential back-off, 1 ms to 1 s, during which a
//     Mutex worker does not try the lock.
//   - multi_accept accepts until EAGAIN; here at most
//     connio.MaxAcceptsPerEvent per event, the suite's fairness bound.
//     As in nginx, a reorder follows only an accept event that did not end
//     on EAGAIN (one accept, or a batch that reached its bound).
//   - Timers: nginx keeps the client_header_timeout in each worker's
//     timer tree; here the suite's reaper goroutine (connio.Reaper) shuts
//     a late connection down and its worker sees the end of input.
//   - Threads are locked goroutines whose Go P they need to return from a
//     system call; the harness gives the model one P per worker and a
//     spare, and each worker yields once per 5 ms (connio.Slice). Both are
//     Go's costs, not nginx's: without them the runtime's monitor thread
//     woke on the worker's CPU thousands of times a second, and the model
//     spent 1.47× nginx's CPU per request; with them 0.84×
//     (docs/findings.md, "Lean"). The system calls per request (a read
//     and a write, the wait amortised: 2.2 against nginx's 2.3) are the
//     pattern's.
//
// # Counters
//
// Stats.PerThread has a worker each: Events (handle-set events
// dispatched), Requests (served), Accepted (connections accepted,
// refused ones included; the connection balance across workers is
// computed from it) and, in Mutex mode, Promotions (rounds in which it
// won the lock and so led). Stats.Variant names the mode and settings, e.g.
// "accept=mutex multi_accept=off worker_conns=512 accept_delay=500ms".
// Stats.Counters has the event loop's (eventloop.Group.Stats: open_conns,
// rounds, reruns, rearms, stale_events) and the mode's:
//
//   - Mutex: mutex_taken, mutex_missed and rounds_sat_out (rounds in which
//     a worker won, lost, or did not try the lock), listener_adds and
//     listener_removes (registrations of the listening socket in a
//     worker's set, and removals);
//   - Exclusive: reorders (re-registrations of the listening socket);
//   - Mutex and Exclusive: empty_accepts, and wN_empty_accepts for worker
//     N: listener events on which accept found the backlog empty, because
//     another worker took the connection first (woken by the same
//     arrival, or running already with the listener ready in its set).
//
// # What the model guarantees
//
// A connection is served by the worker that accepted it, for its whole
// life, in order. A request that waits (blocking or CPU work) holds its
// worker and stalls that worker's other connections, and only those; the
// other workers keep serving theirs and keep accepting. How evenly
// connections spread over workers depends on the mode, and is what the
// model is there to show.
package acceptmutex
