package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"concbench/internal/cli"
	"concbench/results"
	"concbench/stats"
)

const aarateUsage = `usage: concbench aarate [--runs N] [--out DIR] [--profile aa] [bench flags after --]
       concbench aarate --runs 0 [--out DIR]

Measures how often the who-wins table is wrong: it runs an experiment
with an A/A twin (a configuration measured a second time under another
name: its truth is its original's) until DIR holds --runs runs, decides
every run's table with this binary's rules, and reports, per column of
the table, how often a cell separated the twin from its original — by a
decision, or by a claim that holds (Holm's within the cell) — with the
exact (Clopper–Pearson) 95% confidence interval of that false-decision
rate. Beside the table's columns it judges the candidate column "p99 of
100 ms intervals, median" the same way, so that a tail estimate enters the
table only if its control shows it honest.

The default experiment (--profile aa) is small and covers every column:
leaderfollowers/lifo (twinned), netpoll and proactor under the suite's cpu
and tiny workloads, with their latency objectives, the equal load and the
suite's time budget rule scaled to 3 minutes; a run takes about 4 minutes
on 2 vCPUs. Each run's seed is 1 + its number, so that runs are
independent. Flags after -- go to bench (e.g. -- --models ... --twin ...).

The runs already in DIR count, so an interrupted campaign continues where
it stopped, and --runs 0 measures nothing: it re-judges and recounts the
runs there with this binary's rules (any run folder under DIR/runs whose
experiment names a twin, from this binary or another). Each run judged
leaves a record, DIR/records/<run>.json: every cell's values by round,
the twin's included, small enough to commit; where a run's folder is
gone, its record is judged instead (with this binary's decision rule, on
the values as the binary that wrote the record read them). The summary
(Markdown) goes to standard output and to DIR/summary.md.

  concbench aarate --runs 10 --out out/aarate
  concbench aarate --runs 0 --out results/aarate/after   (the committed records)

Flags:
`

// aarateFlags are the aarate command's settings.
type aarateFlags struct {
	runs         int
	out, profile string
	bench        []string
}

func runAarate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("aarate", flag.ContinueOnError)
	var f aarateFlags
	fs.IntVar(&f.runs, "runs", 10, "runs to have in --out (those already there count; 0: measure nothing, recount)")
	fs.StringVar(&f.out, "out", "out/aarate", "the campaign's folder")
	fs.StringVar(&f.profile, "profile", "aa", "the profile each run starts from (its twin: --twin after --)")
	if err := cli.Parse(fs, args, stdout, aarateUsage); err != nil {
		return err
	}
	f.bench = fs.Args()
	if f.runs < 0 {
		return fmt.Errorf("aarate: --runs %d: want 0 or more", f.runs)
	}
	return aarate(ctx, &f, stdout, stderr)
}

// aarate runs the campaign f describes and writes its summary.
func aarate(ctx context.Context, f *aarateFlags, stdout, stderr io.Writer) error {
	runsDir, recDir := filepath.Join(f.out, "runs"), filepath.Join(f.out, "records")
	for _, d := range []string{runsDir, recDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("aarate: %w", err)
		}
	}
	for i := len(aaSources(runsDir, recDir)); i < f.runs; i++ {
		if err := measureAARun(ctx, f, i, stderr); err != nil {
			return err
		}
	}
	var judged []aaJudged
	for _, src := range aaSources(runsDir, recDir) {
		rec := src.record
		if src.dir != "" {
			var err error
			if rec, err = recordRun(src.dir); err == nil && rec.Twin == "" {
				err = errors.New("its experiment names no A/A twin")
			}
			if err != nil {
				fmt.Fprintf(stderr, "aarate: %s: %v (left out)\n", src.dir, err)
				continue
			}
			if err := writeRecord(filepath.Join(recDir, filepath.Base(src.dir)+".json"), rec); err != nil {
				return fmt.Errorf("aarate: %w", err)
			}
		}
		judged = append(judged, judgeAARecord(rec))
	}
	s := summarizeAARuns(judged)
	fmt.Fprint(stdout, s)
	if err := os.WriteFile(filepath.Join(f.out, "summary.md"), []byte(s), 0o644); err != nil {
		return fmt.Errorf("aarate: %w", err)
	}
	return nil
}

