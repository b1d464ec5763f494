package results

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"concbench/loadgen"
)

// Measured reports whether p was measured (Status ok): failed and
// unavailable points carry no measurement.
func (p *Point) Measured() bool { return p.Status == StatusOK }

// Valid reports whether p was measured and the load generator's verdict
// is that the measurement can be trusted (Load.Valid).
func (p *Point) Valid() bool { return p.Measured() && p.Load != nil && p.Load.Valid }

// Invalid reports whether p was measured but the load generator's verdict
// is that the measurement cannot be trusted (Load.Reasons says why,
// Load.Checks names the failed checks). Invalid points are in no
// statistic: Group.Aggregate and Group.MergeLatency exclude and count
// them, and WriteBench leaves them out; WriteCSV keeps them.
func (p *Point) Invalid() bool { return p.Measured() && p.Load != nil && !p.Load.Valid }

// UnclassifiedCheck is MainCheck's answer for an invalid point whose
// verdict names no failed check (a record written before the load
// generator recorded Checks).
const UnclassifiedCheck loadgen.Check = "unclassified"

// MainCheck returns the main reason p's verdict is invalid: the first of
// Load.Checks, or UnclassifiedCheck if the verdict names none. It returns
// "" for a point that is not Invalid.
func (p *Point) MainCheck() loadgen.Check {
	if !p.Invalid() {
		return ""
	}
	if len(p.Load.Checks) == 0 || p.Load.Checks[0] == "" {
		return UnclassifiedCheck
	}
	return p.Load.Checks[0]
}

// Label names p for people: "leaderfollowers/lifo open 0.50 rep 2",
// "netpoll/conns=256 rate 5000/s rep 0".
func (p *Point) Label() string {
	return fmt.Sprintf("%s %s rep %d", p.Config.Name, LoadLabel(p.Kind, p.LoadValue()), p.Repetition)
}

// LoadValue returns what distinguishes p's load among points of its kind, as
// LoadLabel and CompareLoad take it: the offered rate for KindRate and
// KindMechanisms, the probe's index for KindProbe (its rate differs
// between repetitions), the fraction for the others.
func (p *Point) LoadValue() float64 {
	switch p.Kind {
	case KindRate, KindMechanisms:
		return p.OfferedRatePerS
	case KindProbe:
		return float64(p.Probe)
	}
	return p.Fraction
}

// LoadLabel names a load: "capacity" for capacity points, "open 0.50"
// for an open-loop fraction, "rate 5000/s" for an absolute rate (KindRate,
// whose load is the rate; "mechanisms 5000/s" for a mechanisms point),
// "probe 2" for a search's third probe, "slo" for a search's result.
func LoadLabel(k Kind, load float64) string {
	switch k {
	case KindCapacity:
		return string(KindCapacity)
	case KindRate, KindMechanisms:
		return fmt.Sprintf("%s %.0f/s", k, load)
	case KindProbe:
		return fmt.Sprintf("%s %.0f", k, load)
	case KindSLO:
		return string(KindSLO)
	}
	return fmt.Sprintf("%s %.2f", k, load)
}

// Partial reports whether r did not finish: it was interrupted, or is
// still running, so its folder holds only the points written so far.
func (r *Run) Partial() bool { return r.Interrupted || r.Finished.IsZero() }

// Group is the repetitions of one (configuration, kind, fraction), or of
// one (configuration, KindRate or KindMechanisms, offered rate).
type Group struct {
	Config ModelConfig
	// Index is the configuration's position in the run's Configs (the
	// report order); configurations absent from Configs follow, in order
	// of appearance.
	Index    int
	Kind     Kind
	Fraction float64
	// RatePerS is a KindRate or KindMechanisms group's offered rate
	// (req/s); 0 for the other kinds, whose rate follows each
	// repetition's capacity (OfferedRate).
	RatePerS float64
	// Points are the group's repetitions, every status, in repetition
	// order.
	Points []*Point
}

