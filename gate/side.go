package gate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"concbench/results"
)

// Fault says whose doing it is that a point cannot be used
// (results.Fault, shared with the harness's latency-objective search).
type Fault = results.Fault

// The faults. ServerFault is what the Failures rule counts; a
// GeneratorFault or HostFault point is left out of every sample.
const (
	NoFault        = results.NoFault
	ServerFault    = results.ServerFault
	GeneratorFault = results.GeneratorFault
	HostFault      = results.HostFault
	Unmeasured     = results.Unmeasured
)

// faultOf classifies a point (results.Point.Fault).
func faultOf(p *results.Point) Fault { return p.Fault() }

// Point is one measured point reduced to what the gate judges: its
// identity, its outcome, whose fault it is if it cannot be used, and the
// value of every metric the rules read.
type Point struct {
	Config     string         `json:"config"`
	Kind       results.Kind   `json:"kind"`
	Fraction   float64        `json:"fraction"`
	Repetition int            `json:"rep"`
	Status     results.Status `json:"status"`
	// Valid is the load generator's verdict; false for a point that was
	// not measured.
	Valid bool `json:"valid"`
	// Fault says whose doing it is that the point cannot be used (""
	// for a valid point).
	Fault Fault `json:"fault,omitempty"`
	// Why is the failure, or the reasons of an invalid verdict, joined.
	Why string `json:"why,omitempty"`
	// Values maps a metric's Name to the point's value; a metric the
	// point does not carry is absent, never 0.
	Values map[string]float64 `json:"values,omitempty"`
	// Requests is what the server served in the point's window.
	Requests uint64 `json:"requests,omitempty"`
}

// Side is one side of a comparison: the base (a base commit's build, or a
// committed baseline) or the head (the current tree).
type Side struct {
	// Label names the side in the report: "base", "baseline", "head".
	Label string `json:"label"`
	// Commit is the commit the side's servers were built from; Dirty
	// says that the tree had uncommitted changes; Ref is how it was asked
	// for (a --base revision, "working tree", a baseline's folder).
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty,omitempty"`
	Ref    string `json:"ref,omitempty"`
	// Unavailable maps a configuration that could not run to why.
	Unavailable map[string]string `json:"unavailable,omitempty"`
	// Points are the side's points, in the run's report order.
	Points []Point `json:"points,omitempty"`
}

// FromRun reduces the points of a run to a side: the configurations
// whose names end in suffix (the suffix removed; "" takes every
// configuration), each point with the values of metrics. Commit and
// Dirty come from the points' provenance (the binary that served them).
func FromRun(run *results.Run, pts []results.Point, label, suffix string, metrics []results.Metric) *Side {
	s := &Side{Label: label, Unavailable: map[string]string{}}
	strip := func(name string) (string, bool) {
		if suffix == "" {
			return name, true
		}
		base, ok := strings.CutSuffix(name, suffix)
		return base, ok && base != ""
	}
	for _, u := range run.Unavailable {
		if name, ok := strip(u.Config.Name); ok {
			s.Unavailable[name] = u.Reason
		}
	}
	for i := range pts {
		p := &pts[i]
		name, ok := strip(p.Config.Name)
		if !ok {
			continue
		}
		if s.Commit == "" && p.Provenance.Commit != "" {
			s.Commit, s.Dirty = p.Provenance.Commit, p.Provenance.Dirty
		}
		gp := Point{Config: name, Kind: p.Kind, Fraction: p.Fraction, Repetition: p.Repetition, Status: p.Status,
			Valid: p.Measured() && p.Load != nil && p.Load.Valid, Fault: faultOf(p), Requests: p.Server.Requests}
		switch {
		case p.Status == results.StatusUnavailable:
			gp.Why = p.Failure
			if _, ok := s.Unavailable[name]; !ok {
				s.Unavailable[name] = p.Failure
			}
		case !p.Measured():
			gp.Why = firstLine(p.Failure)
		case p.Load == nil:
			gp.Why = "no load-generator result"
		case !p.Load.Valid:
			gp.Why = strings.Join(p.Load.Reasons, "; ")
		case gp.Fault == ServerFault:
			gp.Why = "responses failed: " + errorsText(p.Load.Errors)
		}
		for _, m := range metrics {
			if v, ok := m.Value(p); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				if gp.Values == nil {
					gp.Values = map[string]float64{}
				}
				gp.Values[m.Name] = round(v)
			}
		}
		s.Points = append(s.Points, gp)
	}
	if s.Commit == "" {
		s.Commit = "unknown"
	}
	return s
}

