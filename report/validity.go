package report

import (
	"fmt"
	"slices"
	"strings"

	"concbench/loadgen"
	"concbench/plots"
	"concbench/results"
)

// Reasons a point is not valid that are not load-generator checks: its
// status, or a measurement without a verdict.
const (
	reasonFailed      = "failed"
	reasonUnavailable = "unavailable"
	reasonNoVerdict   = "no-verdict"
	// reasonSLOInvalid is a latency-objective search's result that a
	// probe's generator-invalid verdict spoiled (results.SLOResult.Invalid).
	reasonSLOInvalid = "slo-generator"
)

// reasonMeanings explain, in one sentence each, the codes of the validity
// table that are not the load generator's checks (loadgen.Check.Meaning
// explains those): point statuses that are not valid either.
var reasonMeanings = map[string]string{
	string(results.UnclassifiedCheck): "the verdict is invalid but names no check (a record written before checks were recorded)",
	reasonFailed:                      "the server died, or the point could not run",
	reasonUnavailable:                 "the model cannot run on this machine",
	reasonNoVerdict:                   "the point was measured but the load generator returned no result",
	reasonSLOInvalid:                  "a latency-objective search stopped at a probe whose verdict was invalid for the load generator's own reason (its CPU, its timers)",
}

// reasonMeaning returns the sentence explaining code.
func reasonMeaning(code string) string {
	if m := loadgen.Check(code).Meaning(); m != "" {
		return m
	}
	if m, ok := reasonMeanings[code]; ok {
		return m
	}
	return "a check this version of the report does not know; see the points' reasons"
}

// generatorAdvice is what to do when the load generator could not keep
// its schedule.
const generatorAdvice = "the load generator could not keep its schedule on this machine: make sure nothing else runs on the load generator's CPU (--load-cpus), and rerun"

// reasonAdvice says, in plain words, what to do about a run whose points
// are mostly invalid for that reason.
var reasonAdvice = map[string]string{
	string(loadgen.CheckNoResponses):  "no request succeeded at these points: check that the server answers this workload (concbench serve and concbench load by hand), and rerun",
	string(loadgen.CheckRate):         "too few requests were sent and answered in the window: the server or the load generator could not sustain the offered rate; lower the fractions (--fractions) or make sure nothing else runs on the benchmark's CPUs (--server-cpus, --load-cpus), and rerun",
	string(loadgen.CheckOverCapacity): "the offered load exceeded what the server sustains at these points; lower the fractions (--fractions), and rerun",
	string(loadgen.CheckBias):         generatorAdvice,
	string(loadgen.CheckCPU):          generatorAdvice,
	string(loadgen.CheckSendProcess):  generatorAdvice,
	string(loadgen.CheckBusy):         "the load generator's workers were near saturation: give it an idle CPU of its own (--load-cpus) or fewer connections (--conns), and rerun",
	string(loadgen.CheckCeiling):      ceilingAdvice,
	string(loadgen.CheckUnsent):       "requests waited for the connections' in-flight bound and were never sent: the server fell behind; lower the fractions (--fractions) or add connections (--conns), and rerun",
	string(loadgen.CheckErrors):       "requests failed: read the points' reasons in the report's Validity section, fix the server or the workload, and rerun",
	string(loadgen.CheckWarmup):       "the warm-up had failures or was too short: lengthen it (--warmup), and rerun",
	string(loadgen.CheckOutOfRange):   "latencies fell outside the histograms' range: the server stalled far beyond the expected latencies; read the points' reasons, and rerun",
	string(loadgen.CheckClock):        "the wall clock was stepped during the run: stop clock stepping (NTP) on this machine while measuring, and rerun",
	string(loadgen.CheckAborted):      "points were interrupted or lost their server: continue the run (concbench bench --resume) or rerun",
	reasonSLOInvalid:                  "latency-objective searches were spoiled by the load generator: make sure nothing else runs on its CPUs (--load-cpus), and rerun",
	reasonFailed:                      "servers died or points could not run: read the failed points' errors in the report's Validity section, fix the cause, and rerun",
}

// ceilingAdvice is what to do about points beyond the load generator's
// ceiling.
const ceilingAdvice = "the server answered faster than this load generator can ask: such a rate is the generator's limit, not the server's; give the generator more load CPUs (--load-cpus, --server-cpus) or more hosts (--agents) to measure it"

// reasonAdviceFor returns what to do about reason code.
func reasonAdviceFor(code string) string {
	if a, ok := reasonAdvice[code]; ok {
		return a
	}
	return "read the points' reasons in the report's Validity section, remove their cause, and rerun"
}

