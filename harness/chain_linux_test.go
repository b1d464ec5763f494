package harness

import (
	"strings"
	"testing"

	"concbench/internal/testenv"
	"concbench/results"
)

// TestRunChain runs a chain configuration (Config.Backend): the back end
// is started first and the front end is given its address; every point
// is measured on the front end, whose counters show the responses it
// relayed; both processes are gone when the run returns.
func TestRunChain(t *testing.T) {
	testenv.EndToEnd(t)
	exp := shortRun([]Config{{Name: "frontend/bound/m=2", Model: "frontend", Args: []string{"--handoff", "bound", "--upstream-conns", "2"},
		GOMAXPROCSPerConn: true, Backend: &Backend{Model: "netpoll"}}}, Workload{Workload: connsWorkload(8)})
	var pids []int
	dir, sum := runTest(t, exp, Options{onWindow: func(_ *results.Point, pid int) { pids = append(pids, pid) }})
	run, pts, _ := readPoints(t, dir)
	if sum.Points != 2 || len(pts) != 2 {
		t.Fatalf("summary %+v, %d points: want 2", sum, len(pts))
	}
	for _, w := range run.Warnings {
		if strings.Contains(w, "back end") {
			t.Errorf("run warning: %s", w)
		}
	}
	for i := range pts {
		p := &pts[i]
		if p.Status != results.StatusOK {
			t.Fatalf("%s %s: status %s: %s", p.Config.Name, p.Kind, p.Status, p.Failure)
		}
		checkMeasured(t, p)
		c := p.Server.Counters
		if got := c["handoffs"] + c["own_responses"]; got == 0 || c["upstream_failed"] != 0 {
			t.Errorf("%s %s: front-end counters %v: want relayed responses", p.Config.Name, p.Kind, c)
		}
	}
	for _, pid := range pids {
		if procState(t, pid) == "" { // "": running, neither gone nor dying
			t.Errorf("front end %d still running after the run", pid)
		}
	}
}