// aaRecord is one run as the campaign keeps it (DIR/records/<run>.json,
// small enough to commit): its decision plan and every cell's values,
// the twin's included (results.CellRecord), so that the run can be judged
// again with another decision rule after its folder is gone.
type aaRecord struct {
	Run   string                `json:"run"`
	Twin  string                `json:"twin"`
	Plan  *results.DecisionPlan `json:"plan,omitempty"`
	Cells []results.CellRecord  `json:"cells"`
}

// aaSource is a run to judge: its folder (judged from its points), or,
// where the folder is gone, its record.
type aaSource struct {
	dir    string
	record *aaRecord
}

// aaSources returns the campaign's runs: the finished run folders under
// runsDir, and the records under recDir whose folder is not there, in
// order of their names (their start times).
func aaSources(runsDir, recDir string) []aaSource {
	byName := map[string]aaSource{}
	for _, d := range aaRuns(runsDir) {
		byName[filepath.Base(d)] = aaSource{dir: d}
	}
	recs, _ := filepath.Glob(filepath.Join(recDir, "*.json"))
	for _, js := range recs {
		name := strings.TrimSuffix(filepath.Base(js), ".json")
		if _, ok := byName[name]; ok {
			continue
		}
		if r, err := results.ReadJSON[aaRecord](js); err == nil {
			byName[name] = aaSource{record: r}
		}
	}
	var out []aaSource
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[n])
	}
	return out
}

