package report

import (
	"fmt"
	"slices"
	"strings"

	"concbench/models/registry"
	"concbench/plots"
	"concbench/results"
)

// ClaimsAlpha is the family-wise error rate of the report's Claims
// table: Holm's procedure over every test of the table.
const ClaimsAlpha = 0.05

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

// claimRow is one test of the table: its claim, its pair and the
// test (results.CompareClaim).
type claimRow struct {
	claim *results.Claim
	claimPair
	results.ClaimTest
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
	for _, c := range results.Claims {
		t.Claims = append(t.Claims, fmt.Sprintf("**%s**: %s (%s).", c.Short, c.Text, c.Unit))
	}
	pairs, unpaired := a.claimPairs()
	for ci := range results.Claims {
		for _, p := range pairs {
			t.rows = append(t.rows, a.claimTest(&results.Claims[ci], p))
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
// load (results.CompareClaim).
func (a *analysis) claimTest(c *results.Claim, p claimPair) claimRow {
	lf, hs := a.AtLoad(p.lf).Aggregate(c.Metric), a.AtLoad(p.hs).Aggregate(c.Metric)
	return claimRow{claim: c, claimPair: p, ClaimTest: results.CompareClaim(p.lf, lf, p.hs, hs, c.Metric.HigherIsBetter)}
}

// holmClaims adjusts the table's tests and decides its rows
// (results.HolmClaims at ClaimsAlpha).
func holmClaims(rows []claimRow) {
	tests := make([]*results.ClaimTest, len(rows))
	for i := range rows {
		tests[i] = &rows[i].ClaimTest
	}
	results.HolmClaims(tests, ClaimsAlpha)
}

// cells writes the row as the table shows it: the configurations by
// their names within the workload, with their valid repetitions; the p
// of the direction the data lean.
func (r *claimRow) cells(a *analysis) []string {
	cfg := func(name string, n int) string { return fmt.Sprintf("%s (n=%d)", a.BaseName(name), n) }
	out := []string{r.claim.Short, r.workload, cfg(r.lf, r.N1), cfg(r.hs, r.N2), r.claim.Unit}
	if r.Decision == results.ClaimUntested {
		return append(out, "—", "—", "—", results.ClaimUntested+": "+r.Why)
	}
	ratio := "—"
	switch {
	case r.Ratio.OK:
		ratio = factorCI(r.Ratio)
	case r.Zero:
		ratio = "no ratio (a value is 0)"
	case r.Ratio.Est > 0:
		ratio = fmt.Sprintf("%s (no interval: %s)", factorText(r.Ratio.Est), r.Ratio.Why)
	case r.Ratio.Why != "":
		ratio = "no ratio: " + r.Ratio.Why
	}
	p, adj, dir := r.PLower, r.AdjLower, "LF lower"
	if r.PHigher < r.PLower {
		p, adj, dir = r.PHigher, r.AdjHigher, "LF higher"
	}
	decision := r.Decision
	if decision != results.ClaimUndecided {
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