// errorsText lists a load result's error counts, by kind.
func errorsText(errs map[string]int64) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		kv = append(kv, fmt.Sprintf("%s %d", k, errs[k]))
	}
	return strings.Join(kv, ", ")
}

// round keeps 6 significant digits: far below every threshold, and a
// committed baseline stays readable.
func round(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return r
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// configs returns the side's configurations in order of appearance, then
// the unavailable ones without points, by name.
func (s *Side) configs() []string {
	var out []string
	for i := range s.Points {
		if !slices.Contains(out, s.Points[i].Config) {
			out = append(out, s.Points[i].Config)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Unavailable)) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// group is the repetitions of one (configuration, kind, fraction) on one
// side.
type group struct {
	kind     results.Kind
	fraction float64
	points   []*Point
}

// groups returns config's groups on the side: capacity first, then the
// open-loop fractions in ascending order.
func (s *Side) groups(config string) []*group {
	var gs []*group
	for i := range s.Points {
		p := &s.Points[i]
		if p.Config != config {
			continue
		}
		var g *group
		for _, h := range gs {
			if h.kind == p.Kind && h.fraction == p.Fraction {
				g = h
			}
		}
		if g == nil {
			g = &group{kind: p.Kind, fraction: p.Fraction}
			gs = append(gs, g)
		}
		g.points = append(g.points, p)
	}
	slices.SortStableFunc(gs, func(a, b *group) int {
		return results.CompareLoad(a.kind, a.fraction, b.kind, b.fraction)
	})
	return gs
}

// findGroup returns the group of gs with kind and fraction, or nil.
func findGroup(gs []*group, kind results.Kind, fraction float64) *group {
	for _, g := range gs {
		if g.kind == kind && g.fraction == fraction {
			return g
		}
	}
	return nil
}

// sample is one metric's values over a group's usable points, and why the
// other points were left out.
type sample struct {
	values   []float64
	excluded []string // "rep 2 invalid (generator): send lag …"
	server   int      // points the server failed (Fault ServerFault)
	missing  int      // valid points without the metric
	short    int      // valid points whose window held too few requests
}

// sampleOf collects metric's values from g: only points measured with a
// valid verdict count; the others are excluded and said why (invalid
// points are never mixed into a sample), and those the server failed are
// counted. Valid points whose window held fewer than minRequests requests
// are left out too, and counted in short.
func sampleOf(g *group, metric string, minRequests uint64) sample {
	var s sample
	if g == nil {
		return s
	}
	for _, p := range g.points {
		if p.Valid && p.Requests < minRequests {
			s.short++
			continue
		}
		switch {
		case p.Fault == ServerFault:
			s.server++
			s.excluded = append(s.excluded, fmt.Sprintf("rep %d failed by the server: %s", p.Repetition, p.Why))
		case p.Fault == HostFault:
			s.excluded = append(s.excluded, fmt.Sprintf("rep %d invalid while the hypervisor took the server's CPUs (steal): %s", p.Repetition, p.Why))
		case p.Status != results.StatusOK:
			s.excluded = append(s.excluded, fmt.Sprintf("rep %d %s: %s", p.Repetition, p.Status, p.Why))
		case !p.Valid:
			s.excluded = append(s.excluded, fmt.Sprintf("rep %d invalid (the load generator's verdict on itself): %s", p.Repetition, p.Why))
		default:
			v, ok := p.Values[metric]
			if !ok {
				s.missing++
				s.excluded = append(s.excluded, fmt.Sprintf("rep %d: no value", p.Repetition))
				continue
			}
			s.values = append(s.values, v)
		}
	}
	return s
}
