// Package acceptlock is Leader/Followers as the Cherokee web server
// practises it (cherokee/thread.c, its MULTI_THREAD step): a pool of
// locked OS threads, each with its own poll set and the connections it
// accepted; the leader is whichever thread holds the listeners' lock,
// and only the leader has the listening socket in its poll set. A
// connection is never handed to another thread: it lives on the thread
// that accepted it, keep-alive included, until it closes.
//
// # Participants
//
// Cherokee's names, and what the code calls them:
//
//   - thread_routine, the loop of each worker pthread: thread.run, one
//     goroutine locked to its OS thread per Config.Threads (default a
//     thread per CPU, DefaultThreads; Cherokee defaults to five per CPU,
//     server!thread_number, for its blocking handlers). Each thread is an
//     eventloop.Loop, the event loop of the models whose threads own the
//     connections they accept (nginx's workers, the partitioned server):
//     its own poll set (thd->fdpoll) and its connections.
//   - cherokee_thread_step_MULTI_THREAD and watch_accept_MULTI_THREAD, one
//     turn of a thread: thread.step. Its can_block — no active and no
//     polling connection — is a thread that owns no connection: Cherokee's
//     active list holds every connection of the thread, idle keep-alive
//     ones included (they leave it only when they close), so "idle" means
//     "owns nothing". srv->listeners_mutex is Server.listeners, a
//     futex.Mutex. An idle thread blocks on it (pthread_mutex_lock); a
//     thread with connections only try-locks (pthread_mutex_trylock) and,
//     if another thread leads, waits on its own connections
//     (cherokee_fdpoll_watch: eventloop.Loop.Round) and serves them. The
//     holder adds the listener to its own poll set (cherokee_fdpoll_add:
//     handleset.Set.Register), waits on listener and connections together
//     for up to fdwatch_msecs (Options.Watch, default 1 s) while still
//     holding the lock, accepts a burst if the listener is ready, removes
//     the listener (cherokee_fdpoll_del: Unregister) and releases the
//     lock, which wakes one blocked thread: the next leader. Then it
//     serves the connections of its own that were ready.
//   - accept_new_connection while cherokee_bind_accept_more, Cherokee's
//     adaptive burst: listenHandler.HandleEvent with acceptMore. In a
//     relearning round the leader accepts until the backlog is empty
//     (EAGAIN) and learns that count as accept_continuous_max; in the
//     rounds after it, it accepts up to that maximum (at least one), and
//     every round that finds the backlog empty first counts down to the
//     next relearning round, ten such rounds away. Relearning rounds stop
//     at connio.MaxAcceptsPerEvent (64) where Cherokee's do not (a storm
//     then relearns again in the next round). eventloop.Loop.Accept does
//     the accepting under the accept error policy every model shares.
//     Options.FixedBurst (serve --acceptlock-burst) is the model before
//     it learned: every leader accepts up to 64 until EAGAIN.
//   - thread_add_connection: the loop registers the connection in the
//     accepting thread's own poll set, level-triggered like Cherokee's
//     epoll fdpoll (EPOLLIN, no EPOLLET; eventloop.Level): one thread
//     waits on the set, so no other thread can receive its events.
//   - process_active_connections: the connection events of a round, each
//     served by the loop (connio.Session.OnReady: read, serve every
//     complete request, write), which changes what the poll set watches
//     only when that changes (conn_set_mode).
//   - thd->ownership, the mutex a thread holds while it processes its
//     connections: not needed, since only the owning thread ever touches
//     them (Cherokee's main thread may also step a worker's structures).
//
// # Thread states
//
//   - Leader: the holder of the listeners' lock, waiting on the listener
//     and its own connections (at most one thread; the lock guarantees
//     that the listener is in at most one poll set).
//   - Processing: serving the ready connections it owns, lock released.
//   - Follower: an idle thread (owning nothing) asleep on the lock's
//     futex; it becomes leader when the lock is released to it.
//   - Busy non-leader: a thread with connections whose try-lock failed,
//     waiting on its own connections; it competes for the lock again
//     after its wait (the "non-blocking follower").
//
// # Where Go or Linux differs from Cherokee
//
//   - The lock: CHEROKEE_MUTEX_FAST is a PTHREAD_MUTEX_NORMAL (or
//     ADAPTIVE_NP) glibc mutex; futex.Mutex is Drepper's three-state
//     futex mutex with a short spin before it sleeps. Neither hands the
//     lock off: Unlock wakes one sleeper (FUTEX_WAKE), which must take
//     the lock itself, and a running thread may take it first. Among
//     threads that are not real-time the kernel wakes a futex's sleepers
//     in FIFO order (see models/leaderfollowers, "the kernel's order").
//   - Only worker threads: Cherokee's main thread also steps with
//     dont_block (it never blocks on the lock); here every thread is a
//     worker.
//   - No per-thread connection cap (conns_max / thread_num,
//     thread_full_handler's 503 when every thread is full, the yield
//     after a full round): the server's cap is Config.MaxConns for every
//     model (connio.Limit), refused at once past it.
//   - No pending-work shortcut (pending_conns_num sets the wait to 0 for
//     pipelined requests): Session.OnReady serves every complete
//     request it has read, and a connection left with unread input
//     stays readable, level-triggered, so the next wait returns at once.
//   - A descriptor shortage on accept (EMFILE, ENFILE, ENOBUFS, ENOMEM)
//     pauses the accepting thread's loop for the back-off's delay: while
//     it lasts the thread, when it holds the lock, leaves the listener out
//     and waits on its own connections only, no longer than the pause.
//   - Timeouts: the header timeout of every model (connio.Reaper), not
//     Cherokee's per-connection timeouts and bogotime.
//   - One thread: Cherokee then runs cherokee_thread_step_SINGLE_THREAD,
//     with no lock and the listener always in the poll set; here a lone
//     thread still takes the lock and adds and removes the listener every
//     step (two epoll_ctl calls a step that Cherokee does not make).
//   - Each step serves the connections the wait reported ready, where
//     Cherokee's process_active_connections walks every connection of the
//     thread; keep-alive limits are not modelled (Cherokee turns
//     keep-alive off past conns_keepalive_max and closes a connection
//     after keepalive_max_requests, 500 by default: both rebalance a
//     long run across threads, which here keep their connections).
//
// # Stats
//
// PerThread lists the pool threads (role "pool") in order: Accepted, the
// connections the thread accepted and owned for their life (the report
// computes the balance across threads from it); Requests, the requests
// it served; Events, the events it handled (its connections' and, while
// it led, the listener's); Promotions, the rounds it led (held the
// listeners' lock). Counters: the event loop's (open_conns, rounds,
// reruns, rearms, stale_events; see eventloop.Group.Stats), lock_blocks
// (rounds begun by blocking on the lock: an idle thread), lock_busy
// (try-locks that found another leader), accept_batches (listener
// events, each a burst), most_owned (the most connections any one
// thread owns now), and, unless Options.FixedBurst, accept_max (the
// learned accept_continuous_max now) and accept_relearns (relearning
// rounds begun).
//
// # Guarantees
//
// A connection is served by the thread that accepted it, one event at a
// time, for its whole life; the listener is in at most one poll set. The
// service is called concurrently from every thread (it is safe for that).
//
// Not guaranteed, and part of what the model shows: balance. A leader
// takes a whole burst — up to the learned maximum, and in a relearning
// round up to 64 connections that arrived together go to one thread — and
// a thread that owns connections never blocks on the lock: it try-locks
// again as soon as its step ends, and the lock hands nothing off, so a
// busy leader often takes it again before the thread its unlock woke
// runs. Measured on two threads sharing one CPU (docs/findings.md), the
// learned burst (one connection) balances no better than the fixed one:
// the imbalance is the lock's, not the burst's. Accept latency: a leader waits on the
// listener for as long as it holds the lock, but between rounds the lock
// may be free while every thread is busy serving; a new connection then
// waits until some thread finishes its step and takes the lock — up to
// Options.Watch plus a step's work when every thread has connections.
// Blocking work (block=) holds its thread and so every connection that
// thread owns.
package acceptlock
