package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"concbench/internal/cli"
	"concbench/results"
	"concbench/stats"
)

const agreeUsage = `usage: concbench agree [--out DIR] RUN RUN [RUN...]

Checks that independent runs of one experiment agree: decides every run's
who-wins table with this binary's rules and checks every claim of every
decided cell against the same cell of every other run. A claim is
contradicted where the other run's interval for the two configurations'
ratio (their paired comparison, 90 %) lies wholly outside it — a winner
ahead by more than the margin in one run, a rival ahead of it, or within
the margin, in another — which tells "decided in one run, undecided in
the next" (low power) from "decided in one run, excluded by the next" (a
wrong answer). It reports, per run, the cells decided by kind and the A/A
control, then the claims checked and every contradiction.

A RUN is a run folder, or a record (RUN.json) that an earlier
agree --out or aarate wrote: every cell's values by round, enough to
judge the run again after its folder is gone. With --out, each run folder
leaves its record in DIR/records/ and the summary (Markdown, also on
standard output) goes to DIR/summary.md.

  concbench agree --out results/agree out/bench-A out/bench-B out/bench-C
  concbench agree results/agree/records/*.json

Flags:
`

func runAgree(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agree", flag.ContinueOnError)
	out := fs.String("out", "", "a folder for the runs' records and the summary (none: standard output only)")
	if err := cli.Parse(fs, args, stdout, agreeUsage); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return fmt.Errorf("agree: %d runs given, want 2 or more (run 'concbench help agree')", fs.NArg())
	}
	var recs []*aaRecord
	for _, src := range fs.Args() {
		rec, err := readAgreeSource(src)
		if err != nil {
			return fmt.Errorf("agree: %s: %w", src, err)
		}
		if *out != "" {
			if err := os.MkdirAll(filepath.Join(*out, "records"), 0o755); err != nil {
				return fmt.Errorf("agree: %w", err)
			}
			if err := writeRecord(filepath.Join(*out, "records", rec.Run+".json"), rec); err != nil {
				return fmt.Errorf("agree: %w", err)
			}
		}
		recs = append(recs, rec)
	}
	s := summarizeAgree(recs)
	fmt.Fprint(stdout, s)
	if *out != "" {
		if err := os.WriteFile(filepath.Join(*out, "summary.md"), []byte(s), 0o644); err != nil {
			return fmt.Errorf("agree: %w", err)
		}
	}
	return nil
}

// readAgreeSource reads a run folder's record, or a record file.
func readAgreeSource(src string) (*aaRecord, error) {
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		return recordRun(src)
	}
	return results.ReadJSON[aaRecord](src)
}

// summarizeAgree judges recs with this binary's rules and writes the
// summary in Markdown.
func summarizeAgree(recs []*aaRecord) string {
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
			if cr.Column == aaCandidate.Label {
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
