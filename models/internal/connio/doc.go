// Package connio is the per-connection request loop that the models share,
// so that protocol handling — decoding, the service call, encoding,
// pipelining, partial writes, back-pressure, error handling — is the same
// code in every model and only the threading differs.
//
// A Session holds one connection's state: an input buffer (In) that
// requests are decoded from, an output buffer (Out) of encoded responses not
// yet written, and the scratch space the service fills. Process serves every
// complete request buffered, in order. Two drivers move bytes:
//
//   - ServeStream, for models that block a thread (or goroutine) in read and
//     write: thread-per-connection, Go's netpoller, and the front end,
//     whose Service forwards each request to its back end (NewSessionWith);
//   - Session.OnReady, for models that learn of readiness from the handle
//     set and must never block in I/O: it reads what is there, serves it,
//     writes what the socket takes, and says what to wait for next. A
//     Service that finishes some requests later, on another thread
//     (AsyncService: the shared queue's ledger, served through strands),
//     suspends the session at such a request until the model resumes it
//     with the response (Session.Resume), so responses stay in order.
//
// Models that hand requests to other threads (Half-Sync/Half-Reactive,
// Active Object) use In, Out and Ring directly.
//
// The connection mechanics around the request loop are shared too, so that
// no model differs from another in them:
//
//   - accepting: AcceptBatch is one listener event of a readiness-driven
//     model (Leader/Followers, Half-Sync/Half-Reactive, Active Object):
//     at most MaxAcceptsPerEvent connections under one error policy, with
//     one exponential back-off (AcceptBackoff) on a descriptor or memory
//     shortage; AcceptAdmitted is such an event with every connection
//     admitted under the cap and counted before it is registered;
//     ListenPause re-arms the listener after it for models whose threads
//     wait on the handle set with a timeout. The blocking acceptors
//     (thread per connection, netpoll, the front end) apply the same
//     policy and back-off with AcceptBackoff.AcceptFailed; ThreadAcceptor
//     is the whole accepting thread of the models that give each
//     connection a thread (thread per connection, the front end).
//   - the connection cap: Limit is models.Config.MaxConns for every
//     model: a place taken per connection accepted (Limit.Admit, or
//     Limit.Accept, which also counts it) and given back when it closes
//     (Limit.Release); past the cap a new connection is answered with the
//     Refusal (status unavailable, HTTP 503, with the reason) and closed
//     by Refuse, counted as refused. Thread per connection and the front
//     end refuse past their thread caps with the same Refuse.
//   - the open connections: Conns is the table of the models whose
//     threads share one handle set (Leader/Followers, the shared queue):
//     registering a connection, and closing one (its timer, descriptor,
//     place and count) in one place; Fatal is a server's first fatal
//     error.
//   - starting threads: StartThreads starts the threads of the models
//     whose threads set themselves up before they serve
//     (Leader/Followers, the proactor) and returns the first that could
//     not.
//   - reading: In.ReadOnce is the read step of every readiness-driven
//     model (Session.OnReady, Half-Sync/Half-Reactive's reactor, Active
//     Object's I/O threads): one read, committed and counted, a truncated
//     request counted at end of input, and a ReadResult that says whether
//     the socket may hold more.
//   - handing requests off: Ring is the in-order ring of the models whose
//     requests other threads serve (Half-Sync/Half-Reactive, Active
//     Object): sequence numbers, slots, and one admission rule
//     (Ring.Admits) with one bound on requests in flight
//     (models.MaxInFlight) and one reservation per response (Reserve,
//     with models.ResponseOverhead). Both are defined in the models
//     package, beside the memory bound they enter (models.ConnMemoryBound).
//
// Why 64 requests in flight and 256 bytes per response: the two models
// had their own values — 64 and 256 B in Half-Sync/Half-Reactive, 32 and
// 160 B in Active Object — for no stated reason, so back-pressure differed
// between them, against the suite's premise that only the threading
// differs. 64 is the larger bound, so that neither model admits fewer
// pipelined requests than it did. 256 B is what a response's head can
// take: the longest HTTP head (the longest status line, Content-Type,
// Content-Length, a 20-digit X-Request-Id, X-Checksum and Connection:
// close) with a ledger result of 20 digits is 195 B, which 160 B
// did not cover (TestResponseOverheadCoversHeads checks every status of
// both protocols).
//
// Memory per connection is bounded: the input buffer grows only to hold one
// maximal request (the codec's limits), and a connection stops being read
// once MaxPendingOutput bytes of responses wait for its client (the slow
// reader) — or, in a model that hands requests off, once the responses its
// requests in flight will produce (Reserve) would take it past that bound,
// or models.MaxInFlight requests are in flight. An OpWork body larger than
// wire.MaxInlineBody is not built at all: the service returns it as a
// wire.Response.Pattern, and Out sends it from the codec's shared read-only
// table, window by window, as the socket takes it; it still counts towards
// MaxPendingOutput. Buffers larger than RetainLimit are released when they
// empty, so ten thousand idle connections do not pin megabytes each.
//
// A Session is owned by one thread at a time; the handle set's deactivation
// protocol (or the thread-per-connection structure) guarantees it.
package connio
