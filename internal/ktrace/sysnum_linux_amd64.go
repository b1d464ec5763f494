package ktrace

import "golang.org/x/sys/unix"

// archSyscalls are the system calls of results.SyscallKinds that exist on
// this architecture and not on every one syscallNumbers serves.
var archSyscalls = map[string]uint64{"epoll_wait": unix.SYS_EPOLL_WAIT}