// writeRecord writes v to path, indented.
func writeRecord(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// aaRuns returns the finished run folders under dir, in order.
func aaRuns(dir string) []string {
	all, _ := filepath.Glob(filepath.Join(dir, "bench-*"))
	var out []string
	for _, d := range all {
		if r, _, err := results.ReadRun(d); err == nil && !r.Partial() {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// measureAARun measures run i of the campaign (concbench bench, in this
// process) into f.out/runs, its progress in f.out/run-NNN.log. An
// interrupted run is left unfinished, and not counted.
func measureAARun(ctx context.Context, f *aarateFlags, i int, stderr io.Writer) error {
	args := append([]string{"--profile", f.profile, "--out", filepath.Join(f.out, "runs"), "--no-figures", "--validate", "0",
		"--seed", fmt.Sprint(1 + i)}, f.bench...)
	start := time.Now()
	var progress bytes.Buffer
	err := runBench(ctx, args, nil, io.Discard, &progress)
	if werr := os.WriteFile(filepath.Join(f.out, fmt.Sprintf("run-%03d.log", i)), progress.Bytes(), 0o644); werr != nil {
		return fmt.Errorf("aarate: %w", werr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("aarate: run %d interrupted (not counted): %w", i, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("aarate: run %d: %w", i, err)
	}
	fmt.Fprintf(stderr, "aarate: run %d of %d (%s)\n", i+1, f.runs, time.Since(start).Round(time.Second))
	return nil
}

// aaCell is one cell's control, as the campaign counts it.
type aaCell struct {
	workload, column string
	decided          bool // the cell's own decision (without the twin)
	ctlDecided       bool // the control's decision (with the twin)
	separated        bool
	why              string
}

// aaJudged is one run, judged.
type aaJudged struct {
	dir   string
	twin  string
	cells []aaCell
	// decided is the cells the run decided, of all with a test.
	decided, tested int
}

// aaCandidate is the column the campaign judges beside the table's: a
// tail estimate that enters the table only if its control shows it
// honest.
var aaCandidate = results.WinnerColumn{Label: "p99 of 100 ms intervals at equal load (candidate)", Metric: results.LatencyP99Intervals, AtRate: true, Margin: 0.25}

// recordRun returns the record of run folder dir: every cell of its
// table, and of the candidate column, with its values, as this binary
// reads them (its exclusions and bounds); Twin is "" where its
// experiment names none.
func recordRun(dir string) (*aaRecord, error) {
	r, pts, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	rec := &aaRecord{Run: filepath.Base(dir), Plan: r.Decisions}
	groups := results.GroupPoints(r, pts)
	for _, w := range results.SuiteWorkloads(r, groups) {
		if w.Twin != "" {
			rec.Twin = w.TwinName + " of " + w.Of
		}
		rate := results.EqualRate(groups, &w)
		for _, col := range append(slices.Clone(results.WinnerColumns), aaCandidate) {
			if col.AtRate && rate == 0 || !col.AtRate && w.Objective == "" {
				continue
			}
			c := results.DecideCell(groups, &w, col, rate, r.Decisions)
			rec.Cells = append(rec.Cells, c.Record())
		}
	}
	return rec, nil
}

// judgeAARecord decides every cell of rec with this binary's rules and
// returns its controls.
func judgeAARecord(rec *aaRecord) aaJudged {
	j := aaJudged{dir: rec.Run, twin: rec.Twin}
	for _, cr := range rec.Cells {
		c := results.DecideRecord(cr, rec.Plan)
		if c.Control == nil || c.Control.Decision.Verdict == stats.NoTest {
			continue
		}
		if cr.Column != aaCandidate.Label && c.Decision.Verdict != stats.NoTest {
			j.tested++
			if results.Decided(c.Decision) {
				j.decided++
			}
		}
		j.cells = append(j.cells, aaCell{workload: cr.Workload, column: cr.Column, decided: results.Decided(c.Decision),
			ctlDecided: results.Decided(c.Control.Decision), separated: c.Control.Separated, why: c.Control.Why})
	}
	return j
}

// summarizeAARuns writes the campaign's summary in Markdown.
func summarizeAARuns(runs []aaJudged) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A/A campaign: %d runs\n\n", len(runs))
	if len(runs) == 0 {
		b.WriteString("No finished run with an A/A twin.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Twin: %s. A cell separates the twin from its original when its decision with the twin, or a claim of it that holds (Holm's within the cell), puts one leading and the other behind: a false decision.\n\n", runs[0].twin)
	type acc struct{ cells, sep, ctlDecided, decided int }
	by := map[string]*acc{}
	var order []string
	sepRuns := 0
	for _, r := range runs {
		sepRun := false
		for _, c := range r.cells {
			a := by[c.column]
			if a == nil {
				a = &acc{}
				by[c.column] = a
				order = append(order, c.column)
			}
			a.cells++
			if c.separated {
				a.sep++
				if c.column != aaCandidate.Label {
					sepRun = true
				}
			}
			if c.ctlDecided {
				a.ctlDecided++
			}
			if c.decided {
				a.decided++
			}
		}
		if sepRun {
			sepRuns++
		}
	}
	b.WriteString("| column | cells | separated | false-decision rate, 95% CI | control cells decided | table cells decided |\n")
	b.WriteString("|:--|--:|--:|:--|--:|--:|\n")
	total := acc{}
	for _, col := range order {
		a := by[col]
		lo, hi := stats.ClopperPearson(a.sep, a.cells, 0.95)
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% [%.1f%%, %.1f%%] | %d | %d |\n", col, a.cells, a.sep, pct(a.sep, a.cells), 100*lo, 100*hi, a.ctlDecided, a.decided)
		if col != aaCandidate.Label {
			total.cells, total.sep, total.ctlDecided, total.decided = total.cells+a.cells, total.sep+a.sep, total.ctlDecided+a.ctlDecided, total.decided+a.decided
		}
	}
	lo, hi := stats.ClopperPearson(total.sep, total.cells, 0.95)
	fmt.Fprintf(&b, "| **the table's columns** | %d | %d | %.1f%% [%.1f%%, %.1f%%] | %d | %d |\n\n", total.cells, total.sep, pct(total.sep, total.cells), 100*lo, 100*hi, total.ctlDecided, total.decided)
	rlo, rhi := stats.ClopperPearson(sepRuns, len(runs), 0.95)
	fmt.Fprintf(&b, "Runs with any table cell separating the twin: %d of %d, 95%% CI [%.1f%%, %.1f%%].\n\n", sepRuns, len(runs), 100*rlo, 100*rhi)
	b.WriteString("| run | table cells decided | separated |\n|:--|--:|:--|\n")
	for _, r := range runs {
		var sep []string
		for _, c := range r.cells {
			if c.separated {
				sep = append(sep, fmt.Sprintf("%s, %s: %s", c.workload, c.column, c.why))
			}
		}
		s := "none"
		if len(sep) > 0 {
			s = strings.Join(sep, "; ")
		}
		fmt.Fprintf(&b, "| %s | %d of %d | %s |\n", filepath.Base(r.dir), r.decided, r.tested, s)
	}
	return b.String()
}
