package harness

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ProfileDefaults returns the defaults of the named profile as one line,
// from the Experiment that Profile returns: repetitions, warm-up and
// window, loads, the workloads with their objectives, the objective
// search, the mechanisms point, the budget, the A/A twin and the server
// CPU quota. It is the
// "Defaults" line of the profile's section in docs/profiles.md, where a
// test checks it, so that a documented default cannot drift from the
// code. For thesis, each of ThesisParts is named.
func ProfileDefaults(name string) (string, error) {
	if name == "thesis" {
		var parts []string
		for _, e := range ThesisParts() {
			parts = append(parts, fmt.Sprintf("%s: %s", strings.TrimPrefix(e.Profile, "thesis/"), experimentDefaults(e)))
		}
		return strings.Join(parts, "; "), nil
	}
	e, err := Profile(name)
	if err != nil {
		return "", err
	}
	return experimentDefaults(e), nil
}

// experimentDefaults is ProfileDefaults for one experiment.
func experimentDefaults(e Experiment) string {
	var f []string
	f = append(f, fmt.Sprintf("%d repetitions", e.Repetitions))
	f = append(f, fmt.Sprintf("%s warm-up and %s windows", docDuration(e.Warmup), docDuration(e.Duration)))
	if len(e.Fractions) > 0 {
		f = append(f, "open loop at "+docList(e.Fractions, func(v float64) string { return docNumber(100*v) + " %" })+" of each configuration's capacity")
	}
	if len(e.Rates) > 0 {
		f = append(f, "open loop at "+docList(e.Rates, docNumber)+" req/s")
	}
	if len(e.RatesFromSlowest) > 0 {
		f = append(f, "equal load at "+docList(e.RatesFromSlowest, docNumber)+" of the slowest configuration's capacity")
	}
	var ws []string
	search := false
	for _, w := range e.Workloads {
		s := w.Name
		if s == "" {
			s = "the default workload"
		}
		if w.SLO != nil {
			search = true
			p := w.SLO.Percentile
			if p == 0 {
				p = DefaultSLOPercentile
			}
			s += fmt.Sprintf(" (p%s ≤ %s)", docNumber(p), docDuration(w.SLO.Bound))
		}
		ws = append(ws, s)
	}
	f = append(f, "workloads "+strings.Join(ws, ", "))
	if search {
		f = append(f, fmt.Sprintf("objective search: %d probes of %s warm-up and %s windows",
			e.SLOProbes, docDuration(e.SLOWarmup), docDuration(e.SLODuration)))
	}
	if e.Mechanisms > 0 {
		reps := "repetition"
		if e.Mechanisms > 1 {
			reps = fmt.Sprintf("%d repetitions", e.Mechanisms)
		}
		f = append(f, fmt.Sprintf("a mechanisms point after each equal-load point of the first %s, %s warm-up and %s windows",
			reps, docDuration(e.MechanismsWarmup), docDuration(e.MechanismsDuration)))
	}
	if e.Budget > 0 {
		f = append(f, "budget "+docDuration(e.Budget))
	}
	if e.Twin != nil {
		f = append(f, "A/A twin of "+e.Twin.Of)
	}
	if e.ServerCPUQuota > 0 {
		f = append(f, "every server under a CPU quota of "+fmtShare(e.ServerCPUQuota)+" of a CPU")
	}
	return strings.Join(f, " · ")
}

// docDuration writes d as the docs do: "200 ms", "1 s", "9 min".
func docDuration(d Duration) string {
	t := time.Duration(d)
	switch {
	case t == 0:
		return "0 s"
	case t%time.Minute == 0:
		return strconv.Itoa(int(t/time.Minute)) + " min"
	case t%time.Second == 0:
		return strconv.Itoa(int(t/time.Second)) + " s"
	case t%time.Millisecond == 0:
		return strconv.Itoa(int(t/time.Millisecond)) + " ms"
	}
	return t.String()
}

// docNumber writes v without trailing zeros.
func docNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// docList joins vs, each written by format.
func docList(vs []float64, format func(float64) string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = format(v)
	}
	return strings.Join(s, ", ")
}
