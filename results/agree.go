package results

import (
	"fmt"
	"math"

	"concbench/stats"
)

// RunCells is one run's who-wins table: its name and its cells
// (DecideCells).
type RunCells struct {
	Name  string
	Cells []Cell
}

// Claim kinds, in Contradiction.
const (
	ClaimBehind   = "behind"    // the best ahead of the rival by more than the margin
	ClaimWithin   = "within"    // the rival within the margin of the best
	ClaimNotAhead = "not ahead" // the rival not ahead of the best by more than the margin
)

// Contradiction is a claim of a decided cell in one run that the same
// cell of another run excludes: the other run's interval for the ratio
// of the two configurations lies wholly outside what the claim says.
type Contradiction struct {
	Workload, Column string
	Run, Other       string // the run that decided, the one that excludes it
	Best, Rival      string
	Claim            string // ClaimBehind, ClaimWithin or ClaimNotAhead
	// Ratio, Lo and Hi are the other run's estimate of the best's
	// advantage over the rival (above 1: the best better), with its
	// interval at level 1 − 2·WinnersAlpha.
	Ratio, Lo, Hi float64
}

func (c Contradiction) String() string {
	return fmt.Sprintf("%s, %s: %s decided %s %s %s; %s measured %s's advantage %.2f× [%.2f, %.2f]",
		c.Workload, c.Column, c.Run, c.Rival, c.Claim, c.Best, c.Other, c.Best, c.Ratio, c.Lo, c.Hi)
}

// Agreement is what Agree found.
type Agreement struct {
	// Claims counts the claims of decided cells checked against another
	// run (one per decided cell, rival and other run that has the pair).
	Claims         int
	Contradictions []Contradiction
}

// Agree checks every claim of every decided cell of each run against
// the same cell of every other run: a claim that the best is ahead of a
// rival by more than the margin (Winner, Group's rest, a Near cell's
// rivals shown behind) is contradicted where the other run's interval
// lies wholly at or below 1 + margin; that a rival is within the margin
// (Group) where it lies wholly outside [1/(1 + margin), 1 + margin]; that
// a rival is not ahead by more than the margin (Near) where it lies
// wholly at or below 1/(1 + margin). The other run's interval comes from
// the two configurations' paired comparison in its cell, at level
// 1 − 2·WinnersAlpha (stats.Decide's interval), so that "decided in one
// run, undecided in the next" is told apart from "decided in one run,
// excluded by the next" — the second is a wrong answer.
func Agree(runs []RunCells) Agreement {
	var a Agreement
	type key struct{ workload, column string }
	by := make([]map[key]*Cell, len(runs))
	for i, r := range runs {
		by[i] = map[key]*Cell{}
		for k := range r.Cells {
			c := &r.Cells[k]
			by[i][key{c.Workload, c.Column.Label}] = c
		}
	}
	for i, r := range runs {
		for k := range r.Cells {
			c := &r.Cells[k]
			if !Decided(c.Decision) {
				continue
			}
			claims := cellClaims(c.Decision)
			for j := range runs {
				o := by[j][key{c.Workload, c.Column.Label}]
				if j == i || o == nil {
					continue
				}
				for _, cl := range claims {
					ratio, lo, hi, ok := pairRatio(o, c.Decision.Best, cl.rival)
					if !ok {
						continue
					}
					a.Claims++
					if excludes(cl.kind, lo, hi, c.Column.Margin) {
						a.Contradictions = append(a.Contradictions, Contradiction{Workload: c.Workload, Column: c.Column.Label,
							Run: r.Name, Other: runs[j].Name, Best: c.Decision.Best, Rival: cl.rival, Claim: cl.kind, Ratio: ratio, Lo: lo, Hi: hi})
					}
				}
			}
		}
	}
	return a
}

type claim struct{ rival, kind string }

// cellClaims returns the claims a decided cell makes about each rival.
func cellClaims(d stats.Decision) []claim {
	var out []claim
	for _, r := range d.Rivals {
		switch {
		case d.Verdict == stats.Near && !(r.Status == stats.Behind && r.Held):
			out = append(out, claim{r.Name, ClaimNotAhead})
		case r.Status == stats.Equivalent:
			out = append(out, claim{r.Name, ClaimWithin})
		default: // Winner, Group's rest, Near's rivals shown behind
			out = append(out, claim{r.Name, ClaimBehind})
		}
	}
	return out
}

// pairRatio returns cell o's estimate of best's advantage over rival
// from their paired comparison alone, with its interval; false where o
// lacks either or the pair has no interval.
func pairRatio(o *Cell, best, rival string) (ratio, lo, hi float64, ok bool) {
	var arms []stats.Arm
	for _, name := range []string{best, rival} {
		for _, a := range o.Arms {
			if a.Name == name {
				arms = append(arms, a)
			}
		}
	}
	if len(arms) != 2 {
		return 0, 0, 0, false
	}
	d := stats.Decide(arms, stats.DecideOptions{HigherIsBetter: o.Column.Metric.HigherIsBetter, Margin: o.Column.Margin, Alpha: WinnersAlpha})
	if len(d.Rivals) != 1 {
		return 0, 0, 0, false
	}
	r := d.Rivals[0]
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) {
		return 0, 0, 0, false
	}
	if d.Best == best {
		return r.Ratio, r.Lo, r.Hi, true
	}
	return 1 / r.Ratio, 1 / r.Hi, 1 / r.Lo, true
}

// excludes reports whether the interval [lo, hi] of the best's advantage
// lies wholly outside what a claim of kind says at margin m.
func excludes(kind string, lo, hi, m float64) bool {
	switch kind {
	case ClaimBehind:
		return hi <= 1+m
	case ClaimWithin:
		return lo >= 1+m || hi <= 1/(1+m)
	}
	return hi <= 1/(1+m)
}
