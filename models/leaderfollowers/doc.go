// Package leaderfollowers is the Leader/Followers model (Schmidt, Kircher,
// Buschmann, Pyarali, O'Ryan): a pool of locked OS threads that take turns
// waiting on one shared handle set, with an unbound association between
// threads and handles. The thread that detects an event processes it
// itself, so no request is ever handed from one thread to another: no
// queue, no allocation and no context switch between reading a request and
// replying to it.
//
// # Participants
//
// The pattern's participants, as this code names them:
//
//   - Handles: file descriptors — the listening socket, each connection,
//     and a timerfd that ends an accept backoff. A connection is
//     registered once, edge-triggered (userEvents), or with
//     handleset.Readable|handleset.OneShot under Options.Deactivation
//     Kernel; the listener and the timer are always one-shot.
//   - Handle Set: one handleset.Set (epoll) shared by the whole pool. The
//     listening socket is a handle in it like every connection; there is no
//     acceptor thread.
//   - Event Handler: handleset.EventHandler, whose HandleEvent is the hook
//     method; this package's handler interface adds bind, by which the
//     processing thread tells the handler whose counters to charge.
//   - Concrete Event Handlers: conn (a connection: its connio.Session reads,
//     decodes every complete request, runs the service and writes the
//     responses), acceptor (the listener: accepts a batch of connections and
//     registers each with its own conn), retryTimer (the backoff timer:
//     reactivates the listener).
//   - Thread Pool: Server's threads (one thread each) around pool, the
//     monitor object that records the leader and holds the followers.
//     join is pool.join, promote_new_leader is pool.promote (called by
//     thread.promote), deactivate_handle is conn.claim (or, with Kernel
//     deactivation and for the listener and the timer, done by the
//     kernel: see below), and reactivate_handle is conn.reactivateUser
//     (handleset.Set.Reactivate with Kernel), called by each concrete
//     handler at the end of its hook method.
//
// # Thread states
//
// Each of the Config.Threads threads (default DefaultThreads) is in one of
// three states:
//
//   - Leader (thread.lead): at most one thread, blocked in
//     handleset.Waiter.Wait with a waiter of one event, so that each
//     leadership turn takes exactly one event. On an event it promotes a
//     follower and becomes a processing thread.
//   - Processing (thread.run, the hook method): any number of threads,
//     each running the concrete event handler of the one event it
//     detected, concurrently with the leader and each other. When done it
//     rejoins (pool.join): it becomes the leader at once if there is none,
//     and a follower otherwise.
//   - Follower (inside pool.join): parked on a futex word until a leader
//     promotes it, whereupon it is the leader.
//
// Transitions: leader → processing (event detected, successor promoted);
// processing → leader (rejoin with no leader) or → follower (rejoin with a
// leader); follower → leader (promoted). A thread starts by joining, and
// leaves the cycle only when the server closes.
//
// # The (de)activation protocol
//
// A TCP socket is an iterative handle: two threads must never read or
// write it at once. The paper's leader calls deactivate_handle before
// promote_new_leader so that the next leader cannot detect the same handle
// again. By default a connection's handle is deactivated in user space
// (next section). With Options.Deactivation Kernel, and for the listener
// and the retry timer always, the handle is registered with EPOLLONESHOT,
// so the kernel
// disarms it in the same step in which epoll_wait reports its event, before
// epoll_wait returns and before any other thread can wait on the set: the
// deactivation is atomic with the dispatch. An explicit epoll_ctl
// (EPOLL_CTL_MOD with no events, handleset.Set.Deactivate) before promoting
// would achieve the same only by the ordering of the leader's steps, at the
// price of a system call per event on the leader's critical path — the
// successor waits for it to be promoted — and with no protection if two
// threads ever waited at once; with EPOLLONESHOT even a broken promotion
// (see the tests) cannot dispatch one handle twice. The handle stays
// disarmed while its thread processes it; the handler then reactivates it
// (EPOLL_CTL_MOD) with the interest its state needs — readable, or writable
// while responses wait for a slow client (back-pressure) — or unregisters
// and closes it. After reactivating, the handler touches nothing of the
// connection: the next event may already be with another thread.
//
// The kernel's reactivation costs one epoll_ctl per event, so three
// system calls per request (the re-arm, the read, the write) where nginx's
// dispatch makes two: with it the model serves 0.84–1.0× what nginx does
// on one thread, the gap growing with what a system call costs on the
// host (docs/findings.md, "Lean"). Deactivation in user space saves it.
// Go's costs are those of every model on locked threads: the runtime's
// entry and exit around each system call, its own threads, and the yield
// once per connio.SliceLength.
//
// # Deactivation in user space
//
// The paper's reactor is select-based: its handle set is the process's
// own, and deactivate_handle clears a bit in it, with no system call
// (ACE_TP_Reactor suspends a handler so). Options.Deactivation User, the
// default, keeps that protocol over epoll. Each
// connection is registered once, edge-triggered, for reading and writing
// (as nginx and asio register theirs), and carries an owner word
// (conn.own). The leader claims the word with a compare-and-swap before it
// promotes a follower (thread.lead): that is the deactivation, and it is
// atomic with the dispatch as EPOLLONESHOT's is, so two threads that ever
// waited at once still could not process one handle together (the tests
// break promotion to check it). An event for a handle that another thread
// owns — its bytes arrived while that thread processed it — is not
// dispatched: the leader marks the word and waits on (owned_skips). The
// owner reactivates by clearing the word: with no system call when its
// session drained the input (a short read or EAGAIN, no hang-up reported)
// and has nothing left to write, since bytes arriving after that read make
// a new edge; with an epoll_ctl re-arm, which has the kernel report the
// handle again if it is ready, when the word was marked, input was left
// unread (connio.MaxReadsPerEvent), output waits for room, or the event
// reported a hang-up (the end of input behind a short read is not
// reported twice). The re-arm follows the release, so it may reach a
// handle already another thread's, or closed: it can only add an event,
// which a free handle serves and an owned one marks. A new registration
// reports the handle writable at once; an event with nothing to read and
// nothing waiting to be written is released untouched, so that the
// session (and a lane's placement, which peeks at the first request) sees
// the connection first when its bytes arrive. The listener and the retry
// timer keep EPOLLONESHOT: their events are rare.
//
// What it changes: the common request costs a read and a write, nginx's
// two system calls, instead of three; an event that finds its handle owned
// costs a wasted dispatch and a re-arm (none with one thread, which never
// sees its own handle reported while it owns it). What it gives up: the
// kernel no longer guarantees the exclusion, the owner word does, and an
// event the kernel reported is dropped in user space rather than never
// reported. Kernel is ACE_Dev_Poll_Reactor's protocol and the one of the
// suite's Leader/Followers figures before user space became the default;
// the lean profile runs both.
//
// # Promotion orders
//
// Options.Promotion chooses whom the leader promotes (implementation
// activity 5.2). What each order does on Linux, and what it does not:
//
//   - LIFO: the most recently parked follower (a stack). The thread that
//     slept least has the warmest cache and is often not yet asleep, so its
//     wake-up is cheapest ("fresh work before stale"). Work concentrates
//     on few threads only when followers accumulate (an idle pool); when
//     nearly every event finds a single follower, each promotion wakes that
//     one and the events spread as under FIFO.
//   - FIFO: the longest-waiting follower (a ring). Work spreads evenly
//     across threads; each promotion usually wakes a thread from deep sleep.
//   - Priority: the follower with the lowest nice value in
//     Options.Priorities (a heap; the longest-waiting first among equals).
//     Each thread applies its own nice value with setpriority(PRIO_PROCESS,
//     tid, nice) from the locked thread before it joins; if that is not
//     permitted (a value below the process's without root or
//     CAP_SYS_NICE), Start fails with an error wrapping
//     ErrPriorityNotPermitted that says how to run it. It has two effects,
//     both about threads, none about requests: the most urgent thread leads
//     whenever it is a follower (it takes the largest share of the events),
//     and the kernel's scheduler (CFS) gives the processing threads CPU
//     time by their weights (nice 0 against 15 is 1024 to 36, about 28
//     to 1). The weights matter only while pool threads compete for a CPU
//     (a long request running while others lead and process on the same
//     CPU), not when each thread runs alone. No promotion reads the request's
//     priority field (wire.Request.Priority); lanes do (Options.Lanes).
//   - OS: all followers sleep on one shared futex word and a promotion
//     wakes one of them, whichever the kernel chooses, as with the paper's
//     condition variable. The woken follower takes the leader role under
//     the pool's lock; one woken without a role to take (another follower,
//     not yet asleep, took it first) goes back to sleep. On Linux the
//     kernel's choice is FIFO: a futex's waiters are queued on a priority
//     list (plist) in the futex's hash bucket with priority
//     min(normal_prio, MAX_RT_PRIO), so every thread that is not real-time
//     has the same priority whatever its nice value, and FUTEX_WAKE wakes
//     from the front (kernel/futex/core.c, __futex_queue, formerly
//     __queue_me in kernel/futex.c: "all RT-threads are woken first in
//     priority order, and the others are woken last, in FIFO order"). So
//     OS order is FIFO order by another mechanism; it departs from FIFO
//     only when a follower returns from its wait without a grant and waits
//     again at the queue's tail (os_rewaits), and it costs the grant
//     protocol. futex(2) promises no order, so TestPromotionOS first
//     measures the kernel's (a probe: threads wait on one word one after
//     another, each then woken alone) and checks the FIFO promotion order
//     where the kernel wakes the longest waiter first, and is skipped,
//     saying so, where it does not; the report's "Promotion orders"
//     section tests os against fifo on measured runs.
//   - OSVacant (os-vacant): OS as the paper's promote_new_leader has it.
//     The promotion leaves the role vacant (NO_CURRENT_LEADER) and wakes
//     one follower on the shared word; whichever thread joins first under
//     the pool's lock leads: the woken follower, or a processing thread
//     that finished its event and rejoined before the follower ran, which
//     then leads without parking (vacancy_rejoins counts these). A woken
//     follower that finds the role taken waits again (os_rewaits). The
//     follower stays counted among the followers until it takes the role.
//
// Where this departs from the paper: the paper's promotion order is a
// policy of the thread pool (LIFO for cache affinity, priority for
// real-time systems, or the condition variable's); here the "priority"
// order ranks threads, not requests, so it does not avoid priority
// inversions between requests — lanes do that, as TAO's thread pools
// with lanes do — and the implementation-defined order of the
// synchronizer (OS) is, on Linux, not unspecified but FIFO. And in OS
// order the role is reserved for the follower the kernel wakes: a
// processing thread that rejoins before that follower runs finds the
// role taken and parks, where the paper's promote_new_leader sets the
// leader to NO_CURRENT_LEADER and signals the condition, so that
// whichever thread comes first, the woken follower or a rejoining one,
// leads (and the other waits again). The reservation keeps the order the
// kernel's, at the price of a park and a wake-up that the paper's pool
// would spare the rejoining thread; OSVacant is the paper's pool, beside
// it in the variants profile (leaderfollowers/os-vacant), so that the
// report's "Promotion orders" section measures what the reservation
// costs.
//
// # The handle set's wait: one event or a ready set
//
// A leader's wait takes up to Options.Events ready handles (serve's
// --events, default DefaultEvents); the rest stay with the leader role as
// its ready set, and each next leader takes the next of them without
// waiting, one per turn, as ACE_TP_Reactor dispatches the rest of a
// select's ready set. The pattern is unchanged — one leader at a time,
// one event per turn, a promotion per event, every handle deactivated
// while a thread processes it — but a wait is a system call the pattern
// does not ask for per event. With --events 1 every leader waits for one
// event, as ACE's epoll reactor (ACE_Dev_Poll_Reactor) takes one per
// leader turn: with Kernel deactivation an epoll_wait per event beside
// the re-arm, the read and the write, four system calls per request at
// one thread, and 13–17 % less capacity on the same CPU
// (docs/findings.md, "Lean"). Every figure
// of this model measured before the ready set became the default
// (docs/findings.md names the commit) is with one event per wait.
//
// For LIFO, FIFO and Priority each follower parks on its own
// futex.Parker and the promoter unparks the one it picked; the follower
// set is guarded by a futex.Mutex held for a few loads and stores. Neither
// Go channels nor sync.Cond are used: on locked threads they cost several
// context switches per hand-off. Leadership is handed over under the lock
// (promote names the successor, or in OS order reserves the role for
// whichever follower takes the grant), so a rejoining thread cannot slip in
// between, except in OSVacant order, where slipping in is the point. A promotion that finds no follower leaves the pool without a
// leader, and the next thread to rejoin becomes leader without parking. No
// wake-up is lost: a follower joins the set under the lock and parks after
// releasing it; if it is promoted in between, the Parker keeps the permit
// and Park returns at once (in OS order, the word's value has changed and
// FUTEX_WAIT returns at once).
//
// # Priority lanes
//
// Options.Lanes splits the threads into priority lanes, as TAO's thread
// pools with lanes do, so that a priority means what the paper wants it
// for — fewer priority inversions — rather than a bias in promotion order:
//
//   - Each lane (lane) is a Leader/Followers pool of its own: its own
//     Handle Set (a handleset.Set), its own Thread Pool monitor (pool) and
//     its Lane.Threads threads, which lead, process and follow only there.
//     A high-priority connection's events never wait behind a low-priority
//     lane's leader or its processing threads.
//   - The lowest lane's handle set holds the listener and the retry timer,
//     and every new connection. On a connection's first event its handler
//     (conn.place) reads the request at the front of the socket with
//     MSG_PEEK — consuming nothing — and maps the connection to the lane
//     of that request's priority (wire.Request.Priority ≥ the lane's
//     MinPriority, the highest such lane). If that is another lane it
//     unregisters the handle from its set and registers it, armed, in the
//     other's; the handle is deactivated meanwhile (EPOLLONESHOT, or the
//     owner word, cleared before the new set holds the handle), so the
//     thread owns it and no event is lost or doubled: the data waiting
//     makes the new set report it at once. A connection whose first
//     segment holds no complete request stays in the lowest lane
//     (lane_undecided).
//   - The mapping is by connection, not by request: a connection is moved
//     once and then stays, so no request is handed from one thread to
//     another (Leader/Followers' point), and a connection's requests stay
//     in order with no reordering across threads. A request's later
//     priority changes nothing; clients put each priority class on
//     connections of its own (as TAO's clients use one endpoint per
//     priority, and as the load generator's streams do).
//   - The threads of every lane above the lowest run at a higher OS
//     priority, set by each thread on itself before it first joins:
//     SCHED_FIFO at real-time priority = lane index (Options.LaneSched
//     auto or fifo), where the process may (root, CAP_SYS_NICE or
//     RLIMIT_RTPRIO; a cgroup without real-time runtime refuses even
//     root), and nice −5 per lane otherwise (auto falls back, saying why;
//     nice asks for it). If neither is permitted, Start fails with
//     ErrPriorityNotPermitted. What was used is in Stats.Variant, e.g.
//     "promotion=lifo lanes=0:2,128:2 lane1=SCHED_FIFO/1
//     rt_budget=950000/1000000us", so in the server's info and every
//     result.
//   - The guard against starving the Go runtime's own threads (sysmon, GC
//     workers, the threads that run goroutines, which all stay
//     SCHED_OTHER) is the kernel's RT throttling, a bounded budget:
//     real-time threads get at most sched_rt_runtime_us of every
//     sched_rt_period_us on each CPU (950 000 of 1 000 000 µs by default),
//     the rest is left to normal threads. Start reads both values; SCHED_FIFO
//     is used only when they bound real-time threads below the whole period
//     (not with -1, unbounded, or unreadable), and the budget is recorded in
//     Stats.Variant. No watchdog is needed besides: a lane thread blocks in
//     epoll_wait or futex whenever it has no event, and a lane that keeps
//     its CPU busy is throttled by the kernel after the budget.
//
// The lowest lane's threads keep the process's policy and nice value.
// Lanes combine with every promotion order but Priority (whose nice values
// are per thread). Counters with lanes: lane<i>_conns (connections placed
// in lane i), lane<i>_requests (requests its threads served), lane_moves
// (connections moved out of the lowest lane), lane_undecided.
//
// # Accepting
//
// A listener event is one connio.AcceptBatch, the accept batch and error
// policy every readiness-driven model shares: it accepts up to
// connio.MaxAcceptsPerEvent connections, until accept would block,
// registers each with its Session, and reactivates the listener. When
// accept fails for lack of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
// ENOMEM) the listener stays deactivated, the error is counted as
// models.ErrAcceptBackoff, and the timerfd handle is armed to reactivate it
// after a delay that doubles from 1 ms to 1 s while the shortage lasts
// (reset by a successful accept). No thread sleeps during a backoff; the
// pool serves the open connections meanwhile. Another failure (EPERM from
// a firewall rule, say) is counted as models.ErrAccept and ends the batch;
// the reactivated listener reports the connections still waiting.
//
// # Guarantees to the service
//
//   - A handle is never dispatched to two threads at once (EPOLLONESHOT, or
//     the owner word, and reactivation only at the end of the hook method).
//   - At most one thread is the leader at any time. The package's tests
//     check this with an independent counter (leaderCheck, compiled in but
//     active only when the tests set checkLeaders).
//   - A connection's requests are read, served and answered by one thread
//     at a time, in order; no request changes thread between read and
//     reply. Pipelined requests read together are served back to back by
//     that thread.
//   - Memory per connection is bounded (connio): the input buffer holds at
//     most one maximal request, and a connection whose client does not read
//     is not read either once Config.MaxPendingOutput bytes wait for it.
//
// What it does not guarantee:
//
//   - Fairness across connections beyond connio's bound of reads per
//     event: a connection that keeps its socket full is re-armed and may be
//     reported again before a quieter one, as epoll orders them.
//   - Which thread serves a connection: consecutive events of one
//     connection may go to different threads (the association is unbound),
//     so the service must not keep per-connection state in thread-local
//     storage, and shared service state needs its own synchronization.
//   - Latency bounds under overload: when every thread is processing,
//     events wait in the kernel until a thread rejoins; a long request
//     holds its thread, and with it the connection, for its whole duration.
//   - Strict priority: Priority order and nice values bias, not preempt.
//     Lanes under SCHED_FIFO preempt the lower lanes on the same CPU, but
//     only within the RT throttling budget, and only for connections that
//     start with a high-priority request.
//
// # Counters
//
// Stats.PerThread has one entry per pool thread (role "pool", in thread
// order) with Events (events the thread detected as leader and processed),
// Requests (requests it served) and Promotions (times it was promoted from
// follower to leader; becoming leader on rejoin without parking is not a
// promotion). Every event follows exactly one promote, so once the last
// promoted thread has woken, the sum of Promotions plus
// no_follower_promotions (plus, in OSVacant order, vacancy_rejoins)
// equals the sum of Events.
// Stats.Counters:
//
//   - no_follower_promotions: promotions that found no follower and left
//     the pool without a leader until the next rejoin;
//   - accept_batches: listener events processed;
//   - accept_retries: backoff timer expiries (listener reactivations after
//     a shortage);
//   - open_conns: connections open now;
//   - followers: threads parked as followers now;
//   - stale_events: events dropped because their handle was unregistered
//     after the kernel queued them (handleset.Set.Stale);
//   - owned_skips (Deactivation User only): events a leader passed over
//     because another thread owned their handle (each makes its owner
//     re-arm the handle);
//   - promotions_with_choice: promotions made while two or more followers
//     waited (in OS order: counted when the woken follower takes the
//     role, against the followers waiting then);
//   - promoted_longest_waiting: of those, promotions of the follower that
//     had waited longest (since it last joined) — all of them in FIFO
//     order, none in LIFO order, and in OS order the measure of whether
//     the kernel woke the waiters FIFO;
//   - vacancy_rejoins (OSVacant order only): promotions whose vacant role
//     a rejoining processing thread took before the woken follower (which
//     then waited again, an os_rewait), what the paper's pool spares the
//     rejoining thread and OS order's reservation does not;
//   - os_rewaits (OS and OSVacant order only): followers that returned
//     from the futex wait with no grant or vacant role to take (woken
//     after another thread took it, or the word changed before they
//     slept) and waited again.
//
// The promotion-order counters are kept under the pool's lock, which the
// promoter holds anyway: a comparison of two sequence numbers per
// promotion (a scan of the followers in Priority and OS order, at most
// Threads of them).
//
// # Closing
//
// Close closes the pool (every parked follower wakes and exits, and a
// thread that rejoins exits instead), then the handle set (the leader's
// Wait returns handleset.ErrClosed), waits for every thread to exit — a
// processing thread finishes its event first; its reactivation then fails
// with ErrClosed — and finally closes every remaining connection, the
// listener and the timer. Threads exit while still locked, so the Go
// runtime destroys them, and their nice values with them.
//
// # Running it
//
// Each thread runs Go code between its system calls, and a thread returning
// from a system call needs a P: with GOMAXPROCS below the number of
// threads, a promoted follower can wait for the Go scheduler before it can
// lead. Measurements should set GOMAXPROCS to at least Threads + 1, or
// report the setting.
package leaderfollowers
