package aarate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"concbench/results"
	"concbench/stats"
)

// Config is a campaign's settings ("concbench aarate"'s flags).
type Config struct {
	// Runs is the runs to have in Out (those already there count; 0:
	// measure nothing, recount).
	Runs int
	// Out is the campaign's folder; Profile the profile each run starts
	// from; BenchArgs more bench flags for every run.
	Out, Profile string
	BenchArgs    []string
	// Bench runs "concbench bench" with args in this process, its
	// progress to progress: how a run is measured.
	Bench func(ctx context.Context, args []string, progress io.Writer) error
}

// Default returns the defaults of every setting but Bench.
func Default() Config { return Config{Runs: 10, Out: "out/aarate", Profile: "aa"} }

// Run runs the campaign c describes, until c.Out holds c.Runs runs, and
// writes its summary to stdout and c.Out/summary.md; the runs' progress
// goes to stderr.
func Run(ctx context.Context, c Config, stdout, stderr io.Writer) error {
	if c.Runs < 0 {
		return fmt.Errorf("aarate: --runs %d: want 0 or more", c.Runs)
	}
	runsDir, recDir := filepath.Join(c.Out, "runs"), filepath.Join(c.Out, "records")
	for _, d := range []string{runsDir, recDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("aarate: %w", err)
		}
	}
	for i := len(sources(runsDir, recDir)); i < c.Runs; i++ {
		if c.Bench == nil {
			return errors.New("aarate: no way to measure a run (Config.Bench)")
		}
		if err := measureAARun(ctx, &c, i, stderr); err != nil {
			return err
		}
	}
	var js []judged
	for _, src := range sources(runsDir, recDir) {
		rec := src.record
		if src.dir != "" {
			var err error
			if rec, err = RecordRun(src.dir); err == nil && rec.Twin == "" {
				err = errors.New("its experiment names no A/A twin")
			}
			if err != nil {
				fmt.Fprintf(stderr, "aarate: %s: %v (left out)\n", src.dir, err)
				continue
			}
			if err := WriteRecord(filepath.Join(recDir, filepath.Base(src.dir)+".json"), rec); err != nil {
				return fmt.Errorf("aarate: %w", err)
			}
		}
		js = append(js, judge(rec))
	}
	s := summarize(js)
	fmt.Fprint(stdout, s)
	if err := os.WriteFile(filepath.Join(c.Out, "summary.md"), []byte(s), 0o644); err != nil {
		return fmt.Errorf("aarate: %w", err)
	}
	return nil
}

// Record is one run as the campaign keeps it (DIR/records/<run>.json,
// small enough to commit): its decision plan and every cell's values,
// the twin's included (results.CellRecord), so that the run can be judged
// again with another decision rule after its folder is gone.
type Record struct {
	Run   string                `json:"run"`
	Twin  string                `json:"twin"`
	Plan  *results.DecisionPlan `json:"plan,omitempty"`
	Cells []results.CellRecord  `json:"cells"`
}

// source is a run to judge: its folder (judged from its points), or,
// where the folder is gone, its record.
type source struct {
	dir    string
	record *Record
}

// sources returns the campaign's runs: the finished run folders under
// runsDir, and the records under recDir whose folder is not there, in
// order of their names (their start times).
func sources(runsDir, recDir string) []source {
	byName := map[string]source{}
	for _, d := range finishedRuns(runsDir) {
		byName[filepath.Base(d)] = source{dir: d}
	}
	recs, _ := filepath.Glob(filepath.Join(recDir, "*.json"))
	for _, js := range recs {
		name := strings.TrimSuffix(filepath.Base(js), ".json")
		if _, ok := byName[name]; ok {
			continue
		}
		if r, err := results.ReadJSON[Record](js); err == nil {
			byName[name] = source{record: r}
		}
	}
	var out []source
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[n])
	}
	return out
}

