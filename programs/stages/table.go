package stages

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"concbench/harness"
)

// minorShare is the share of a configuration's samples under which a
// user stage joins "user: the rest" unless another configuration's share
// of it is larger.
const minorShare = 0.005

// kernelOrder is the kernel's and the runtime's stages in the table's
// order; the server's own stages follow, largest first.
var kernelOrder = []string{StageTCP, StageIRQ, StageSyscall, StageURing, StageFiles, StageSched, StageFutex, StageRuntime, StageBytes, StageLibc}

// writeTable prints the table: one column per configuration, the medians
// over its valid rounds with their range; what was left out under it.
func writeTable(w io.Writer, cfgs []harness.Config, by [][]*measurement) {
	cols := make([][]*measurement, len(by))
	var notes []string
	for i, ms := range by {
		for _, m := range ms {
			switch {
			case m.unavailable != "" || m.failure != "":
			case !m.valid:
				notes = append(notes, fmt.Sprintf("%s: a round left out, its load invalid: %s", m.name, strings.Join(m.reasons, "; ")))
			default:
				cols[i] = append(cols[i], m)
			}
		}
		if len(cols[i]) == 0 && len(ms) > 0 {
			why := ms[0].unavailable
			if why == "" {
				why = ms[0].failure
			}
			if why == "" {
				why = "no valid round"
			}
			notes = append(notes, fmt.Sprintf("%s: no column: %s", cfgs[i].Name, why))
		}
	}
	fmt.Fprintf(w, "\nWhere the time goes: medians [range] over the valid rounds; µs per request (share of the server's samples)\n\n")
	head := []string{""}
	for i, c := range cfgs {
		head = append(head, fmt.Sprintf("%s (%d of %d rounds)", c.Name, len(cols[i]), len(by[i])))
	}
	rows := [][]string{head, dashes(len(head))}
	stat := func(label string, f func(*measurement) float64, format string) {
		row := []string{label}
		for _, ms := range cols {
			row = append(row, spread(ms, f, format))
		}
		rows = append(rows, row)
	}
	per := func(m *measurement, v int64) float64 { return float64(v) / float64(max(m.requests, 1)) }
	cpu := func(m *measurement) float64 {
		a, _ := m.cpuNs(true)
		b, _ := m.cpuNs(false)
		return per(m, a+b) / 1e3
	}
	rate := func(m *measurement) float64 { return m.rate }
	stat("requests/s", rate, "%.0f")
	paired := func(label string, f func(*measurement) float64) {
		row := []string{fmt.Sprintf(label, cfgs[0].Name)}
		for _, ms := range cols {
			row = append(row, ratios(ms, cols[0], f))
		}
		rows = append(rows, row)
	}
	paired("  × %s, paired by round", rate)
	stat("CPU µs/req, every thread", cpu, "%.2f")
	paired("  × %s, paired by round", cpu)
	stat("  the server's threads", func(m *measurement) float64 { a, _ := m.cpuNs(true); return per(m, a) / 1e3 }, "%.2f")
	stat("  the other threads", func(m *measurement) float64 { a, _ := m.cpuNs(false); return per(m, a) / 1e3 }, "%.2f")
	stat("context switches/req, the server's threads", func(m *measurement) float64 { _, s := m.cpuNs(true); return per(m, s) }, "%.4f")
	stat("  the other threads", func(m *measurement) float64 { _, s := m.cpuNs(false); return per(m, s) }, "%.4f")
	withSamples := make([][]*measurement, len(cols))
	for i, ms := range cols {
		for _, m := range ms {
			if m.total > 0 {
				withSamples[i] = append(withSamples[i], m)
			}
		}
	}
	stages, rest := stageRows(withSamples)
	for _, st := range append(stages, "user: the rest") {
		row := []string{st}
		for _, ms := range withSamples {
			row = append(row, stageCell(ms, func(m *measurement) int64 {
				if st != "user: the rest" {
					return m.samples[st]
				}
				var n int64
				for _, r := range rest {
					n += m.samples[r]
				}
				return n
			}))
		}
		rows = append(rows, row)
	}
	samples := []string{"samples"}
	for _, ms := range withSamples {
		samples = append(samples, spread(ms, func(m *measurement) float64 { return float64(m.total) }, "%.0f"))
	}
	rows = append(rows, samples)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	if len(rest) > 0 {
		fmt.Fprintf(w, "\nuser: the rest: %s\n", strings.Join(rest, ", "))
	}
	for i, ms := range cols {
		if len(ms) > 0 && len(withSamples[i]) == 0 {
			notes = append(notes, fmt.Sprintf("%s: no stages: %s", cfgs[i].Name, ms[0].noStages))
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

// stageRows returns the stages that get a row, in the table's order,
// and the user stages gathered into "user: the rest".
func stageRows(cols [][]*measurement) (rows, rest []string) {
	share := map[string]float64{} // the largest median share of any column
	for _, ms := range cols {
		all := map[string]bool{}
		for _, m := range ms {
			for st := range m.samples {
				all[st] = true
			}
		}
		for st := range all {
			s := median(ms, func(m *measurement) float64 { return float64(m.samples[st]) / float64(m.total) })
			share[st] = max(share[st], s)
		}
	}
	for _, st := range kernelOrder {
		if _, ok := share[st]; ok {
			rows = append(rows, st)
		}
	}
	var own []string
	for st := range share {
		if slices.Contains(kernelOrder, st) {
			continue
		}
		if share[st] < minorShare {
			rest = append(rest, st)
		} else {
			own = append(own, st)
		}
	}
	slices.SortFunc(own, func(a, b string) int {
		if share[a] != share[b] {
			if share[a] > share[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	slices.Sort(rest)
	return append(rows, own...), rest
}

// stageCell is a stage's median µs per request and median share.
func stageCell(ms []*measurement, samples func(*measurement) int64) string {
	if len(ms) == 0 {
		return "-"
	}
	share := func(m *measurement) float64 { return float64(samples(m)) / float64(m.total) }
	us := func(m *measurement) float64 {
		a, _ := m.cpuNs(true)
		b, _ := m.cpuNs(false)
		return share(m) * float64(a+b) / float64(max(m.requests, 1)) / 1e3
	}
	return fmt.Sprintf("%.2f (%.1f %%)", median(ms, us), 100*median(ms, share))
}

// spread is the median of f over ms and its range.
func spread(ms []*measurement, f func(*measurement) float64, format string) string {
	if len(ms) == 0 {
		return "-"
	}
	vs := values(ms, f)
	s := fmt.Sprintf(format, median(ms, f))
	if len(vs) > 1 {
		s += fmt.Sprintf(" ["+format+", "+format+"]", vs[0], vs[len(vs)-1])
	}
	return s
}

// ratios is the median [range] over the rounds of f of a measurement
// of ms over f of base's measurement of the same round (rounds valid in
// both).
func ratios(ms, base []*measurement, f func(*measurement) float64) string {
	var rs []*measurement // carriers of the ratios, as rate
	for _, m := range ms {
		for _, b := range base {
			if b.round == m.round && f(b) > 0 {
				rs = append(rs, &measurement{rate: f(m) / f(b)})
			}
		}
	}
	return spread(rs, func(m *measurement) float64 { return m.rate }, "%.3f")
}

func values(ms []*measurement, f func(*measurement) float64) []float64 {
	vs := make([]float64, len(ms))
	for i, m := range ms {
		vs[i] = f(m)
	}
	slices.Sort(vs)
	return vs
}

// median is the median of f over ms (the mean of the middle two of an
// even count); 0 for none.
func median(ms []*measurement, f func(*measurement) float64) float64 {
	vs := values(ms, f)
	switch n := len(vs); {
	case n == 0:
		return 0
	case n%2 == 1:
		return vs[n/2]
	default:
		return (vs[n/2-1] + vs[n/2]) / 2
	}
}

func dashes(n int) []string {
	d := make([]string, n)
	for i := range d {
		d[i] = "---"
	}
	return d
}
