package plots

import (
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/results"
)

// frontEndRun is a made-up chain run at one open load, 6 repetitions:
// "bound" hands a tenth of its responses to other threads, "queue" all of
// them and pays a context switch more per request, "perthread" none (its
// hand-off counter never moves, so it has no delta, only an end value);
// "netpoll" has no hand-off counters.
func frontEndRun() (*results.Run, []results.Point) {
	r := &results.Run{ID: "frontend-test", Profile: "chain"}
	type cfg struct {
		name, model     string
		handoffs, ctxsw float64
	}
	cfgs := []cfg{{"frontend/bound/m=1", modelFrontEnd, 0.1, 4}, {"frontend/queue/m=1", modelFrontEnd, 1, 5},
		{"frontend/perthread", modelFrontEnd, 0, 3}, {"netpoll", "netpoll", 0, 2}}
	var pts []results.Point
	for _, c := range cfgs {
		mc := results.ModelConfig{Name: c.name, Model: c.model}
		r.Configs = append(r.Configs, mc)
		for rep := range 6 {
			j := jitter(rep)
			p := results.Point{Run: r.ID, Config: mc, Kind: results.KindOpen, Fraction: 0.5, OfferedRatePerS: 5000,
				Repetition: rep, Status: results.StatusOK, Workload: results.Workload{Protocol: "http", Conns: 64},
				Load:   &loadgen.Result{Valid: true, Latency: loadgen.Summary{Count: 10000, P50Ns: 50_000, P99Ns: 400_000}},
				Server: results.ServerCost{Requests: 10000, CPUNsPerRequest: 40e3 * j, CtxswPerRequest: c.ctxsw * j}}
			if c.model == modelFrontEnd {
				h := uint64(10000 * c.handoffs)
				p.Server.Counters = map[string]uint64{"handoffs": h, "own_responses": 10000 - h}
				p.Server.CountersAtEnd = map[string]uint64{"handoffs": 2 * h, "own_responses": 2 * (10000 - h)}
				if h == 0 {
					delete(p.Server.Counters, "handoffs") // unmoved: no delta, only an end value
				}
			}
			pts = append(pts, p)
		}
	}
	return r, pts
}

// TestFrontEndFigure checks that a chain run gets the front end's figure,
// with each front-end configuration's hand-offs and costs in its caption
// and no bar for a model without the counters, and that a run without a
// front end neither draws it nor lists it as missing.
func TestFrontEndFigure(t *testing.T) {
	r, pts := frontEndRun()
	f := frontEndFigure(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no front-end figure for a chain run")
	}
	checkCaption(t, f,
		"frontend/bound/m=1 0.1 hand-offs, 3.98 ctxsw, 39.8 µs CPU", // medians: jitter 0.97..1.02
		"frontend/queue/m=1 1 hand-offs, 4.97 ctxsw, 39.8 µs CPU",
		"frontend/perthread 0 hand-offs, 2.98 ctxsw, 39.8 µs CPU",
	)
	if strings.Contains(f.Caption, "netpoll") {
		t.Errorf("caption %q names netpoll, which has no hand-off counters", f.Caption)
	}
	checkRenders(t, f, "svg")
	other, otherPts := connectionRun()
	figs, omitted := Figures(other, otherPts, Options{})
	checkNotDrawn(t, figs, "frontend")
	checkNotListed(t, omitted, "Front end")
}
