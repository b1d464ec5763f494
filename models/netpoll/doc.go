// Package netpoll is what a Go programmer would write instead of any of the
// patterns: a goroutine per connection over the standard net package, which
// multiplexes all connections onto Go's own netpoller (one epoll instance,
// edge-triggered, polled by the scheduler) and runs the goroutines on
// GOMAXPROCS OS threads.
//
// # Roles
//
//   - The accept loop: one goroutine blocked in (*net.TCPListener).Accept.
//   - Connection goroutines: one per connection, running the same request
//     loop as thread-per-connection (connio.ServeStream) over a *net.TCPConn.
//     A read that would block parks the goroutine, not its thread.
//
// There is no pool and Config.Threads has no meaning here (it is recorded
// but ignored; GOMAXPROCS decides the threads running Go code). Blocking
// work in the service is a blocking system call, so a goroutine in it holds
// its thread and the runtime starts another for the others, as it would for
// any blocking system call or cgo call.
//
// # Guarantees
//
// A connection's requests are served in order by its goroutine. A slow
// reader parks only its goroutine in Write; memory stays bounded by the
// socket buffers plus Config.MaxPendingOutput. Temporary accept errors
// (EMFILE, …) back off exponentially from 1 ms to 1 s, as net/http does.
// Close closes the listener and every connection, then waits for every
// goroutine it started.
package netpoll
