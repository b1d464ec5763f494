//go:build linux && (amd64 || arm64)

package ktrace

import "golang.org/x/sys/unix"

// syscallNumbers returns the number of every system call of
// results.SyscallKinds that exists on this architecture, by the name its
// tracepoint has (syscalls:sys_enter_<name>): the mechanisms point counts
// each kind with one raw_syscalls:sys_enter counter filtered on them.
// A name absent here does not exist on this architecture.
func syscallNumbers() map[string]uint64 {
	m := map[string]uint64{
		"epoll_pwait": unix.SYS_EPOLL_PWAIT, "epoll_pwait2": unix.SYS_EPOLL_PWAIT2,
		"epoll_ctl": unix.SYS_EPOLL_CTL,
		"read":      unix.SYS_READ, "readv": unix.SYS_READV, "recvfrom": unix.SYS_RECVFROM, "recvmsg": unix.SYS_RECVMSG, "recvmmsg": unix.SYS_RECVMMSG,
		"write": unix.SYS_WRITE, "writev": unix.SYS_WRITEV, "sendto": unix.SYS_SENDTO, "sendmsg": unix.SYS_SENDMSG, "sendmmsg": unix.SYS_SENDMMSG,
		"futex": unix.SYS_FUTEX, "futex_wait": unix.SYS_FUTEX_WAIT, "futex_wake": unix.SYS_FUTEX_WAKE, "futex_waitv": unix.SYS_FUTEX_WAITV, "futex_requeue": unix.SYS_FUTEX_REQUEUE,
		"io_uring_enter": unix.SYS_IO_URING_ENTER,
		"accept":         unix.SYS_ACCEPT, "accept4": unix.SYS_ACCEPT4,
	}
	for name, nr := range archSyscalls {
		m[name] = nr
	}
	return m
}
