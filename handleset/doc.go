// Package handleset is the shared handle set of the concurrency models: an
// epoll instance over raw, non-blocking file descriptors that are never
// registered with Go's netpoller, plus the raw listening and connected
// sockets the models serve on.
//
// # Roles (the Leader/Followers paper's vocabulary)
//
// A handle is a file descriptor (a listening socket, a connection, an
// eventfd). A Set is the handle set: a collection of handles that threads wait
// on for events. An EventHandler is the object registered with a handle; the
// thread that receives the event dispatches the handler's hook method.
//
// # The (de)activation protocol
//
// A TCP socket is an iterative handle: two threads must never read (or write)
// it at once. epoll is a concurrent handle set — many threads may call
// epoll_wait on one epoll instance — so the protocol of implementation
// activity 2 of the Leader/Followers pattern is what keeps an iterative handle
// from being dispatched to two threads:
//
//   - A handle registered with OneShot is deactivated by the kernel in the
//     same step in which it reports the event (EPOLLONESHOT). There is no
//     window in which a second waiter can receive an event for it.
//   - The thread that received the event owns the handle until it calls
//     Reactivate (EPOLL_CTL_MOD re-arms it, possibly with a different
//     interest, e.g. Writable while output is pending) or Unregister.
//   - Deactivate disarms a handle explicitly without waiting for an event,
//     for a holder that must silence a handle it did not just receive (for
//     example a reactor applying back-pressure).
//
// A handle registered without OneShot is level-triggered: every waiter may
// see its events. That is correct only where a single thread waits on the
// set (a dedicated reactor thread, or a worker that owns its set and its
// connections). Such a thread may register its connections EdgeTriggered
// instead, as nginx's workers do, to be told of a change once rather than
// of a condition on every wait. A handle that several sets hold (one
// listening socket in every worker's set) may be registered Exclusive in
// each, so that the kernel wakes one of their waiters, not all of them.
//
// # Concurrency contract
//
// Register, Deactivate, Reactivate, Unregister, Close and Waiter.Wait are
// safe to call from any number of threads at once. A Waiter (with its event
// buffer) belongs to one thread. After Wait returns an event for a OneShot
// handle, the waiter may assume that no other thread receives an event for
// that handle until it is reactivated. An event whose handle was unregistered
// (or unregistered and registered again under the same descriptor number)
// after the kernel queued it is dropped, never delivered to the new handler:
// each registration carries a generation number in the epoll data.
//
// Close wakes every thread blocked in Wait (through an eventfd that stays
// readable); each such Wait, and every later call, returns ErrClosed. Close
// waits for the calls in progress to leave before it closes the epoll and
// eventfd descriptors, so a descriptor number is never used after it may
// have been reused. Close does not close the registered handles: their owners
// do.
//
// Everything here is Linux-only; elsewhere the constructors return
// ErrUnsupported, so that the packages above still build and vet.
package handleset