// GroupPoints groups pts by (configuration, kind, fraction) — for
// KindRate and KindMechanisms, by (configuration, kind, offered rate) —,
// in a stable order:
// the run's configuration order, capacity before open-loop points, open
// before rate points, then ascending fraction or rate. Groups point into
// pts.
func GroupPoints(r *Run, pts []Point) []*Group {
	order := map[string]int{}
	for _, c := range r.Configs {
		if _, ok := order[c.Name]; !ok {
			order[c.Name] = len(order)
		}
	}
	type key struct {
		name string
		kind Kind
		frac float64
	}
	byKey := map[key]*Group{}
	var groups []*Group
	for i := range pts {
		p := &pts[i]
		idx, ok := order[p.Config.Name]
		if !ok {
			idx = len(order)
			order[p.Config.Name] = idx
		}
		k := key{p.Config.Name, p.Kind, p.LoadValue()}
		g := byKey[k]
		if g == nil {
			g = &Group{Config: p.Config, Index: idx, Kind: p.Kind, Fraction: p.Fraction}
			if p.Kind == KindRate || p.Kind == KindMechanisms {
				g.RatePerS = p.OfferedRatePerS
			}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Points = append(g.Points, p)
	}
	for _, g := range groups {
		slices.SortStableFunc(g.Points, func(a, b *Point) int { return a.Repetition - b.Repetition })
	}
	slices.SortStableFunc(groups, func(a, b *Group) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		return CompareLoad(a.Kind, a.LoadValue(), b.Kind, b.LoadValue())
	})
	return groups
}

// CompareLoad orders loads (a kind and a fraction, or a KindRate's rate)
// the way every report lists them: capacity first, then the other kinds by
// name, then ascending fraction or rate. It returns a negative number when load a sorts before load b,
// a positive number when after, and 0 when neither (equal loads, or a NaN
// fraction), as slices.SortFunc expects.
func CompareLoad(ak Kind, af float64, bk Kind, bf float64) int {
	if ak != bk {
		if ak == KindCapacity {
			return -1
		}
		if bk == KindCapacity {
			return 1
		}
		return strings.Compare(string(ak), string(bk))
	}
	switch {
	case af < bf:
		return -1
	case af > bf:
		return 1
	}
	return 0
}

// Label names g for people: "leaderfollowers/lifo open 0.50".
func (g *Group) Label() string { return g.Config.Name + " " + LoadLabel(g.Kind, g.LoadValue()) }

// LoadValue returns g's load as LoadLabel, CompareLoad and Find take it: its
// fraction, or for KindRate and KindMechanisms its offered rate.
func (g *Group) LoadValue() float64 {
	switch g.Kind {
	case KindRate, KindMechanisms:
		return g.RatePerS
	case KindProbe:
		if len(g.Points) > 0 {
			return float64(g.Points[0].Probe)
		}
	}
	return g.Fraction
}

// Measured returns the points that were measured (Status ok), invalid
// ones included.
func (g *Group) Measured() []*Point { return g.where((*Point).Measured) }

// Valid returns the measured points whose verdict is valid.
func (g *Group) Valid() []*Point { return g.where((*Point).Valid) }

// Invalid returns the measured points whose verdict is invalid.
func (g *Group) Invalid() []*Point { return g.where((*Point).Invalid) }

