// Package models is the contract between the concurrency models and
// everything that drives them: a Server a model starts from a Config, and
// the Stats it reports.
//
// Each model lives in its own package under models/ and exports
//
//	func Start(cfg models.Config, opts Options) (*Server, error)
//
// where Options are the model's own settings (for example the promotion
// order of Leader/Followers). Start binds the listening socket, starts the
// model's threads and returns once the server accepts connections; Close
// stops it and returns when every thread it started has exited and every
// descriptor it opened is closed. The command cmd/concbench chooses models
// from an explicit table, not by registration.
//
// Every model must pass the conformance suite in models/modeltest under the
// race detector, for both wire protocols.
//
// Counting is shared: Counters holds one Shard per thread (or per
// connection, for models without a fixed thread pool), each written by one
// owner without locked instructions and summed only when Stats is called.
//
// # What long-waiting requests hold
//
// A request may ask the server to wait: blocking work (block=), a guarded
// withdrawal that waits for funds (timeout=), or long CPU work (cpu=). The
// codec caps each of these per request at its Limits' MaxWork (serve
// --max-work, default 10s); that cap is the bound the suite states. While
// such a request waits it holds what its model runs it on, so a few of
// them can stall a pooled model for up to MaxWork — the nature of each
// pattern, and part of what the results show:
//
//	model                 a waiting request holds                         requests that stall every client
//	threadperconn         its own connection's thread                     none (each connection has a thread, up to the cap)
//	netpoll               its goroutine, and in a system call an OS thread none (the runtime starts more threads)
//	leaderfollowers       one pool thread (Threads, default 4)            as many as the pool's threads
//	halfsynchalfreactive  one worker (Threads, default 4); the reactor    as many as the workers
//	                      reads on until the queue is full
//	activeobject          blocking and CPU work: the scheduler thread of  one per active object (Objects, default 2)
//	                      the connection's home object, so its shard; a
//	                      guarded withdrawal waits in the activation list
//	                      without holding the thread
//	proactor              its dispatcher thread and every connection on   one per dispatcher (default one per CPU: one
//	                      that thread's ring                              on a server pinned to a single CPU)
//	frontend              its client connection's thread, and its         one per upstream connection (--upstream-conns)
//	                      upstream connection: the back end answers a     with handoff bound or queue; none with
//	                      connection's requests in order                  perthread (the back end's own column applies)
//
// Where clients cannot be trusted, lower --max-work: it bounds how long
// such a stall lasts, not how many requests may cause one.
//
// # What is Go's
//
// Every model but netpoll runs its threads as goroutines locked to their
// OS threads, which block in system calls (epoll_wait, futex,
// io_uring_enter, read) and never park in the Go scheduler. Two costs of
// that are Go's in every such model alike, and are kept small the same
// way in all: a P per locked thread and one spare (registry.SpareProcs,
// in the sizing rule and serve's default), so that the runtime's monitor
// (sysmon) leaves a blocked thread's P alone; and a yield once per 5 ms
// from each thread's loop (connio.Slice), so that the monitor never takes
// a thread for a goroutine past its time slice. What remains is the
// yield itself (a few context switches per 5 ms per thread), the
// monitor's 10 ms sleeps, and the user-space path the models share
// (docs/findings.md, "Lean"). Every hand-off, lock and system call a
// pattern prescribes is the pattern's, and each model's doc says which
// it makes.
//
// # Memory per connection
//
// No client can make a server hold more than ConnMemoryBound bytes of heap
// for its connection, in every model:
//
//   - input: the connection's buffer holds undecoded bytes and grows only
//     as far as the largest request the codec's Limits allow (MaxHeader +
//     MaxPayload + 64 bytes: 1 MiB + 8 KiB by default); while requests are
//     small it stays at 4 KiB;
//   - output: responses wait in memory up to MaxPendingOutput
//     (--max-pending-output, default 256 KiB) plus the one response that
//     crossed it; past it the connection's requests are not read until its
//     client reads (back-pressure);
//   - large bodies cost nothing: an OpWork body over wire.MaxInlineBody
//     (4 KiB) is never materialised but sent from a shared read-only table
//     as the client drains its socket (wire.Response.Pattern), and it counts
//     towards MaxPendingOutput, so a client pipelining requests for 1 MiB
//     bodies and reading none holds one pending body's bookkeeping, not a
//     megabyte per request;
//   - requests in flight, in the models that hand requests to other
//     threads (Half-Sync/Half-Reactive's request objects, Active Object's
//     futures): at most MaxInFlight (64) per connection, admitted by one
//     rule in both only while the output they will produce — the body
//     each asks for plus ResponseOverhead (256 bytes) — and the output
//     pending stay below the output bound. Each holds a slot of the
//     connection's in-order ring, a record of at most InFlightRecord
//     (256) bytes, a copy of its payload, and at most one inline body
//     (Active Object keeps a future's body buffer, at most
//     wire.MaxInlineBody, for the connection's next request: one per
//     request it has had in flight at once): 64 × (8 + 256 + 4 KiB),
//     273 KiB, plus the payloads, at most.
//
// The conformance suite's Amplification case checks the bound with 64
// connections that each pipeline sixteen 1 MiB requests and read nothing.
//
// Across connections, a server's memory is bounded by MaxConns ×
// ConnMemoryBound (Config.MaxConns, serve --max-conns): past the cap a
// new client is refused at once — status unavailable (HTTP 503) with a
// one-line reason that names the cap, every model answering before it
// reads anything — and its connection is closed and counted as
// ErrRefused ("refused"), while the connections open keep their service
// (models/internal/connio.Limit; conformance case MaxConns). Without a
// cap (the default, 0) memory grows with the connections, up to the
// descriptor limit (ulimit -n); set one where clients cannot be trusted.
// The kernel's socket buffers come on top (net.ipv4.tcp_rmem,
// tcp_wmem).
//
// # Header timeout
//
// A connection whose request stays incomplete — part of a header or body
// arrived, the rest does not — for longer than Config.HeaderTimeout
// (serve --header-timeout, default 60 s like nginx's
// client_header_timeout; 0 disables) is shut down and closed, counted as
// the error kind header_timeout (and not also as truncated). A connection
// with no partial request (idle between requests, or connected and silent)
// is not timed. Every model enforces it the same way: a reaper goroutine
// (models/internal/connio.Reaper) looks at the connections every quarter
// of the timeout (10 ms to 1 s) and shuts the late ones down with
// shutdown(2); the model's own thread then sees the end of input wherever
// it waits and closes the connection by its usual path. The clock starts
// when a read leaves a request incomplete, so its cost is one clock read
// per such read, none for whole requests. The conformance case SlowHeader
// checks it for every model.
package models
