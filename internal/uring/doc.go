// Package uring is a small io_uring binding on golang.org/x/sys/unix: ring
// setup and mapping, submission and completion with the memory ordering the
// kernel's shared queues require, io_uring_enter, SQE preparation for the
// socket operations a server needs (accept and multishot accept, receive
// into a given or a provided buffer and multishot receive, send, close,
// cancellation, poll, timeout, no-op), registration of files and of
// provided-buffer rings, and a probe of the operations the kernel supports.
// No io_uring library can be fetched for this project, so it is written
// here from the kernel's interface (io_uring_setup(2), io_uring_enter(2),
// io_uring_register(2), include/uapi/linux/io_uring.h).
//
// # Availability
//
// io_uring may be missing (kernels before 5.1), disabled by the
// kernel.io_uring_disabled sysctl (1: only for CAP_SYS_ADMIN and the
// kernel.io_uring_group group; 2: for everyone), or hidden by a seccomp
// filter (container runtimes commonly return EPERM or ENOSYS). Available
// and New then return a *SetupError whose message names the errno, the
// sysctl's value, the likely reason and the kernel release, e.g.
//
//	uring: io_uring_setup: operation not permitted (kernel.io_uring_disabled=2: io_uring is disabled for every process; kernel 6.18.44)
//
// so that a caller can report why, rather than fall back silently.
//
// # Threads
//
// A Ring is used by one goroutine. Rings set up with SetupSingleIssuer
// (and SetupDeferTaskrun, which lets completion work run only when the
// issuer asks for events, batching it and sparing interrupts) must be used
// from one OS thread: the goroutine locks itself with runtime.LockOSThread
// before New and keeps the lock for the ring's life. Blocking waits go
// through unix.Syscall6, never RawSyscall, so the Go scheduler can give the
// waiting thread's processor to other goroutines.
//
// # Memory the kernel uses
//
//   - The rings and the SQE array are mapped from the ring descriptor and
//     unmapped by Close.
//   - Provided buffers (BufRing) are anonymous mappings outside the Go heap;
//     the Go runtime neither moves nor frees them. Close unregisters them
//     before unmapping.
//   - A Go buffer given to PrepSend or PrepRecv is referenced from the SQE
//     only by address; the caller keeps it referenced until the final CQE
//     (see the note in prep.go). Go's collector does not move heap
//     objects, so that suffices. Stack memory is never handed over.
//
// # Portability
//
// Everything but the portable types (SQE, CQE, Op, the flag constants,
// Probe, SetupError) is Linux-only; elsewhere New and Available return
// ErrUnsupported, so that packages using this one still build and vet.
package uring
