package harness

import "syscall"

// sysProcAttr puts a server in its own process group, so that a Ctrl-C at
// the terminal interrupts the harness (which stops after the current
// point and quits the server) but not the server in mid-point; and has
// the kernel kill it if the harness dies (Pdeathsig; see spawner).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
