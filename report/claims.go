package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"concbench/models/registry"
	"concbench/plots"
	"concbench/results"
	"concbench/stats"
)

// ClaimsAlpha is the family-wise error rate of the report's Claims
// table: Holm's procedure over every test of the table.
const ClaimsAlpha = 0.05

// The decisions of a row of the Claims table.
const (
	claimShown     = "shown"
	claimRefuted   = "refuted"
	claimUndecided = "undecided"
	claimUntested  = "untested"
)

// claimsTable is the report's Claims section: a row per claim, workload
// and pair of an LF and an HS/HR configuration of that workload.
type claimsTable struct {
	Load   string   // the chosen load, "0.50 of capacity"
	Claims []string // each claim, stated once: "**context switches**: LF needs …"
	Head   []string
	Rows   [][]string
	Notes  []string
	rows   []claimRow
}

// claimPair is a Leader/Followers configuration and the
// Half-Sync/Half-Reactive one it is compared with, both of one workload
// (run names).
type claimPair struct {
	workload string
	lf, hs   string
}

// claimRow is one test of the table.
type claimRow struct {
	claim *plots.Claim
	claimPair
	n1, n2 int // valid repetitions of lf and hs
	// paired says the test paired rounds (rounds of them), else it was
	// Welch's on all the values.
	paired bool
	rounds int
	ratio  stats.Ratio
	// pLower and pHigher are the one-sided tests' p-values of LF lower
	// and of LF higher (t on the logarithms); adjLower and adjHigher
	// their Holm-adjusted values over the table (NaN: untested).
	pLower, pHigher, adjLower, adjHigher float64
	sigLower, sigHigher                  bool
	why                                  string // why a row is untested
	decision                             string
	// zero says that a value is 0 (an LF configuration that allocated
	// nothing): a ratio has no meaning; the test has it at half the
	// smallest positive value of the pair, below every other.
	zero bool
}

// claimKey is what must be equal for an LF and an HS/HR configuration
// to be paired: the name within the workload with the model's segment
// and LF's promotion order dropped ("leaderfollowers/lifo/threads=4"
// and "halfsynchalfreactive/threads=4" both "threads=4"; the default
// suite's "leaderfollowers/lifo" and "halfsynchalfreactive" both "").
func claimKey(base, model, order string) string {
	segs := strings.Split(base, "/")
	var out []string
	for i, s := range segs {
		if (i == 0 && s == model) || (order != "" && s == order) {
			continue
		}
		out = append(out, s)
	}
	return strings.Join(out, "/")
}

// defaultArgs reports whether a configuration runs its model as the
// model table's first configuration does (registry: Leader/Followers in
// LIFO order, HS/HR unpooled): its arguments carry none of another
// configuration's of the row, whatever else they set (--gomaxprocs).
func defaultArgs(cfg results.ModelConfig) bool {
	m, ok := registry.Lookup(cfg.Model)
	if !ok || len(m.Configs) == 0 {
		return true
	}
	if cfg.Model == plots.ModelLF {
		return promotionOrder(cfg.Args) == promotionOrder(m.Configs[0].Args)
	}
	for _, v := range m.Configs[1:] {
		for i := range cfg.Args {
			if len(v.Args) > 0 && i+len(v.Args) <= len(cfg.Args) && slices.Equal(cfg.Args[i:i+len(v.Args)], v.Args) {
				return false
			}
		}
	}
	return true
}

// claimPairs returns, per workload, each LF configuration in its model's
// default form paired with the HS/HR configuration of the same kind
// (claimKey) in the same workload — never across workloads — and the
// LF and HS/HR configurations left unpaired, with why.
func (a *analysis) claimPairs() (pairs []claimPair, unpaired []string) {
	for _, w := range a.Workloads {
		var lfs, hss []results.ModelConfig
		for _, cfg := range a.Configs {
			if !slices.Contains(w.Runs, cfg.Name) || a.AtLoad(cfg.Name) == nil {
				continue
			}
			switch cfg.Model {
			case plots.ModelLF:
				lfs = append(lfs, cfg)
			case plots.ModelHSHR:
				hss = append(hss, cfg)
			}
		}
		paired := map[string]bool{}
		for _, lf := range lfs {
			if !defaultArgs(lf) {
				continue
			}
			order := promotionOrder(lf.Args)
			for _, hs := range hss {
				if defaultArgs(hs) && claimKey(a.BaseName(lf.Name), plots.ModelLF, order) == claimKey(a.BaseName(hs.Name), plots.ModelHSHR, "") {
					pairs = append(pairs, claimPair{workload: w.Name, lf: lf.Name, hs: hs.Name})
					paired[lf.Name], paired[hs.Name] = true, true
				}
			}
		}
		for _, cfg := range append(lfs, hss...) {
			if paired[cfg.Name] {
				continue
			}
			why := "no configuration of the other model of the same kind in its workload"
			if !defaultArgs(cfg) {
				why = "not its model's default configuration"
				if cfg.Model == plots.ModelLF {
					why = "promotion order " + promotionOrder(cfg.Args) + ", not the model's default: Promotion orders compares the orders"
				}
			}
			unpaired = append(unpaired, fmt.Sprintf("%s (%s)", cfg.Name, why))
		}
	}
	return pairs, unpaired
}

