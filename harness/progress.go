package harness

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/results"
)

// count adds p's outcome to the summary.
func (r *runner) count(p *results.Point) {
	switch {
	case p.Kind == results.KindSLO && p.Status == results.StatusOK:
		if p.SLO != nil && p.SLO.Invalid != "" {
			r.sum.Invalid++
		} else {
			r.sum.OK++
		}
	case p.Status == results.StatusUnavailable:
		r.sum.Unavailable++
	case p.Status == results.StatusFailed:
		r.sum.Failed++
	case p.Load != nil && p.Load.Valid:
		r.sum.OK++
	default:
		r.sum.Invalid++
	}
}

// progress writes p's progress line, with what note (if set) returns for
// p at its end.
func (r *runner) progress(p *results.Point, note func(*results.Point) string) {
	if r.opt.Progress == nil {
		return
	}
	now := time.Now()
	elapsed := now.Sub(r.begin)
	eta := "?"
	if d, ok := r.eta(now); ok {
		eta = fmtDuration(d)
	}
	what := "capacity"
	switch p.Kind {
	case results.KindOpen:
		what = fmt.Sprintf("open %.2f", p.Fraction)
		if p.OfferedRatePerS > 0 {
			what += fmt.Sprintf(" (%.0f req/s)", p.OfferedRatePerS)
		}
	case results.KindRate:
		what = fmt.Sprintf("rate %.0f req/s", p.OfferedRatePerS)
	case results.KindMechanisms:
		what = fmt.Sprintf("mechanisms %.0f req/s", p.OfferedRatePerS)
		if note == nil {
			note = mechanismsNote
		}
	case results.KindProbe:
		what = fmt.Sprintf("slo probe %d at %.0f req/s", p.Probe, p.OfferedRatePerS)
	case results.KindSLO:
		what = "slo"
		if p.SLO != nil {
			what += " (" + p.SLO.Objective() + ")"
		}
	}
	var outcome string
	switch {
	case p.Status != results.StatusOK:
		outcome = strings.ToUpper(string(p.Status)) + ": " + firstLine(p.Failure)
	case p.Kind == results.KindSLO:
		s := p.SLO
		outcome = fmt.Sprintf("%.0f req/s, bracket [%.0f, %.0f) of capacity %.0f, %d probes", s.RatePerS, s.LoPerS, s.HiPerS, s.CapacityPerS, s.Probes)
		if s.Reason != "" {
			outcome += ": " + s.Reason
		}
		if s.Invalid != "" {
			outcome += ", INVALID: " + s.Invalid
		}
	default:
		l := p.Load
		outcome = fmt.Sprintf("%.0f req/s, p99 %s, %.2f ctxsw/req, %.1f µs CPU/req", l.AchievedRatePerS,
			loadgen.FormatNs(l.Latency.P99Ns), p.Server.CtxswPerRequest, p.Server.CPUNsPerRequest/1e3)
		if !l.Valid {
			outcome += ", INVALID: " + strings.Join(l.Reasons, "; ")
		}
	}
	if note != nil {
		outcome += " — " + note(p)
	}
	fmt.Fprintf(r.opt.Progress, "[%d/%s] %s, ETA %s | rep %d %s %s: %s\n",
		r.pointIdx, r.pointsExpected(), fmtDuration(elapsed), eta, p.Repetition, p.Config.Name, what, outcome)
}

// pointsLeft is how many points the run is expected to take after the
// current one: sum.Points counts each search not yet done at its most
// probes (about twice what a search takes), so those are counted at the
// mean probes of the searches done, or before any is done at the probes
// planned.
func (r *runner) pointsLeft() float64 {
	left := float64(r.sum.Points - r.pointIdx)
	if c := r.searches; c.left > 0 {
		mean := float64(r.exp.SLOProbes)
		if c.done > 0 {
			mean = float64(c.probes) / float64(c.done)
		}
		left -= float64(c.left) * (float64(r.mostProbes()) - mean)
	}
	return max(left, 0)
}

// pointsExpected is the progress line's total: exact once no search is
// left to shorten it, an estimate ("~") before.
func (r *runner) pointsExpected() string {
	if r.searches.left == 0 {
		return strconv.Itoa(r.sum.Points)
	}
	return "~" + strconv.Itoa(r.pointIdx+int(math.Round(r.pointsLeft())))
}

// eta estimates how long the run has left at now: the points left
// (pointsLeft) at the mean time of those run so far; in a run with a
// budget, no less than what is left of it, which extra rounds spend on
// the cells still undecided. False before any point ran.
func (r *runner) eta(now time.Time) (time.Duration, bool) {
	if r.ran == 0 {
		return 0, false
	}
	d := time.Duration(r.pointsLeft() * float64(r.ranTime) / float64(r.ran))
	if r.exp.Budget > 0 {
		d = max(d, r.deadline().Sub(now))
	}
	return d, true
}

// deadline is when the run's budget ends: extra rounds start only while
// they fit before it.
func (r *runner) deadline() time.Time { return r.begin.Add(time.Duration(r.exp.Budget)) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// fmtDuration formats d as m:ss (or h:mm:ss).
func fmtDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// plural returns "n one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
