package agree

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"concbench/programs/aarate"
	"concbench/results"
	"concbench/stats"
)

// Config is an agreement check's settings ("concbench agree"'s flags and
// arguments).
type Config struct {
	// Runs are the runs compared, two or more: run folders, or records
	// (RUN.json) an earlier agree or aarate wrote.
	Runs []string
	// Out, if set, is a folder for the run folders' records and the
	// summary.
	Out string
}

// Run judges every run of c with this binary's rules, checks every claim
// of every decided cell against the other runs, and writes the summary
// (Markdown) to stdout and, with c.Out, to c.Out/summary.md.
func Run(_ context.Context, c Config, stdout io.Writer) error {
	if len(c.Runs) < 2 {
		return fmt.Errorf("agree: %d runs given, want 2 or more (run 'concbench help agree')", len(c.Runs))
	}
	var recs []*aarate.Record
	for _, src := range c.Runs {
		rec, err := readSource(src)
		if err != nil {
			return fmt.Errorf("agree: %s: %w", src, err)
		}
		if c.Out != "" {
			if err := os.MkdirAll(filepath.Join(c.Out, "records"), 0o755); err != nil {
				return fmt.Errorf("agree: %w", err)
			}
			if err := aarate.WriteRecord(filepath.Join(c.Out, "records", rec.Run+".json"), rec); err != nil {
				return fmt.Errorf("agree: %w", err)
			}
		}
		recs = append(recs, rec)
	}
	s := summarize(recs)
	fmt.Fprint(stdout, s)
	if c.Out != "" {
		if err := os.WriteFile(filepath.Join(c.Out, "summary.md"), []byte(s), 0o644); err != nil {
			return fmt.Errorf("agree: %w", err)
		}
	}
	return nil
}

// readSource reads a run folder's record, or a record file.
func readSource(src string) (*aarate.Record, error) {
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		return aarate.RecordRun(src)
	}
	return results.ReadJSON[aarate.Record](src)
}

// summarize judges recs with this binary's rules and writes the
// summary in Markdown.
func summarize(recs []*aarate.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Agreement of %d runs\n\n", len(recs))
	b.WriteString("| run | cells | decided | winner | group | within the margin of the best | A/A control |\n|:--|--:|--:|--:|--:|--:|:--|\n")
	var runs []results.RunCells
	decided := make([]int, 0, len(recs))
	for _, rec := range recs {
		rc := results.RunCells{Name: rec.Run}
		kinds := map[stats.Verdict]int{}
		cells, ctl, sep := 0, 0, []string{}
		for _, cr := range rec.Cells {
			if cr.Column == aarate.Candidate.Label {
				continue
			}
			c := results.DecideRecord(cr, rec.Plan)
			if c.Decision.Verdict == stats.NoTest {
				continue
			}
			cells++
			kinds[c.Decision.Verdict]++
			if c.Control != nil && c.Control.Decision.Verdict != stats.NoTest {
				ctl++
				if c.Control.Separated {
					sep = append(sep, fmt.Sprintf("%s, %s: %s", c.Workload, c.Column.Label, c.Control.Why))
				}
			}
			rc.Cells = append(rc.Cells, c)
		}
		n := kinds[stats.Winner] + kinds[stats.Group] + kinds[stats.Near]
		decided = append(decided, n)
		control := "no twin"
		switch {
		case len(sep) > 0:
			control = fmt.Sprintf("**separated in %d of %d cells**: %s", len(sep), ctl, strings.Join(sep, "; "))
		case ctl > 0:
			control = fmt.Sprintf("%s: not separated in %d cells", rec.Twin, ctl)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %s |\n", rec.Run, cells, n, kinds[stats.Winner], kinds[stats.Group], kinds[stats.Near], control)
		runs = append(runs, rc)
	}
	slices.Sort(decided)
	med := float64(decided[len(decided)/2])
	if len(decided)%2 == 0 {
		med = float64(decided[len(decided)/2-1]+decided[len(decided)/2]) / 2
	}
	fmt.Fprintf(&b, "\nMedian cells decided: %g.\n\n", med)
	a := results.Agree(runs)
	if len(a.Contradictions) == 0 {
		fmt.Fprintf(&b, "Claims of decided cells checked against the other runs: %d; **none contradicted** (no other run's 90 %% interval lies wholly outside a claim).\n", a.Claims)
		return b.String()
	}
	fmt.Fprintf(&b, "Claims of decided cells checked against the other runs: %d; **%d contradicted** (the other run's 90 %% interval wholly outside the claim):\n\n", a.Claims, len(a.Contradictions))
	for _, c := range a.Contradictions {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	return b.String()
}