// claims computes the Claims table, or nil when the run has neither a
// Leader/Followers nor a Half-Sync/Half-Reactive configuration at the
// chosen load.
func (a *analysis) claims() *claimsTable {
	if !a.HasLoad || !slices.ContainsFunc(a.Configs, func(c results.ModelConfig) bool {
		return (c.Model == plots.ModelLF || c.Model == plots.ModelHSHR) && a.AtLoad(c.Name) != nil
	}) {
		return nil
	}
	t := &claimsTable{Load: a.LoadText(), Head: []string{"claim", "workload", "Leader/Followers", "Half-Sync/Half-Reactive", "metric",
		"LF ÷ HS/HR [95% CI]", "p (one-sided)", "Holm", "decision"}}
	for _, c := range plots.Claims {
		t.Claims = append(t.Claims, fmt.Sprintf("**%s**: %s (%s).", c.Short, c.Text, c.Unit))
	}
	pairs, unpaired := a.claimPairs()
	for ci := range plots.Claims {
		for _, p := range pairs {
			t.rows = append(t.rows, a.claimTest(&plots.Claims[ci], p))
		}
	}
	holmClaims(t.rows)
	for i := range t.rows {
		t.Rows = append(t.Rows, t.rows[i].cells(a))
	}
	t.notes(a, pairs, unpaired)
	return t
}

// claimTest tests claim c on pair p's valid repetitions at the chosen
// load: LF ÷ HS/HR on the logarithms of their values, paired by
// repetition where they share enough (repetitions are interleaved, so a
// round shares the machine's drift), one-sided in each direction
// (stats.Decide, as the who-wins table decides), with the ratio's 95 %
// interval.
func (a *analysis) claimTest(c *plots.Claim, p claimPair) claimRow {
	nan := math.NaN()
	r := claimRow{claim: c, claimPair: p, pLower: nan, pHigher: nan, adjLower: nan, adjHigher: nan}
	arm := func(name, label string) stats.Arm {
		agg := a.AtLoad(name).Aggregate(c.Metric)
		x := stats.Arm{Name: label, Values: map[int]float64{}}
		for i, v := range agg.Values {
			x.Values[agg.Reps[i]] = v
			r.zero = r.zero || v <= 0
		}
		return x
	}
	lf, hs := arm(p.lf, "lf"), arm(p.hs, "hs")
	r.n1, r.n2 = len(lf.Values), len(hs.Values)
	switch {
	case r.n1 == 0:
		r.why = "no valid repetition of " + p.lf
		return r
	case r.n2 == 0:
		r.why = "no valid repetition of " + p.hs
		return r
	}
	// Alpha 0.025: the rival's interval is then at 95 %; the p-values
	// do not depend on it.
	d := stats.Decide([]stats.Arm{lf, hs}, stats.DecideOptions{HigherIsBetter: c.Metric.HigherIsBetter, Alpha: 0.025, Unpaired: true})
	exact := len(d.Rivals) == 1 && d.Rivals[0].Lo == d.Rivals[0].Hi && !math.IsNaN(d.Rivals[0].Lo)
	if exact && math.IsNaN(d.Rivals[0].PBehind) {
		// The same in every round: no evidence either way.
		d.Rivals[0].PBehind = 1
	}
	if len(d.Rivals) == 0 || math.IsNaN(d.Rivals[0].PBehind) {
		r.why = d.Why
		if len(d.Rivals) > 0 && d.Rivals[0].Why != "" {
			r.why = d.Rivals[0].Why
		}
		if r.why == "" {
			r.why = "no test"
		}
		return r
	}
	rv := d.Rivals[0]
	r.paired, r.rounds = rv.Paired, rv.Rounds
	// rv compares the better one (d.Best) with the other: its ratio is
	// the better one's advantage, rival ÷ best for a cost.
	lo, est, hi := 1/rv.Hi, 1/rv.Ratio, 1/rv.Lo // LF ÷ HS/HR when LF is the better
	// The other direction's one-sided p; an exact comparison (no spread)
	// shows nothing the other way.
	other := 1 - rv.PBehind
	if exact {
		other = 1
	}
	r.pLower, r.pHigher = rv.PBehind, other
	if d.Best == "hs" {
		lo, est, hi = rv.Lo, rv.Ratio, rv.Hi
		r.pLower, r.pHigher = other, rv.PBehind
	}
	if c.Metric.HigherIsBetter {
		lo, est, hi = 1/hi, 1/est, 1/lo
	}
	r.ratio = stats.Ratio{Est: est, Lo: lo, Hi: hi, Level: 0.95, OK: !r.zero}
	return r
}

