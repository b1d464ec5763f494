package leaderfollowers

import (
	"errors"
	"strings"
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
)

// rootPriorities returns nice values for n threads that only a privileged
// process may set (some are negative), spread so that priority order differs
// from both lifo and fifo.
func rootPriorities(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = []int{-5, 5, 0, -10, 10, -1}[i%6]
	}
	return p
}

func TestConformance(t *testing.T) {
	for _, order := range []Promotion{LIFO, FIFO, Priority, OS, OSVacant} {
		t.Run("promotion="+order.String(), func(t *testing.T) {
			if order == Priority {
				skipUnlessPrioritiesPermitted(t)
			}
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				opts := Options{Promotion: order}
				if order == Priority {
					opts.Priorities = rootPriorities(cfg.WithDefaults(DefaultThreads).Threads)
				}
				return startChecked(t, cfg, opts)
			})
		})
	}
	// One event per wait, every leader waiting (Options.Events 1, ACE's
	// epoll reactor), in every order whose hand-off differs (a chosen
	// follower, the kernel's choice, the vacant role); the cases above
	// run the default ready set.
	for _, order := range []Promotion{LIFO, OS, OSVacant} {
		t.Run("promotion="+order.String()+"/events=1", func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				srv, err := startChecked(t, cfg, Options{Promotion: order, Events: 1})
				if err == nil {
					if v := srv.Stats().Variant; !strings.Contains(v, "events=1") {
						t.Errorf("Variant %q does not record the events per wait", v)
					}
				}
				return srv, err
			})
		})
	}
	// Kernel deactivation (EPOLLONESHOT, a re-arm per event) in the
	// orders whose hand-off differs, with the ready set and without; the
	// cases above run the default, user-space deactivation.
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"promotion=lifo", Options{Promotion: LIFO}},
		{"promotion=os", Options{Promotion: OS}},
		{"promotion=os-vacant/events=1", Options{Promotion: OSVacant, Events: 1}},
	} {
		t.Run("deactivation=kernel/"+tc.name, func(t *testing.T) {
			modeltest.Run(t, func(cfg models.Config) (models.Server, error) {
				opts := tc.opts
				opts.Deactivation = Kernel
				srv, err := startChecked(t, cfg, opts)
				if err == nil {
					if v := srv.Stats().Variant; !strings.Contains(v, "deactivation=kernel") {
						t.Errorf("Variant %q does not record the deactivation", v)
					}
				}
				return srv, err
			})
		})
	}
}

// startChecked starts a server for the conformance suite and checks, when
// the test ends, that its pool never had two leaders at once.
func startChecked(t *testing.T, cfg models.Config, opts Options) (models.Server, error) {
	srv, err := Start(cfg, opts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { checkOneLeader(t, srv) })
	return srv, nil
}

// skipUnlessPrioritiesPermitted skips t if this process may not lower thread
// nice values (not root, no CAP_SYS_NICE).
func skipUnlessPrioritiesPermitted(t *testing.T) {
	t.Helper()
	skipUnlessPermitted(t, testConfig(t, 2), Options{Promotion: Priority, Priorities: []int{-5, 5}},
		"promotion=priority with negative nice values needs root or CAP_SYS_NICE")
}

// skipUnlessPermitted skips t, saying need, if this process may not give
// threads the priorities opts asks for (Start fails with
// ErrPriorityNotPermitted): it starts a server of cfg and opts to find
// out, and closes it. Any other failure fails t.
func skipUnlessPermitted(t *testing.T, cfg models.Config, opts Options, need string) {
	t.Helper()
	srv, err := Start(cfg, opts)
	if errors.Is(err, ErrPriorityNotPermitted) {
		t.Skipf("%s: %v", need, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkOneLeader fails t if srv ever had more than one thread acting as
// leader in one lane (a server without lanes has one).
func checkOneLeader(t *testing.T, srv *Server) {
	t.Helper()
	for _, l := range srv.lanes {
		if v := l.inv.violations.Load(); v != 0 {
			t.Errorf("lane %d: %d leadership turns began while another thread was leader (at most %d leaders at once)",
				l.idx, v, l.inv.maxActing.Load())
		}
	}
}
