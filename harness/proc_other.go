//go:build !linux

package harness

import "syscall"

// sysProcAttr has nothing to set where the harness cannot run anyway (the
// load generator needs epoll).
func sysProcAttr(syscall.Signal) *syscall.SysProcAttr { return nil }
