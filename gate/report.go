package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"concbench/results"
)

// WriteMarkdown writes the report as Markdown for a pull-request
// comment: the outcome, the regressions by name, a table in benchstat's
// manner (per configuration × load × metric: base, head, delta, the test
// and its threshold, the verdict), what kept the gate from deciding, and
// the notes.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := map[Outcome]string{Pass: "pass", Regressed: "REGRESSION", Unsure: "undecided"}[r.Outcome]
	fmt.Fprintf(&b, "## concbench gate: %s (exit %d)\n\n", title, r.ExitCode())
	if regs := r.Regressions(); len(regs) > 0 {
		b.WriteString("Regressions:\n")
		for _, s := range regs {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s: %s · %s: %s · %s\n\n", r.Base.Label, sideText(&r.Base), r.Head.Label, sideText(&r.Head), r.Mode)

	if len(r.Rows) > 0 {
		fmt.Fprintf(&b, "| configuration | load | metric | %s | %s | delta | test | verdict |\n", r.Base.Label, r.Head.Label)
		b.WriteString("|:--|:--|:--|--:|--:|--:|:--|:--|\n")
		prev := ""
		for i := range r.Rows {
			row := &r.Rows[i]
			cfg, load := row.Config, results.LoadLabel(row.Kind, row.Fraction)
			if key := cfg + "\x00" + load; key == prev {
				cfg, load = "", "" // benchstat's manner: the name once per block
			} else {
				prev = key
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cfg, load, shortName(row),
				row.cell(&row.Old), row.cell(&row.New), row.deltaText(), row.testText(), row.verdictText())
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "`~` no significant change, or within the tolerance · `+x%% better`, `better` an improvement (never fails) · "+
			"**REGRESSION** beyond the threshold in the bad direction · `undecided` too few valid samples · `not gated` the metric is too coarse at that load. "+
			"Values are medians of the valid repetitions (± the 95 %% confidence interval of the median, for U-test rows); "+
			"server failures are counts of points. U test: one-sided Mann–Whitney with its exact tail (stats.MannWhitneyGreater), significant after Holm's correction over "+
			"the run's %d U tests (family-wise α = %g; p_adj is Holm-adjusted) *and* at least the minimum effect shown; "+
			"strict and tolerance rows compare the medians with the bound shown; a failures row fails on any more server failures on the %s side.\n\n",
			r.uTests(), r.Alpha, r.Head.Label)
	}

	if len(r.Problems) > 0 {
		b.WriteString("The gate could not decide:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		b.WriteString("\n")
	}
	var why []string
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Why != "" {
			why = append(why, fmt.Sprintf("%s %s %s: %s", row.Config, results.LoadLabel(row.Kind, row.Fraction), shortName(row), row.Why))
		}
	}
	if len(why) > 0 {
		b.WriteString("Row details:\n")
		for _, s := range why {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	if ex := r.excluded(); len(ex) > 0 {
		b.WriteString("Points excluded from the samples (never mixed in): those the server failed (counted in its failures rows) and those whose load-generator verdict on itself is invalid:\n")
		for _, s := range ex {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("Notes:\n")
		for _, s := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sideText describes a side: its commit (shortened), dirty, and ref.
func sideText(s *Side) string {
	c := s.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	t := "`" + c + "`"
	if s.Dirty {
		t += " with uncommitted changes"
	}
	if s.Ref != "" {
		t += " (" + s.Ref + ")"
	}
	return t
}

// shortName is a row's metric as the table names it.
func shortName(row *Row) string {
	switch {
	case row.Metric == results.Capacity.Name:
		return "throughput req/s"
	case row.Metric == results.CPUPerReq.Name:
		return "server CPU µs/req"
	case strings.HasSuffix(row.Unit, "/req"):
		return row.Unit
	}
	return row.Label
}

// cell formats one side's sample: the median, with the confidence
// interval's half-width for U-test rows, as benchstat prints it.
func (row *Row) cell(s *results.Stats) string {
	if s.N == 0 {
		return "n/a"
	}
	v := fmtUnit(row.Unit, s.Median)
	if row.Method != UTest {
		return v
	}
	if !s.HasCI() {
		return v + " ±∞"
	}
	if s.Median == 0 {
		return v
	}
	h := math.Max(s.Hi-s.Median, s.Median-s.Lo) / math.Abs(s.Median)
	return fmt.Sprintf("%s ±%.0f%%", v, 100*h)
}

// testText is the row's test column: the p-value and sample sizes, or
// the method, with the threshold.
func (row *Row) testText() string {
	n := fmt.Sprintf("n=%d+%d", row.Old.N, row.New.N)
	switch row.Method {
	case UTest:
		p := "p=n/a"
		if !math.IsNaN(row.P) {
			p = fmt.Sprintf("p=%.4f p_adj=%.3f", row.P, row.PAdj)
		}
		return fmt.Sprintf("%s %s, min %s", p, n, strings.TrimPrefix(row.Threshold, "≥"))
	case Failures:
		return "failures > base"
	case Tolerance:
		if !math.IsNaN(row.PShift) {
			return fmt.Sprintf("%s %s %s, shift p=%.4f", row.Method, row.Threshold, n, row.PShift)
		}
	}
	return fmt.Sprintf("%s %s %s", row.Method, row.Threshold, n)
}

// uTests counts the U tests the run made: the family of the Holm
// correction (rows with too few samples for a test are not in it).
func (r *Report) uTests() int {
	n := 0
	for i := range r.Rows {
		if r.Rows[i].Method == UTest && !math.IsNaN(r.Rows[i].PAdj) {
			n++
		}
	}
	return n
}

// excluded returns the points left out of the samples, once per group
// and point (every rule of a group excludes the same points).
func (r *Report) excluded() []string {
	var out []string
	for i := range r.Rows {
		row := &r.Rows[i]
		for _, e := range row.Excluded {
			s := fmt.Sprintf("%s %s: %s", row.Config, results.LoadLabel(row.Kind, row.Fraction), e)
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// jsonSummary is a row's sample (Row.Old, Row.New) as JSON: absent
// statistics are null.
type jsonSummary struct {
	N      int       `json:"n"`
	Median *float64  `json:"median"`
	Lo     *float64  `json:"ci_lo"`
	Hi     *float64  `json:"ci_hi"`
	Min    *float64  `json:"min"`
	Max    *float64  `json:"max"`
	Values []float64 `json:"values"`
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func summaryJSON(s *results.Stats) jsonSummary {
	vals := s.Values
	if vals == nil {
		vals = []float64{}
	}
	return jsonSummary{N: s.N, Median: num(s.Median), Lo: num(s.Lo), Hi: num(s.Hi), Min: num(s.Min), Max: num(s.Max), Values: vals}
}

// MarshalJSON writes the row with its samples and numbers; a number that
// does not exist (a p-value of a strict row, a relative change from 0)
// is null.
func (row Row) MarshalJSON() ([]byte, error) {
	type plain Row // without the method, so that it does not recurse
	return json.Marshal(struct {
		plain
		Load     string      `json:"load"`
		Old      jsonSummary `json:"old"`
		New      jsonSummary `json:"new"`
		Delta    *float64    `json:"delta"`
		AbsDelta *float64    `json:"abs_delta"`
		P        *float64    `json:"p"`
		PAdj     *float64    `json:"p_holm"`
	}{plain(row), results.LoadLabel(row.Kind, row.Fraction), summaryJSON(&row.Old), summaryJSON(&row.New), num(row.Delta), num(row.AbsDelta), num(row.P), num(row.PAdj)})
}

// WriteJSON writes the report as indented JSON, with its exit code and
// the regressions by name.
func (r *Report) WriteJSON(w io.Writer) error {
	regs := r.Regressions()
	if regs == nil {
		regs = []string{}
	}
	b, err := json.MarshalIndent(struct {
		*Report
		ExitCode    int      `json:"exit_code"`
		Regressions []string `json:"regressions"`
	}{r, r.ExitCode(), regs}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
