package plots

import (
	"fmt"
	"slices"
	"strings"

	"concbench/results"
)

// modelFrontEnd is the front end's model name (models/frontend).
const modelFrontEnd = "frontend"

// perRequestCounter is the metric "the model counter name, per request
// the server completed in the window" (the counters are deltas over the
// window, results.ServerCost.Counters).
func perRequestCounter(name, label string) results.Metric {
	return results.Metric{Name: name + "_per_req", Label: label, Unit: name + "/req",
		Value: func(p *results.Point) (float64, bool) {
			if p.Status != results.StatusOK || p.Server.Requests == 0 {
				return 0, false
			}
			v, ok := p.Server.Counters[name]
			if !ok {
				// A counter that did not move in the window is left out of
				// the deltas; the model has it if it has an end value.
				_, ok = p.Server.CountersAtEnd[name]
			}
			return float64(v) / float64(p.Server.Requests), ok
		}}
}

var (
	handoffsPerReq = perRequestCounter("handoffs", "hand-offs to another thread per request")
	ownPerReq      = perRequestCounter("own_responses", "responses read by their own thread per request")
)

// hasFrontEnd says whether the run has a front-end configuration (the
// chain profile): only then is the front end's figure drawn or listed.
func hasFrontEnd(a *Analysis) bool {
	return slices.ContainsFunc(a.Configs, func(c results.ModelConfig) bool { return c.Model == modelFrontEnd })
}

// frontEndFigure shows, per front-end configuration at the chosen load,
// who read each response off the multiplexed connections — a hand-off to
// the thread that expected it, or that thread itself (the bound pool's
// point) — beside the front end's context switches and CPU per request,
// so that the cost of a hand-off can be read across hand-off modes and
// numbers of upstream connections. Configurations of other models have no
// such counters and no bars here.
func frontEndFigure(a *Analysis) *Figure {
	if !a.HasLoad {
		return nil
	}
	pick := func(name string) *results.Group {
		if i := slices.IndexFunc(a.Configs, func(c results.ModelConfig) bool { return c.Name == name }); i < 0 || a.Configs[i].Model != modelFrontEnd {
			return nil
		}
		return a.AtLoad(name)
	}
	title := "Front end: who reads each response, and what it costs"
	f, bp, excluded := barFigure(a, "frontend", fmt.Sprintf("%s, at %s", title, a.loadTitle()), fmt.Sprintf("open %.2f", a.load), pick, []barPanel{
		{metric: handoffsPerReq, title: "hand-offs", axis: "hand-offs / request"},
		{metric: ownPerReq, title: "own responses", axis: "own responses / request"},
		{metric: results.CtxswPerReq, title: "context switches", axis: "context switches / request"},
		{metric: results.CPUPerReq, title: "CPU", axis: "µs / request"},
	})
	if f == nil {
		return nil
	}
	vals := bp.vals
	var parts []string
	for i, v := range vals[0] {
		if !v.ok || !vals[2][i].ok || !vals[3][i].ok {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s hand-offs, %s ctxsw, %s µs CPU", v.cfg.Name,
			TrimFloat(v.agg.Stats.Median), TrimFloat(vals[2][i].agg.Stats.Median), TrimFloat(vals[3][i].agg.Stats.Median)))
	}
	f.Caption = fmt.Sprintf("Per front-end configuration at %s (medians of the valid repetitions, per request the front end served): "+
		"responses handed by a leader or reader to the thread that expected them, responses read by that thread itself, "+
		"and the front end's context switches and CPU (the back end's are not included). %s.",
		a.LoadText(), strings.Join(parts, "; ")) + excludedCaption(excluded)
	return f
}
