package plots

import (
	"fmt"

	"concbench/results"
)

// DefaultLoad is the open-loop fraction of capacity the spectrum, the
// per-request cost figures and the per-thread figure are drawn at when
// Options.Load is 0: the run's measured fraction closest to it.
const DefaultLoad = 0.5

// Options say what the figures are drawn at.
type Options struct {
	// Load is the open-loop fraction of capacity for the spectrum,
	// per-request cost and per-thread figures; the run's measured fraction
	// closest to it is used. 0 means DefaultLoad.
	Load float64
	// Floor is the measured loopback floor (results.ChainFloor: zero
	// work, idle server) the latency figure adds to its M/M/c ideal; nil
	// means none.
	Floor *results.ChainFloor
}

// figureSpec is one figure of the report, in order, and what it needs
// (said in the report when the run has no data for it).
type figureSpec struct {
	name, title, needs string
	make               func(*Analysis) *Figure
	// applies, if set, says whether the figure belongs to the run at all:
	// a figure that does not is neither drawn nor listed as not drawn.
	applies func(*Analysis) bool
}

var figureSpecs = []figureSpec{
	{"latency", "Latency vs offered load", "measured open-loop points", latencyFigure, nil},
	{"spectrum", "Percentile spectrum", "latency histograms at the chosen load", spectrumFigure, nil},
	{"capacity", "Capacity", "measured capacity points", capacityFigure, nil},
	{"ctxsw", "Context switches per request", "server costs at the chosen load", ctxswFigure, nil},
	{"cpu", "CPU per request", "server costs at the chosen load", cpuFigure, nil},
	{"allocs", "Allocations per request", "server costs at the chosen load", allocsFigure, nil},
	{"mechanisms", "System calls per request by kind", "mechanisms point with counts (bench --mechanisms, which needs root: see the Mechanisms section)", mechanismsFigure, HasMechanisms},
	{"threads", "Per-thread share of events (Leader/Followers)", "Leader/Followers points with per-thread counts at the chosen load", threadsFigure, nil},
	{"connections", "Server costs against connections", "rate points measured at two or more connection counts", connectionsFigure, hasRatePoints},
	{"frontend", "Front end: who reads each response", "front-end points with hand-off counters at the chosen load", frontEndFigure, hasFrontEnd},
	{"threadsweep", "Thread sweep", "model measured at two or more thread counts (configurations named MODEL/threads=N, as in the threads profile)", threadSweepFigure, threadsSweep.applies},
	{"cores", "Cores", "model measured on two or more server CPU counts (configurations named MODEL/cpus=N, as in the cores profile; a server of one CPU, as on a 2-CPU machine, has one count only, so there is no speed-up to draw)", coresFigure, coresSweep.applies},
}

// Figures returns every figure the run has data for, in report order,
// and for each figure it cannot draw a sentence saying why.
func Figures(r *results.Run, pts []results.Point, opts Options) (figs []*Figure, omitted []string) {
	a := Analyze(r, pts, opts)
	return a.Figures()
}

// Figures is the package's Figures on a run already analysed.
func (a *Analysis) Figures() (figs []*Figure, omitted []string) {
	for _, s := range figureSpecs {
		if s.applies != nil && !s.applies(a) {
			continue
		}
		if f := s.make(a); f != nil {
			figs = append(figs, f)
		} else {
			omitted = append(omitted, fmt.Sprintf("%s: not drawn — the run has no %s.", s.title, s.needs))
		}
	}
	return figs, omitted
}
