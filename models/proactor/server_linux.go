package proactor

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	"concbench/handleset"
	"concbench/internal/cpuset"
	"concbench/internal/uring"
	"concbench/models"
	"concbench/models/internal/connio"

	"golang.org/x/sys/unix"
)

// Server is a running Proactor server.
type Server struct {
	cfg      models.Config
	opts     Options
	addr     netip.AddrPort
	variant  string
	counters models.Counters
	procs    []*proactor
	reaper   *connio.Reaper // the header timeout (nil if disabled)
	limit    *connio.Limit  // the connection cap (Config.MaxConns), shared by every ring

	stop      atomic.Bool // Close was called; the dispatchers stop
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

var _ models.Server = (*Server)(nil)

// DefaultThreads returns the default number of dispatcher threads: the
// number of CPUs this process may run on (its affinity mask), since a
// dispatcher never blocks in I/O and so one per core keeps every core busy;
// see the package documentation.
func DefaultThreads() int { return cpuset.Count() }

// Start checks that io_uring is usable, listens on cfg.Addr with one
// SO_REUSEPORT socket per dispatcher thread, and starts the threads. Where
// io_uring is unavailable it fails with an error that names the reason
// (see uring.SetupError); it never falls back to another mechanism.
func Start(cfg models.Config, opts Options) (*Server, error) {
	cfg, err := cfg.Resolve(DefaultThreads())
	if err != nil {
		return nil, err
	}
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	multishot, err := probeKernel()
	if err != nil {
		return nil, fmt.Errorf("proactor: %w", err)
	}
	switch {
	case opts.Recv == RecvSingle:
		multishot = false
	case opts.Recv == RecvMultishot && !multishot:
		return nil, errors.New("proactor: multishot receive requested, but this kernel lacks it (Linux 6.0 or later)")
	}
	lfds, addr, err := listenGroup(cfg.Addr, cfg.Backlog, cfg.Threads)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, opts: opts, addr: addr, variant: variant(multishot)}
	for _, lfd := range lfds {
		w, err := handleset.NewWakeup()
		if err != nil {
			for _, p := range s.procs {
				p.wake.Close()
			}
			for _, fd := range lfds {
				unix.Close(fd)
			}
			return nil, fmt.Errorf("proactor: %w", err)
		}
		s.procs = append(s.procs, &proactor{s: s, lfd: lfd, wake: w, multishot: multishot,
			sh: s.counters.NewThreadShard("dispatcher")})
	}
	s.reaper = connio.NewReaper(&s.cfg, &s.counters)
	s.limit = connio.NewLimit(&s.cfg, "proactor")
	if err := connio.StartThreads(&s.wg, s.procs, (*proactor).run); err != nil {
		s.Close()
		return nil, fmt.Errorf("proactor: %w", err)
	}
	return s, nil
}

// probeKernel checks, on a throwaway ring, that io_uring is available and
// supports the operations the model uses, and reports whether it supports
// multishot receives: the probe lists operations, not their flags, so a
// multishot receive is tried on a socket pair.
func probeKernel() (multishot bool, err error) {
	if err := uring.Available(); err != nil {
		return false, err
	}
	r, err := uring.New(4, uring.Options{})
	if err != nil {
		return false, err
	}
	defer r.Close()
	probe, err := r.Probe()
	if err != nil {
		return false, err
	}
	for _, op := range []uring.Op{uring.OpAccept, uring.OpRecv, uring.OpSend, uring.OpAsyncCancel,
		uring.OpClose, uring.OpPollAdd, uring.OpTimeout} {
		if !probe.Supported(op) {
			return false, fmt.Errorf("uring: the kernel lacks IORING_OP_%v (%v)", op, probe)
		}
	}
	if _, err := r.NewBufRing(bufGroup, 1, 64); err != nil {
		return false, err
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("proactor: probe: %w", err)
	}
	defer unix.Close(sp[0])
	defer unix.Close(sp[1])
	r.GetSQE().PrepRecvMultishot(sp[1], bufGroup, 0)
	if _, err := unix.Write(sp[0], []byte{1}); err != nil {
		return false, fmt.Errorf("proactor: probe: %w", err)
	}
	if _, err := r.SubmitAndWait(1); err != nil {
		return false, err
	}
	var cqe [1]uring.CQE
	if r.Reap(cqe[:]) != 1 {
		return false, errors.New("proactor: probe: no completion for a receive of available data")
	}
	switch c := cqe[0]; {
	case c.Res == 1 && c.More():
		return true, nil
	case errors.Is(c.Err(), unix.EINVAL):
		return false, nil // the kernel rejects IORING_RECV_MULTISHOT
	default:
		return false, fmt.Errorf("proactor: probe: multishot receive completed with res %d, flags %#x", c.Res, c.Flags)
	}
}

// Addr returns the listening address.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Stats returns a snapshot of the counters; see doc.go for the model's own.
func (s *Server) Stats() models.Stats {
	st := models.Stats{Model: "proactor", Variant: s.variant, Threads: s.cfg.Threads}
	s.counters.Stats(&st)
	c := map[string]uint64{}
	for _, p := range s.procs {
		c["sqes_submitted"] += p.ring.Submitted()
		c["enter_calls"] += p.ring.Enters()
		c["completions"] += p.ring.Completed()
		c["recv_multishot_rearms"] += p.cnt.rearms.Load()
		c["partial_sends"] += p.cnt.partialSends.Load()
		c["buffers_exhausted"] += p.cnt.buffersExhausted.Load()
		c["plain_files"] += p.cnt.plainFiles.Load()
		c["accepts"] += p.cnt.accepts.Load()
		c["backpressure_pauses"] += p.cnt.pauses.Load()
	}
	st.Counters = c
	return st
}

// Close stops the server; see models.Server. Each dispatcher cancels its
// accept and every operation of every connection, waits for their
// completions, closes the connections, unregisters and unmaps its buffers
// and closes its ring and listening socket, then its thread exits.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reaper.Close() // before the dispatchers close their connections
		s.stop.Store(true)
		var errs []error
		for _, p := range s.procs {
			errs = append(errs, p.wake.Signal())
		}
		s.wg.Wait()
		for i, p := range s.procs {
			if p.err != nil {
				errs = append(errs, fmt.Errorf("proactor: dispatcher %d: %w", i, p.err))
			}
			errs = append(errs, p.wake.Close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