// writeRecord writes v to path, indented.
func WriteRecord(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// aaRuns returns the finished run folders under dir, in order.
func finishedRuns(dir string) []string {
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
// process: f.Bench) into f.Out/runs, its progress in f.Out/run-NNN.log. An
// interrupted run is left unfinished, and not counted.
func measureAARun(ctx context.Context, f *Config, i int, stderr io.Writer) error {
	args := append([]string{"--profile", f.Profile, "--out", filepath.Join(f.Out, "runs"), "--no-figures", "--validate", "0",
		"--seed", fmt.Sprint(1 + i)}, f.BenchArgs...)
	start := time.Now()
	var progress bytes.Buffer
	err := f.Bench(ctx, args, &progress)
	if werr := os.WriteFile(filepath.Join(f.Out, fmt.Sprintf("run-%03d.log", i)), progress.Bytes(), 0o644); werr != nil {
		return fmt.Errorf("aarate: %w", werr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("aarate: run %d interrupted (not counted): %w", i, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("aarate: run %d: %w", i, err)
	}
	fmt.Fprintf(stderr, "aarate: run %d of %d (%s)\n", i+1, f.Runs, time.Since(start).Round(time.Second))
	return nil
}

// cell is one cell's control, as the campaign counts it.
type cell struct {
	workload, column string
	decided          bool // the cell's own decision (without the twin)
	ctlDecided       bool // the control's decision (with the twin)
	separated        bool
	why              string
}

// judged is one run, judged.
type judged struct {
	dir   string
	twin  string
	cells []cell
	// decided is the cells the run decided, of all with a test.
	decided, tested int
}

// Candidate is the column the campaign judges beside the table's: a
// tail estimate that enters the table only if its control shows it
// honest.
var Candidate = results.WinnerColumn{Label: "p99 of 100 ms intervals at equal load (candidate)", Metric: results.LatencyP99Intervals, AtRate: true, Margin: 0.25}

// recordRun returns the record of run folder dir: every cell of its
// table, and of the candidate column, with its values, as this binary
// reads them (its exclusions and bounds); Twin is "" where its
// experiment names none.
func RecordRun(dir string) (*Record, error) {
	r, pts, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	rec := &Record{Run: filepath.Base(dir), Plan: r.Decisions}
	groups := results.GroupPoints(r, pts)
	for _, w := range results.SuiteWorkloads(r, groups) {
		if w.Twin != "" {
			rec.Twin = w.TwinName + " of " + w.Of
		}
		rate := results.EqualRate(groups, &w)
		for _, col := range append(slices.Clone(results.WinnerColumns), Candidate) {
			if col.AtRate && rate == 0 || !col.AtRate && w.Objective == "" {
				continue
			}
			c := results.DecideCell(groups, &w, col, rate, r.Decisions)
			rec.Cells = append(rec.Cells, c.Record())
		}
	}
	return rec, nil
}

// judge decides every cell of rec with this binary's rules and
// returns its controls.
func judge(rec *Record) judged {
	j := judged{dir: rec.Run, twin: rec.Twin}
	for _, cr := range rec.Cells {
		c := results.DecideRecord(cr, rec.Plan)
		if c.Control == nil || c.Control.Decision.Verdict == stats.NoTest {
			continue
		}
		if cr.Column != Candidate.Label && c.Decision.Verdict != stats.NoTest {
			j.tested++
			if results.Decided(c.Decision) {
				j.decided++
			}
		}
		j.cells = append(j.cells, cell{workload: cr.Workload, column: cr.Column, decided: results.Decided(c.Decision),
			ctlDecided: results.Decided(c.Control.Decision), separated: c.Control.Separated, why: c.Control.Why})
	}
	return j
}

// summarize writes the campaign's summary in Markdown.
func summarize(runs []judged) string {
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
				if c.column != Candidate.Label {
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
		if col != Candidate.Label {
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

// pct is a of n in percent, 0 for n = 0.
func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}