func (g *Group) where(keep func(*Point) bool) []*Point {
	var out []*Point
	for _, p := range g.Points {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// OfferedRate returns the median offered rate of g's measured points (the
// rate follows each repetition's capacity, so it may differ between
// repetitions), or NaN if none was measured or the group is closed-loop.
// Invalid points count here, unlike in Aggregate: the offered rate is the
// experiment's input, set before the point ran, not a measurement the
// verdict judges.
func (g *Group) OfferedRate() float64 {
	var xs []float64
	for _, p := range g.Measured() {
		if p.OfferedRatePerS > 0 {
			xs = append(xs, p.OfferedRatePerS)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	return Summarize(xs).Median
}

// Aggregate is a metric's statistics over a group's valid repetitions.
// Every point of the group is in exactly one of Stats, Skipped and
// Excluded.
type Aggregate struct {
	Metric Metric
	// Stats summarizes the metric over the repetitions that may be
	// trusted: measured points whose verdict is valid (and measured points
	// without a load-generator verdict, for the server's own costs).
	// Values are those repetitions' values, in the group's order, and
	// Reps their repetitions.
	Stats  Stats
	Values []float64
	Reps   []int
	// Skipped counts the group's points that do not carry the metric:
	// failed or unavailable points, or measured points without it;
	// SkipReasons says why, one line per point.
	Skipped     int
	SkipReasons []string
	// Excluded counts the group's invalid repetitions (Point.Invalid): they
	// were measured, but the load generator's verdict is that they cannot
	// be trusted, so they are left out of Stats whatever they carry.
	// ExcludedReasons names them, one line per point with its main check:
	// "rep 2: generator-lag".
	Excluded        int
	ExcludedReasons []string
}

// Aggregate returns m's statistics over g's valid repetitions, and counts
// the points left out: invalid repetitions (Excluded) and points without
// the metric (Skipped).
func (g *Group) Aggregate(m Metric) Aggregate {
	a := Aggregate{Metric: m}
	var xs []float64
	for _, p := range g.Points {
		if p.SLO != nil && p.SLO.Invalid != "" {
			// A search that a probe's generator-invalid verdict spoiled.
			a.Excluded++
			a.ExcludedReasons = append(a.ExcludedReasons, fmt.Sprintf("rep %d: %s", p.Repetition, p.SLO.Invalid))
			continue
		}
		if p.Invalid() {
			a.Excluded++
			a.ExcludedReasons = append(a.ExcludedReasons, fmt.Sprintf("rep %d: %s", p.Repetition, p.MainCheck()))
			continue
		}
		if m.Percentile > 0 && p.Load != nil && !p.Load.Trusted(m.Percentile) {
			// A valid point whose verdict does not trust this percentile:
			// the generator's lateness may account for most of it.
			a.Excluded++
			a.ExcludedReasons = append(a.ExcludedReasons, fmt.Sprintf("rep %d: p%v untrusted (generator-lag)", p.Repetition, m.Percentile))
			continue
		}
		v, ok := m.Value(p)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			a.Skipped++
			a.SkipReasons = append(a.SkipReasons, fmt.Sprintf("rep %d: %s", p.Repetition, skipReason(p, m)))
			continue
		}
		xs = append(xs, v)
		a.Reps = append(a.Reps, p.Repetition)
	}
	a.Stats, a.Values = Summarize(xs), xs
	return a
}

func skipReason(p *Point, m Metric) string {
	switch p.Status {
	case StatusFailed:
		return "failed"
	case StatusUnavailable:
		return "unavailable"
	}
	return "no " + m.Label
}

// NearestFraction returns the open-loop fraction among groups' measured
// open-loop groups that is closest to target (the lower one on a tie),
// and false if there is none.
func NearestFraction(groups []*Group, target float64) (float64, bool) {
	best, found := 0.0, false
	for _, g := range groups {
		if g.Kind != KindOpen || len(g.Measured()) == 0 {
			continue
		}
		d, bd := math.Abs(g.Fraction-target), math.Abs(best-target)
		if !found || d < bd || (d == bd && g.Fraction < best) {
			best, found = g.Fraction, true
		}
	}
	return best, found
}

// Find returns the group of configuration name, kind and load (Group.Load:
// the fraction, or a KindRate's or KindMechanisms' rate; ignored for capacity and SLO
// groups), or nil.
func Find(groups []*Group, name string, kind Kind, load float64) *Group {
	for _, g := range groups {
		if g.Config.Name == name && g.Kind == kind && (kind == KindCapacity || kind == KindSLO || g.LoadValue() == load) {
			return g
		}
	}
	return nil
}
