package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Measured reports whether p was measured (Status ok): failed and
// unavailable points carry no measurement.
func (p *Point) Measured() bool { return p.Status == StatusOK }

// Invalid reports whether p was measured but the load generator's verdict
// is that the measurement cannot be trusted (Load.Reasons says why).
// Invalid points are kept in the statistics and flagged wherever they are
// used.
func (p *Point) Invalid() bool { return p.Measured() && p.Load != nil && !p.Load.Valid }

// Label names p for people: "leaderfollowers/lifo open 0.50 rep 2".
func (p *Point) Label() string {
	return fmt.Sprintf("%s %s rep %d", p.Config.Name, LoadLabel(p.Kind, p.Fraction), p.Repetition)
}

// LoadLabel names a load: "capacity" for capacity points, "open 0.50"
// for an open-loop fraction.
func LoadLabel(k Kind, fraction float64) string {
	if k == KindCapacity {
		return string(KindCapacity)
	}
	return fmt.Sprintf("%s %.2f", k, fraction)
}

// Partial reports whether r did not finish: it was interrupted, or is
// still running, so its folder holds only the points written so far.
func (r *Run) Partial() bool { return r.Interrupted || r.Finished.IsZero() }

// Group is the repetitions of one (configuration, kind, fraction).
type Group struct {
	Config ModelConfig
	// Index is the configuration's position in the run's Configs (the
	// report order); configurations absent from Configs follow, in order
	// of appearance.
	Index    int
	Kind     Kind
	Fraction float64
	// Points are the group's repetitions, every status, in repetition
	// order.
	Points []*Point
}

// GroupPoints groups pts by (configuration, kind, fraction), in a stable
// order: the run's configuration order, capacity before open-loop points,
// then ascending fraction. Groups point into pts.
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
		k := key{p.Config.Name, p.Kind, p.Fraction}
		g := byKey[k]
		if g == nil {
			g = &Group{Config: p.Config, Index: idx, Kind: p.Kind, Fraction: p.Fraction}
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
		return CompareLoad(a.Kind, a.Fraction, b.Kind, b.Fraction)
	})
	return groups
}

// CompareLoad orders loads (a kind and a fraction) the way every report
// lists them: capacity first, then the other kinds by name, then ascending
// fraction. It returns a negative number when load a sorts before load b,
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
func (g *Group) Label() string { return g.Config.Name + " " + LoadLabel(g.Kind, g.Fraction) }

// Measured returns the points that were measured (Status ok), invalid
// ones included.
func (g *Group) Measured() []*Point { return g.where((*Point).Measured) }

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

// Aggregate is a metric's statistics over a group's repetitions.
type Aggregate struct {
	Metric Metric
	Stats  Stats
	// Skipped counts the group's points that do not carry the metric:
	// failed or unavailable points, or measured points without it;
	// SkipReasons says why, one line per point.
	Skipped     int
	SkipReasons []string
	// Invalid counts the points in Stats whose verdict is invalid.
	Invalid int
}

// Aggregate returns m's statistics over g's repetitions.
func (g *Group) Aggregate(m Metric) Aggregate {
	a := Aggregate{Metric: m}
	var xs []float64
	for _, p := range g.Points {
		v, ok := m.Value(p)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			a.Skipped++
			a.SkipReasons = append(a.SkipReasons, fmt.Sprintf("rep %d: %s", p.Repetition, skipReason(p, m)))
			continue
		}
		xs = append(xs, v)
		if p.Invalid() {
			a.Invalid++
		}
	}
	a.Stats = Summarize(xs)
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

// Find returns the group of configuration name, kind and fraction, or nil.
func Find(groups []*Group, name string, kind Kind, fraction float64) *Group {
	for _, g := range groups {
		if g.Config.Name == name && g.Kind == kind && (kind == KindCapacity || g.Fraction == fraction) {
			return g
		}
	}
	return nil
}