// notValidReason returns why p is not valid, as the validity table names
// it: its main failed check, "failed", "unavailable" or "no-verdict"; ""
// for a valid point.
func notValidReason(p *results.Point) string {
	switch {
	case p.Valid():
		return ""
	case p.Kind == results.KindSLO && p.Measured() && p.SLO != nil:
		// A search's result: valid unless a probe's verdict spoiled it.
		if p.SLO.Invalid != "" {
			return reasonSLOInvalid
		}
		return ""
	case p.Status == results.StatusUnavailable:
		return reasonUnavailable
	case !p.Measured():
		return reasonFailed
	case p.Load == nil:
		return reasonNoVerdict
	}
	return string(p.MainCheck())
}

// tally counts reasons and names the most frequent, the first seen on a
// tie.
type tally struct {
	order  []string
	counts map[string]int
}

func (t *tally) add(reason string) {
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	if t.counts[reason] == 0 {
		t.order = append(t.order, reason)
	}
	t.counts[reason]++
}

// top returns the most frequent reason and its count ("", 0 if none).
func (t *tally) top() (string, int) {
	best, n := "", 0
	for _, r := range t.order {
		if t.counts[r] > n {
			best, n = r, t.counts[r]
		}
	}
	return best, n
}

// validityCell is one configuration at one load: how many of its points
// are valid, and the main reason of the others.
type validityCell struct {
	valid, total int
	// unavailable is true if every point of the cell is unavailable.
	unavailable bool
	reasons     tally
}

// text is the cell as the report shows it: "6/6", "4/6 — generator-lag".
func (c *validityCell) text() string {
	if c == nil {
		return "—"
	}
	s := fmt.Sprintf("%d/%d", c.valid, c.total)
	if r, _ := c.reasons.top(); r != "" {
		s += " — " + r
	}
	return s
}

// validity is the run's validity at a glance: a table of configurations ×
// loads, and the counts the banner is decided on.
type validity struct {
	// loads are the table's columns, in report order.
	loads []loadKey
	// rows are the configurations in report order, one cell per load (nil
	// where the configuration has no point at that load).
	rows []validityRow
	// measured, valid and invalid count points (Point.Measured, Valid,
	// Invalid).
	measured, valid, invalid int
	// reasons counts the main reason of every point that is not valid,
	// unavailable ones left out (they are the machine's, not the run's).
	reasons tally
	// codes are the reasons the table shows, in order of appearance.
	codes []string
	// empty names the cells with points that are not all unavailable and
	// none of them valid: "netpoll open 0.90"; beyond those of them whose
	// points are all beyond the load generator's ceiling (not a fault of
	// the run: a limit of the machine it ran on).
	empty, beyond []string
}

// loadKey is a column of the validity table: a kind and, for open-loop
// points, a fraction.
type loadKey struct {
	kind     results.Kind
	fraction float64
}

// loadOf returns g's column.
func loadOf(g *results.Group) loadKey {
	if g.Kind == results.KindCapacity {
		return loadKey{kind: g.Kind}
	}
	return loadKey{g.Kind, g.LoadValue()}
}

type validityRow struct {
	name  string
	cells []*validityCell
}

// newValidity computes the validity table of groups (GroupPoints order).
func newValidity(groups []*results.Group) *validity {
	v := &validity{}
	for _, g := range groups {
		if k := loadOf(g); !slices.Contains(v.loads, k) {
			v.loads = append(v.loads, k)
		}
	}
	slices.SortFunc(v.loads, func(a, b loadKey) int { return results.CompareLoad(a.kind, a.fraction, b.kind, b.fraction) })
	index := map[string]int{}
	for _, g := range groups {
		ri, ok := index[g.Config.Name]
		if !ok {
			ri = len(v.rows)
			index[g.Config.Name] = ri
			v.rows = append(v.rows, validityRow{name: g.Config.Name, cells: make([]*validityCell, len(v.loads))})
		}
		ci := slices.Index(v.loads, loadOf(g))
		c := v.rows[ri].cells[ci]
		if c == nil {
			c = &validityCell{unavailable: true}
			v.rows[ri].cells[ci] = c
		}
		for _, p := range g.Points {
			c.total++
			c.unavailable = c.unavailable && p.Status == results.StatusUnavailable
			if p.Measured() {
				v.measured++
			}
			if p.Invalid() {
				v.invalid++
			}
			r := notValidReason(p)
			if r == "" {
				c.valid++
				v.valid++
				continue
			}
			c.reasons.add(r)
			if r != reasonUnavailable {
				v.reasons.add(r)
			}
		}
	}
	seen := map[string]bool{}
	for _, row := range v.rows {
		for ci, c := range row.cells {
			if c == nil {
				continue
			}
			if r, _ := c.reasons.top(); r != "" && !seen[r] {
				seen[r] = true
				v.codes = append(v.codes, r)
			}
			if c.valid == 0 && !c.unavailable {
				k := v.loads[ci]
				name := row.name + " " + results.LoadLabel(k.kind, k.fraction)
				if r, _ := c.reasons.top(); r == string(loadgen.CheckCeiling) {
					v.beyond = append(v.beyond, name)
				} else {
					v.empty = append(v.empty, name)
				}
			}
		}
	}
	return v
}

