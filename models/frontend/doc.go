// Package frontend is a front-end communication server: the bound variant
// of Leader/Followers (Schmidt et al., section 10.1, "bound handle/thread
// associations"). It accepts client connections in either wire protocol,
// forwards each request over a few multiplexed TCP connections to a
// back-end concbench server (any model, serving the binary protocol), and
// answers the client with the back end's response, in order per client
// connection.
//
// Many threads share one upstream connection. A thread registers the
// response it expects before it sends its request, sends it, and joins
// the connection's bound thread pool: the leader reads responses off the
// connection; one that belongs to another thread it hands to that thread
// (specific notification: a futex word of that thread's own) and keeps
// leading; when its own comes it promotes a follower and returns with it.
//
// # Participants
//
// The paper's participants, as this code names them:
//
//   - Thread_Context: waiter, one per client connection thread, reused
//     for each of its requests: the upstream id it expects (upID), whether
//     the response has come (ready), the response (res), and the thread's
//     own condition, a futex.Parker (parker).
//   - Bound_LF_Thread_Pool: link, one per upstream connection, a monitor
//     object (mu, a futex.Mutex) holding leader_thread_ (leader), the
//     expected responses by id (pending) and the parked followers
//     (followers). expecting_response is link.register, send_request is
//     link.send, join is link.join, the leader's loop is link.lead, and
//     handle_event, parse_header and read_response_body together are
//     link.readOne. A link lives as long as its TCP connection; slot, one
//     per upstream connection of the configuration (or per thread, with
//     perthread), holds the link of the moment and dials the next when it
//     breaks (below, "Upstream failure").
//   - Reactor (the "wrapper facade for the multiplexed connection
//     stream"): none. The one handle is a blocking socket, and the leader
//     blocks in read(2) on it; with one handle per pool there is nothing
//     to demultiplex, and the kernel wakes exactly the reading thread.
//   - Client threads (the paper's worker threads that forward client
//     requests): one locked OS thread per client connection (serveConn,
//     running connio.ServeStream with clientConn as its service), like
//     models/threadperconn; Config.Threads caps them (default
//     DefaultThreads), and a client beyond the cap is answered status
//     unavailable (HTTP 503) and closed, counted as refused, as is a
//     client past Config.MaxConns (checked first, with its own reason).
//     The back end does the work: Config.Service is not used.
//
// # Thread states (Options.Handoff = Bound)
//
// A client thread with a request to forward finds its slot's link up or
// broken (slot.link):
//
//   - Down: the link is broken and the back-off since the last failed
//     dial has not passed, or another thread is dialling: the request is
//     answered status unavailable at once, with the reason, and the
//     thread returns to its client. (Dialling: the back-off has passed;
//     the thread dials the next link itself, and sends on it, or answers
//     unavailable with the dial's failure.)
//
// With its request upstream it is in one of three states:
//
//   - Sending: registered (link.register) and writing its request
//     (link.send, whole requests serialised by a futex mutex).
//   - Leader (link.lead): at most one per link, blocked in read(2) on the
//     link (a quarter of the upstream timeout at a time, then it checks
//     whether a response is overdue: link.overdue). For each response it looks up the waiter by id and removes it
//     from the table. Another thread's response is copied into that
//     waiter (res), marked ready and its thread unparked (a hand-off,
//     counted "handoffs"); the leader keeps reading. Its own (counted
//     "own_responses") ends its turn: it promotes the most recently
//     parked follower (LIFO, as models/leaderfollowers' default) and
//     returns to serve its client.
//   - Follower (link.join): parked on its own Parker until a leader hands
//     it its response (it returns) or promotes it (it leads).
//
// Down → done (answered at once); dialling → sending or → done; sending
// → leader (joins with no leader) or → follower; follower → leader
// (promoted) or → done (hand-off, or the link's failure); leader → done
// (own response, or the link's failure).
// No wake-up is lost: a waiter is registered before its request leaves,
// joins under mu, is marked ready under mu as it leaves the follower set
// (link.handOff, and link.fail for every waiter), and Parker keeps an
// Unpark that comes before Park. A thread whose response came before it
// joined returns at once, and the follower set holds only threads still
// waiting. Every leadership turn ends with the leader's own response, so
// a pool with followers always has a leader.
//
// # Comparison points
//
//   - Handoff = PerThread: every client connection thread dials an
//     upstream connection of its own on its first request and closes it
//     with the client connection. No multiplexing: the same link code,
//     with one member, so every response is its reader's own, there are
//     no hand-offs and no followers. UpstreamConns does not apply; the
//     back end sees one connection per client connection.
//   - Handoff = Queue: the unbound hand-off. Each of the UpstreamConns
//     slots has a reader thread of its own (slot.readLoop, locked) that
//     reads every response of its link (link.readLoop) and hands it to
//     its waiting thread through the table of expected responses and the
//     thread's one-slot mailbox (res, ready) with the same futex wake;
//     client threads only park.
//     Every response is a hand-off and costs a wake-up of a second thread.
//
// Client connection i uses slot i mod UpstreamConns (bound, queue).
//
// # Where Go and Linux differ from the paper
//
//   - Threads are goroutines locked to their OS threads
//     (runtime.LockOSThread), which exit still locked so that the runtime
//     destroys the thread; a thread's condition is a futex word
//     (internal/futex.Parker), not a condition variable with its mutex.
//   - The back end answers each connection's requests in order, one at a
//     time (every concbench model does, as HTTP/1.1 pipelining requires),
//     not out of order as the paper's back end may. So M upstream
//     connections let the back end work on at most M of the front end's
//     requests at once, responses on a link come in the order they were
//     sent, and a leader hands off exactly those responses that are older
//     than its own. The front end never relies on the order: it matches
//     responses by id.
//   - Ids: the paper's request ids are unique; clients' ids are not (each
//     client numbers its own). The front end rewrites each request's id to
//     a fresh upstream id, unique in the server and congruent to the
//     client's id modulo 64, and restores the client's id in the answer.
//     An OpWork body depends only on the id modulo 64 (wire.AppendBody),
//     so the back end's body is byte for byte the one the client's id
//     calls for; checksums are recomputed for the client's id.
//   - Upstream protocol: binary, whatever the clients speak (fixed 24-byte
//     response headers, so a leader can stream a long body). An HTTP
//     client's "Connection: close" is the front end's to honour; it is not
//     forwarded. The back end must serve --protocol binary; a back end that
//     answers anything else breaks the link (below).
//   - One request per client connection upstream at a time: a thread
//     runs its connection with connio.ServeStream, the request loop of
//     models/threadperconn, whose service is the clientConn: it forwards
//     the connection's pipelined requests one by one (clientConn.Do, a
//     two-way call each), and ServeStream writes their answers together
//     once every buffered request is answered. Order per client
//     connection holds by construction.
//
// # Memory per connection
//
// As in the other models (models doc, "Memory per connection"): a client
// connection holds its connio.Session — its input buffer (connio.In) and
// its output (connio.Out, bounded by Config.MaxPendingOutput) — a copy of
// one response body of at most wire.MaxInlineBody bytes, and the encoded
// upstream request (one request, released above connio.RetainLimit). A
// longer body is never held: the leader (or reader) streams it through the
// link's 16 KiB input buffer, relays it only if it is byte for byte the
// OpWork body the request asked for and its checksum matches, and the
// client's thread then sends it from the shared read-only table
// (wire.Response.Pattern), as a back end does. A long body that is anything
// else (which no concbench back end sends) is answered status internal
// (HTTP 500) with a reason and counted as "upstream_invalid". A link holds
// its 16 KiB buffer.
//
// # Upstream failure
//
// A link breaks when the back end closes or resets it, a read or write on
// it fails, it sends a frame the front end cannot use (malformed, or an
// id no thread expects, after which the stream cannot be trusted), or the
// upstream timeout passes (Options.UpstreamTimeout). Every request
// registered on it — the one being read and those in flight — is answered
// status unavailable (HTTP 503) with a one-line reason naming the failure,
// in its place in its client's order, and counted as "upstream_failed".
// No client is left waiting and no response is dropped silently. A
// response that arrives whole but fails its checksum is answered status
// internal and counted as "upstream_invalid" (the link stays up).
//
// A broken link is replaced, in every hand-off mode: the first request
// that finds its slot's link broken dials a new one on its own thread and
// is sent on it; while a dial fails, the next waits a back-off (1 ms,
// doubling with each failure up to 1 s), and requests meanwhile — or
// while another thread dials — are answered 503 at once with the reason.
// So clients get 503s only while their link is down, and are served again
// by the first request after the back end is back (with perthread, each
// client thread's own link follows the same rule). A queue reader waits
// for its slot's next link. A dial connects within a second (a lost SYN
// is sent again only after one) or fails; one that finds itself
// connected to itself (the back end's port in the ephemeral range,
// nothing listening) fails too. A broken link's descriptor is closed by
// its last user, so that no thread touches a descriptor number a new
// link may have been given.
//
// The upstream timeout (default DefaultUpstreamTimeout: twice the longest
// a request may ask the back end to work, plus 10 s) bounds how long a
// back end may say nothing while a response is due: since the oldest
// request on the link was sent, or since its bytes last came, whichever is
// later — the back end answers a link's requests in order, so each gets
// the whole timeout once the one before it is answered — and, while a
// response is being read, since its bytes last came. The link's reader
// (the leader, or the queue reader) blocks in read(2) at most a quarter
// of the timeout (SO_RCVTIMEO) and then looks, so a silent link breaks
// between one and one and a quarter timeouts after its deadline; a write
// that makes no progress for the timeout (SO_SNDTIMEO: a back end that
// reads nothing) breaks it too. The link's failure is then the timeout,
// counted as "upstream_timeouts", and its requests are answered 503.
//
// A client that disconnects while its request is upstream is noticed when
// its thread has the response (the link's stream is consumed in order, so
// the response is read and then dropped with the connection); the thread
// then closes the connection, counting the reset or truncation as the
// other models do.
//
// # Counters
//
// Stats.Counters: "handoffs" (responses a leader or reader gave to another
// thread), "own_responses" (responses read by the thread that expected
// them), "leader_turns" (times a thread became a link's leader),
// "upstream_conns" (upstream connections open now), "upstream_opened",
// "upstream_dial_failed", "upstream_failed", "upstream_invalid",
// "upstream_redials" (broken links replaced), "upstream_timeouts" (links
// broken by the upstream timeout) (above), and "conn_threads" (client
// connection threads now). Stats.PerThread has the acceptor and, with
// handoff queue, each slot's reader.
//
// # Guarantees
//
// Each client gets, for each request, in request order, the back end's
// status and body with its own id, or the front end's own error status
// with a reason (503 an upstream failure or timeout, or its link down;
// 500 a response that failed verification; 503 at the thread cap), at
// most about one and a quarter upstream timeouts after the back end's
// last sign of life. Close shuts down the listener,
// every client connection and every link (failing what is in flight),
// waits for every thread, and closes every descriptor.
//
// The model is Linux-only (blocking raw sockets, futexes), like
// models/threadperconn.
package frontend