// holmClaims adjusts the table's tests by Holm's procedure (stats.Holm)
// at ClaimsAlpha — both directions of every row, one family — and
// decides each row: shown (LF significantly lower), refuted (LF
// significantly higher), undecided, or untested.
func holmClaims(rows []claimRow) {
	ps := make([]float64, 0, 2*len(rows))
	for _, r := range rows {
		ps = append(ps, r.pLower, r.pHigher)
	}
	adj, sig := stats.Holm(ps, ClaimsAlpha)
	for i := range rows {
		r := &rows[i]
		r.adjLower, r.adjHigher = adj[2*i], adj[2*i+1]
		r.sigLower, r.sigHigher = sig[2*i], sig[2*i+1]
		switch {
		case math.IsNaN(r.pLower):
			r.decision = claimUntested
		case r.sigLower:
			r.decision = claimShown
		case r.sigHigher:
			r.decision = claimRefuted
		default:
			r.decision = claimUndecided
		}
	}
}

// cells writes the row as the table shows it: the configurations by
// their names within the workload, with their valid repetitions; the p
// of the direction the data lean.
func (r *claimRow) cells(a *analysis) []string {
	cfg := func(name string, n int) string { return fmt.Sprintf("%s (n=%d)", a.BaseName(name), n) }
	out := []string{r.claim.Short, r.workload, cfg(r.lf, r.n1), cfg(r.hs, r.n2), r.claim.Unit}
	if r.decision == claimUntested {
		return append(out, "—", "—", "—", claimUntested+": "+r.why)
	}
	ratio := "—"
	switch {
	case r.ratio.OK:
		ratio = factorCI(r.ratio)
	case r.zero:
		ratio = "no ratio (a value is 0)"
	case r.ratio.Est > 0:
		ratio = fmt.Sprintf("%s (no interval: %s)", factorText(r.ratio.Est), r.ratio.Why)
	case r.ratio.Why != "":
		ratio = "no ratio: " + r.ratio.Why
	}
	p, adj, dir := r.pLower, r.adjLower, "LF lower"
	if r.pHigher < r.pLower {
		p, adj, dir = r.pHigher, r.adjHigher, "LF higher"
	}
	decision := r.decision
	if decision != claimUndecided {
		decision = "**" + decision + "**"
	}
	return append(out, ratio, fmt.Sprintf("%s (%s)", strings.TrimPrefix(pText(p), "="), dir), strings.TrimPrefix(pText(adj), "="), decision)
}

// notes says how to read the table: the pairing, the tests, the
// configurations left out, and when no row could ever be decided with
// the run's repetitions.
func (t *claimsTable) notes(a *analysis, pairs []claimPair, unpaired []string) {
	if len(pairs) == 0 {
		t.Notes = append(t.Notes, "Nothing to test: no workload of the run has both a Leader/Followers and a Half-Sync/Half-Reactive configuration of the same kind measured at this load.")
	}
	t.Notes = append(t.Notes,
		"Each row sets the Leader/Followers configuration against the Half-Sync/Half-Reactive one of the same workload — never one workload's against another's — "+
			"Leader/Followers in its default promotion order (lifo) only, each with the HS/HR configuration of the same kind (the same thread count in a thread sweep): "+
			"the other orders are compared with each other under Promotion orders.",
		fmt.Sprintf("Over the valid repetitions at %s: the ratio LF ÷ HS/HR is the exponential of the mean difference of their logarithms, paired by repetition "+
			"(repetitions are interleaved, so a round shares the machine's drift; Welch's test on all values where fewer than 3 rounds are shared), with its 95%% interval; "+
			"p is the one-sided t test in the direction the data lean (stats.Decide, as the who-wins table decides); a value of 0 stands at its own configuration's worst, as a bound. "+
			"Both directions of every row are one family, Holm-adjusted together (family-wise α %g). shown: LF significantly lower than HS/HR; refuted: significantly higher; "+
			"undecided: neither. An interval is its row's own, a decision holds for the whole table: a row whose interval excludes 1 can still be undecided.", a.LoadText(), ClaimsAlpha))
	if len(unpaired) > 0 {
		t.Notes = append(t.Notes, "Not paired: "+plots.JoinAnd(unpaired)+".")
	}
}

// Markdown renders the section's body as report.md shows it.
func (t *claimsTable) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The patterns' claims about per-request costs, tested at %s:\n\n", t.Load)
	for _, c := range t.Claims {
		b.WriteString("- " + c + "\n")
	}
	if len(t.Rows) > 0 {
		b.WriteString("\n")
		mdTable(&b, t.Head, t.Rows)
	}
	for _, n := range t.Notes {
		b.WriteString("\n" + n + "\n")
	}
	return b.String()
}
