// Package threadperconn is the thread-per-connection model: one OS thread
// per connection doing blocking I/O on a raw socket. It is the floor that
// the other models are measured against at low load (no event
// demultiplexing, no hand-off: the kernel wakes exactly the thread whose
// socket has data) and the suite's correctness oracle.
//
// # Threads
//
//   - The acceptor: one locked OS thread blocked in accept4 on a blocking
//     listening socket. For each connection it starts a connection thread.
//   - Connection threads: a goroutine that locks itself to its OS thread,
//     then reads, serves and writes its connection with blocking system
//     calls (connio.ServeFD: connio.ServeStream on the descriptor) until the
//     connection ends. It exits while still locked, so the Go runtime
//     destroys the thread rather than returning it to its pool: a thread
//     lives exactly as long as its connection, as in the classic model.
//
// Config.Threads bounds the number of connection threads (default 1024).
// At the cap the acceptor still accepts, and refuses the new connection at
// once: it answers status unavailable (HTTP 503, request id 0, with a
// one-line reason and "Connection: close"), closes it, and counts
// models.ErrRefused ("refused" in the snapshot's errors and in every
// point's server errors). A client is told, never left hanging in the
// listen backlog until some connection ends — the model's nature is that
// it serves at most Threads clients at once; the cap makes that explicit.
// Config.MaxConns, every model's connection cap, is checked first and
// refuses the same way, with its own reason (--max-conns).
//
// Note: Go offers no direct way to create an OS thread; a new locked
// goroutine may run on an idle thread the runtime already has rather than a
// freshly created one. Thread creation cost is therefore not always paid per
// connection, which is the one way this model is cheaper than pthreads.
//
// # Guarantees
//
// A connection's requests are served in order by its own thread; no other
// thread touches its socket. A slow reader blocks only its own thread (in
// write), so its memory is bounded by the kernel's socket buffers plus
// Config.MaxPendingOutput. When accept fails with a descriptor or memory
// limit (EMFILE, ENFILE, ENOBUFS, ENOMEM) the acceptor backs off
// exponentially (1 ms to 1 s) instead of spinning, counting accept_backoff.
//
// Close shuts down the listener (waking the acceptor) and every connection
// socket (waking its thread), waits for all threads to exit, and closes
// every descriptor.
package threadperconn
