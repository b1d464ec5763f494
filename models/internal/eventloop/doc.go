// Package eventloop is the event loop of the models whose threads each own
// a handle set and the connections they accept, for the connections' whole
// life: nginx's worker processes (models/acceptmutex), Cherokee's threads
// (models/acceptlock) and the partitioned server, the Linux baseline of the
// ZygOS paper (models/partitioned).
// Connections never move between threads, so nothing is handed off and
// no lock guards a connection; what the models differ in is how a thread
// comes to accept, which each model's own code decides.
//
// A Group is the loops of one server and what they share: the
// configuration, the counters, the connection cap (connio.Limit) and the
// header-timeout reaper (connio.Reaper). A Loop is one thread's state: its
// handleset.Set, its connections (by descriptor, touched by its thread
// alone), the connections it must serve again without an event (posted),
// and its accept back-off. Loop.Round is one pass: wait on the set, let the
// model process the events (Dispatch), then serve the posted connections.
//
// # Edge- and level-triggered connections
//
// Options.Trigger says how a loop registers its connections:
//
//   - Edge (nginx): Readable|Writable|EdgeTriggered, once, never re-armed.
//     An event comes when bytes arrive or room frees up; the session reads
//     until the socket is drained or MaxReadsPerEvent reads, and in the
//     second case (connio.Session.Unread) the loop posts the connection to
//     be served again after its next wait, which then does not block —
//     nginx's ngx_posted_next_events. A response that fills the socket
//     leaves output pending, and room freeing up is an event, so
//     back-pressure needs no re-arming either.
//   - Level (the ZygOS baseline): registered Readable, level-triggered;
//     re-armed (EPOLL_CTL_MOD) only when the interest the session needs
//     changes (writable while output is pending, readable again after),
//     which a well-behaved client's connection seldom does. Bytes left
//     unread are reported again by the next wait.
//
// # What a loop guarantees
//
// A connection is served by one thread, its accepting thread, in order;
// the service's calls for it never overlap. A connection's thread can be
// held by another connection's long request (blocking or CPU work): in
// these models a waiting request stalls every connection of its thread,
// and only those (models package documentation, "What long-waiting
// requests hold"). A loop's connections are closed by Group.Close after
// its thread has exited.
package eventloop
