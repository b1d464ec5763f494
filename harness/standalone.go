package harness

import (
	"fmt"
	"path/filepath"
	"strings"

	"concbench/internal/cpuset"
)

// Target is a configuration's server started by a command that drives it
// itself (concbench stages): a concbench model (with a chain's back end),
// real nginx or real asio, started as a run starts it.
type Target struct {
	t    target
	back *server  // a chain's back end, or nil
	sp   *spawner // the locked thread t was forked from; closed by Stop
}

// StartTarget starts configuration c's server as a run does, sized for
// workload w on the CPUs cpus (a CPU list; empty: unpinned), serving w's
// protocol; nginx's configuration, pid and logs go into dir/nginx. It
// returns once the server has answered a probe request. Its errors wrap
// ErrNotStarted where the server is not there to start (no nginx, no
// asio) or did not start. Size is what the server runs with.
func StartTarget(bin, dir string, c Config, w Workload, cpus string) (*Target, Size, error) {
	set, err := cpuset.Parse(cpus)
	if err != nil {
		return nil, Size{}, fmt.Errorf("harness: %w", err)
	}
	n := len(set)
	if n == 0 {
		if cur, err := cpuset.Current(); err == nil {
			n = len(cur)
		}
	}
	size := c.size(&w, n)
	if size.Err != "" {
		return nil, size, fmt.Errorf("harness: configuration %q: %s", c.Name, size.Err)
	}
	sp := newSpawner()
	tg := &Target{sp: sp}
	switch c.Model {
	case NginxModel:
		abs, err := filepath.Abs(filepath.Join(dir, "nginx"))
		if err != nil {
			sp.close()
			return nil, size, fmt.Errorf("%w: nginx: %v", ErrNotStarted, err)
		}
		conf := &nginxConf{Name: c.Name, Workers: max(size.Threads, 1), CPUs: set, Conns: w.Conns,
			Dir: abs, Base: strings.ReplaceAll(c.Name, "/", "_")}
		var ng *nginxServer
		if ng, err = startNginx(sp, conf, "127.0.0.1", c.Args); err == nil {
			tg.t = ng
		}
	case AsioModel:
		var a *asioServer
		if a, err = startAsio(sp, max(size.Threads, 1), set, "127.0.0.1", w.Protocol); err == nil {
			tg.t = a
		}
	default:
		args := serveArgs(&runConfig{cfg: c, wl: w, size: size, cpus: cpus})
		var backArgs []string
		if c.Backend != nil {
			backArgs = backendArgs(c.Backend, cpus)
		}
		var srv, back *server
		srv, back, err = startChain(sp, bin, args, c.Backend, backArgs, w.Protocol)
		tg.back = back
		if err != nil {
			if back != nil {
				back.stop()
			}
			sp.close()
			return nil, size, err
		}
		tg.t = srv
	}
	if tg.t == nil {
		sp.close()
		return nil, size, err
	}
	return tg, size, nil
}

// Addr is where the server listens.
func (t *Target) Addr() string { return t.t.address() }

// Pids are the processes whose costs are the server's: a model's one,
// nginx's master and workers, asio's one (not a chain's back end).
func (t *Target) Pids() []int { return t.t.pids() }

// Stop ends the server, then a chain's back end, and releases the thread
// they were forked from; the error describes an unclean end.
func (t *Target) Stop() error {
	err := t.t.stop()
	if t.back != nil {
		if berr := t.back.stop(); berr != nil {
			err = fmt.Errorf("%v; back end: %w", err, berr)
		}
	}
	t.sp.close()
	return err
}

// CPUQuota is a server CPU quota (Experiment.ServerCPUQuota) for a
// command that starts servers itself: a cgroup limited to a share of one
// CPU, removed by Close.
type CPUQuota struct{ q *cpuQuota }

// NewCPUQuota creates a cgroup limited to share of one CPU, enforced in
// periods of 10 ms, as a run's. It needs the cpu controller and root.
func NewCPUQuota(share float64) (*CPUQuota, error) {
	q, err := newCPUQuota(share)
	if err != nil {
		return nil, err
	}
	return &CPUQuota{q: q}, nil
}

// Place moves every process of pids, all its threads, into the cgroup.
func (q *CPUQuota) Place(pids []int) error { return q.q.place(pids) }

// String says what was set up.
func (q *CPUQuota) String() string { return q.q.desc }

// Close removes the cgroup once its processes are gone.
func (q *CPUQuota) Close() { q.q.close() }
