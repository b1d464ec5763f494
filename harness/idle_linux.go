package harness

import (
	"errors"
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"

	"concbench/internal/sysstat"
)

// idleConns are a point's idle connections (Workload.Idle) and the
// server that holds them.
type idleConns struct {
	srv *server
	fds []int
}

// idleHeadroom is the descriptors the harness keeps for everything but the
// load's and the idle connections (as loadgen's own headroom).
const idleHeadroom = 64

// openIdle starts the idle connections' server — netpoll, from the same
// binary, on the server CPUs: another process on the measured server's
// CPUs, so that the point shows what the connections cost the machine,
// not what the measured server does with them — and opens n connections
// to it with blocking connect(2) from this process, outside Go's
// netpoller, never to be used. The caller closes them (close) after the
// point. It fails before opening anything if this process's descriptors
// cannot hold them beside the load's conns.
func (r *runner) openIdle(rc *runConfig, n int) (*idleConns, error) {
	soft, hard, err := sysstat.RaiseNoFile()
	if need := uint64(rc.wl.Conns + n + idleHeadroom); soft != unix.RLIM_INFINITY && need > soft {
		return nil, fmt.Errorf("%d idle and %d load connections need about %d descriptors, and the harness may open %d (RLIMIT_NOFILE soft limit; hard limit %d; raising it: %v): raise the hard limit (ulimit -Hn) and run again",
			n, rc.wl.Conns, need, soft, hard, err)
	}
	sink := runConfig{cfg: Config{Model: "netpoll"}, wl: rc.wl, cpus: r.exp.ServerCPUs}
	srv, err := startServer(r.sp, rc.bin, serveArgs(&sink), rc.wl.Protocol)
	if err != nil {
		return nil, fmt.Errorf("the idle connections' server: %w", err)
	}
	ic := &idleConns{srv: srv}
	ap, err := netip.ParseAddrPort(srv.addr)
	if err != nil {
		ic.close()
		return nil, fmt.Errorf("the idle connections' server's address %q: %w", srv.addr, err)
	}
	var sa unix.Sockaddr
	family := unix.AF_INET
	if ap.Addr().Is4() {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	for i := range n {
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			for {
				err = unix.Connect(fd, sa)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
			if err != nil {
				unix.Close(fd)
				err = os.NewSyscallError("connect", err)
			}
		} else {
			err = os.NewSyscallError("socket", err)
		}
		if err != nil {
			ic.close()
			return nil, fmt.Errorf("idle connection %d of %d to %s: %w", i+1, n, srv.addr, err)
		}
		ic.fds = append(ic.fds, fd)
	}
	return ic, nil
}

// close closes the idle connections and stops their server; an unclean
// stop is returned.
func (ic *idleConns) close() error {
	for _, fd := range ic.fds {
		unix.Close(fd)
	}
	ic.fds = nil
	return ic.srv.stop()
}
