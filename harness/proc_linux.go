package harness

import "syscall"

// sysProcAttr puts a server in its own process group, so that a Ctrl-C at
// the terminal interrupts the harness (which stops after the current
// point and quits the server) but not the server in mid-point; and has
// the kernel send it pdeath if the harness dies (Pdeathsig; see
// spawner): SIGKILL for a concbench server, SIGTERM for nginx, whose
// master ends its workers on SIGTERM and would leave them serving if it
// were killed.
func sysProcAttr(pdeath syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: pdeath}
}
