package ktrace

// archSyscalls are the system calls of results.SyscallKinds that exist on
// this architecture and not on every one syscallNumbers serves: none
// (arm64 has no epoll_wait, only epoll_pwait).
var archSyscalls = map[string]uint64{}
