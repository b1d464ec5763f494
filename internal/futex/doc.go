// Package futex wraps the Linux futex system call for the thread-level
// synchronizers the concurrency models need: a one-waiter Parker (a follower's
// private wake-up word), a shared Word on which many threads sleep and the
// kernel chooses whom to wake, and a Mutex/Cond pair for monitor objects.
//
// All of them block the calling OS thread in the kernel through a normal
// (non-raw) system call, so a goroutine locked to its thread sleeps without
// involving the Go scheduler's park/ready hand-off. Go channels and sync.Cond
// on locked goroutines cost 5–7 context switches per hand-off (measured on
// a 2-vCPU VM with a ping-pong of two locked goroutines); a futex costs one.
//
// Every futex word must live in heap memory that is never moved: callers
// allocate the types of this package with new or inside heap-allocated
// structs, never as copied values (each type has a noCopy guard for vet).
//
// On systems other than Linux the constructors still work but every blocking
// operation panics with ErrUnsupported: the models that use this package are
// Linux-only and refuse to start elsewhere.
package futex
