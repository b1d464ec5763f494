// Package partitioned is the partitioned server: a thread, a listening
// socket and a handle set per CPU, and connections that never move from
// the thread whose socket they arrived on. It is the distributed
// first-come-first-served (d-FCFS) counterpart of Leader/Followers' shared
// handle set, a centralized queue (c-FCFS): there, any idle thread takes
// the next ready connection; here, a ready connection waits for its own
// thread even while another is idle.
//
// It is the "Linux-partitioned" baseline of the ZygOS paper (Prekas,
// Kogias, Bugnion, SOSP 2017), built as that paper's Linux servers build
// it (ix-project/servers, common-linux.c, with
// CONFIG_REGISTER_FD_TO_ALL_EPOLLS 0): one thread per CPU of the process's
// affinity mask, each with its own SO_REUSEPORT listening socket bound to
// the one port and its own epoll set; a connection accepted is added to
// the accepting thread's set only; connections are registered
// level-triggered for input; a wait returns one event (CONFIG_MAX_EVENTS
// 1), and a listener event accepts one connection. The paper's other Linux
// baseline, "Linux-floating", adds every connection to every thread's set
// (level-triggered, without EPOLLEXCLUSIVE) and lets a per-connection
// try-lock decide which woken thread serves it; ZygOS itself partitions
// and then steals work. The shape it measures: as service times disperse
// (fixed, exponential, bimodal), the partitioned server's tail latency at
// a given load grows far faster than a single queue's.
//
// # Participants
//
//   - A thread per CPU (Config.Threads, default DefaultThreads): a locked
//     OS thread running eventloop.OwnListener.Run over its
//     eventloop.Loop — the baseline's tcp_thread_main.
//   - Its listening socket: one of a handleset.ListenGroup, all on the
//     port the first bound (Addr), registered in its set for good
//     (eventloop.OwnListener); the kernel's hash of a connection's
//     addresses chooses the socket, and so the thread.
//   - Its handle set: the loop's handleset.Set, holding its listening
//     socket and its connections, waited on with MaxEvents 1.
//   - A connection: registered readable, level-triggered
//     (eventloop.Level), served by connio.Session — the baseline's
//     drive_machine — and re-armed only when it must wait for room to
//     write (back-pressure) or can read again.
//
// # The same mechanism as acceptmutex's reuseport mode, and not
//
// Accepting is nginx's listen … reuseport, models/acceptmutex with
// Options.Accept ReusePort, and this package shares its code
// (handleset.ListenGroup, eventloop.OwnListener, eventloop.Loop). It
// differs where ZygOS's baseline differs from nginx: connections are
// level-triggered and re-armed on a change of interest, not edge-triggered
// and registered once; a wait returns one event, not up to 512; and a
// thread has no slots of its own (nginx's worker_connections): only the
// server's cap, Config.MaxConns, refuses connections.
//
// Where it differs from the baseline's code: the request loop is the
// suite's (pipelining, partial writes, back-pressure; the baseline's spin
// server answers one small request at a time and drops a response its
// socket cannot take); an accept that runs out of descriptors backs off
// under the suite's one policy (connio.AcceptBatch) where the baseline
// exits; and the threads are goroutines locked to OS threads, the first
// not being the process's main thread.
//
// # Thread roles and states
//
// Every thread has the one role "thread" (Stats.PerThread): it waits on
// its set, then accepts or serves the one connection reported. No thread
// ever waits for, wakes or hands anything to another.
//
// # Counters
//
// Stats.PerThread has a thread each: Events, Requests and Accepted (the
// connection balance across threads is computed from it). Stats.Variant is
// "trigger=level events=1". Stats.Counters are the event loop's
// (eventloop.Group.Stats): open_conns, rounds (waits), reruns (0 here:
// level-triggered connections are never posted), rearms (re-registrations
// with another interest) and stale_events.
//
// # What the model guarantees
//
// A connection is served by the thread that accepted it, for its whole
// life, in order. A request that waits (blocking or CPU work) holds its
// thread and every connection the hash sent to it, however idle the other
// threads are: the cost of partitioning the model is there to show.
package partitioned