// header returns the table's header row.
func (v *validity) header() []string {
	h := []string{"configuration"}
	for _, k := range v.loads {
		h = append(h, results.LoadLabel(k.kind, k.fraction))
	}
	return h
}

// table returns the table's rows, cells as text.
func (v *validity) table() [][]string {
	var out [][]string
	for _, row := range v.rows {
		r := []string{row.name}
		for _, c := range row.cells {
			r = append(r, c.text())
		}
		out = append(out, r)
	}
	return out
}

// legend returns one line per code the table shows: its meaning.
func (v *validity) legend() []legendItem {
	var out []legendItem
	for _, c := range v.codes {
		out = append(out, legendItem{Code: c, Meaning: reasonMeaning(c)})
	}
	return out
}

// legendItem is a code of the validity table and what it means.
type legendItem struct{ Code, Meaning string }

// maxEmptyListed is how many cells without a valid point the banner names
// before it only counts them.
const maxEmptyListed = 3

// banner returns the warning for a mostly invalid run or one with a
// configuration/load pair without a valid point, or "" when the run is
// neither: see Banner.
func (v *validity) banner() string {
	if 2*v.invalid <= v.measured && len(v.empty) == 0 {
		if len(v.beyond) == 0 {
			return ""
		}
		return fmt.Sprintf("Beyond this load generator: %s only points whose rate reached its measured ceiling (%s), so their value is the generator's limit, not the server's. What to do: %s.",
			plots.Plural(len(v.beyond), "configuration/load pair has", "configuration/load pairs have"), listed(v.beyond), ceilingAdvice)
	}
	var b strings.Builder
	pct := 0.0
	if v.measured > 0 {
		pct = 100 * float64(v.valid) / float64(v.measured)
	}
	// "Mostly invalid" only when it is: a run 95 % valid whose one-off
	// mechanisms point of some configuration was spoiled has a gap, and
	// was called mostly invalid.
	title := "Gaps in this run"
	if 2*v.invalid > v.measured {
		title = "Mostly invalid run"
	}
	fmt.Fprintf(&b, "%s: %d of %d measured points (%.0f%%) have a valid load-generator verdict", title, v.valid, v.measured, pct)
	if n := len(v.empty) + len(v.beyond); n > 0 {
		fmt.Fprintf(&b, ", and %s no valid point at all (%s)", plots.Plural(n, "configuration/load pair has", "configuration/load pairs have"),
			listed(append(slices.Clone(v.empty), v.beyond...)))
	}
	reason, n := v.reasons.top()
	if reason != "" {
		fmt.Fprintf(&b, ". Most frequent reason: %s, %s (%s). What to do: %s.", reason, plots.Plural(n, "point", "points"), reasonMeaning(reason), reasonAdviceFor(reason))
	} else {
		b.WriteString(".")
	}
	b.WriteString(" Invalid repetitions are excluded from every median, band, merged spectrum, claim test and bench.txt; the figures and tables rest on the valid ones only.")
	return b.String()
}

// listed joins names, the first maxEmptyListed of them and how many
// more.
func listed(names []string) string {
	if n := len(names); n > maxEmptyListed {
		return strings.Join(names[:maxEmptyListed], ", ") + fmt.Sprintf(" and %d more", n-maxEmptyListed)
	}
	return strings.Join(names, ", ")
}

// Banner returns the warning the report opens with, and that concbench
// bench prints after a run, when the run is mostly invalid: more than
// half of its measured points have an invalid load-generator verdict, or
// some configuration has no valid point at some load (failed points count
// as not valid; unavailable models do not count; a pair whose points are
// all beyond the load generator's ceiling gets a note of its own instead,
// since it is the machine's limit, not the run's fault). It states the fraction
// of valid points, the most frequent reason the others are not valid, and
// what to do about it, in one paragraph. It returns "" when the run is
// not mostly invalid.
func Banner(r *results.Run, pts []results.Point) string {
	return newValidity(results.GroupPoints(r, pts)).banner()
}
