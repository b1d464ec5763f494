package gaterate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"concbench/internal/cli"
	"concbench/programs/gate"
	"concbench/results"
	"concbench/stats"
)

// Config is a campaign.
type Config struct {
	Runs     int    // gate runs to have in Out (those there count; 0: recount)
	HeadTags string // the head's build tags, an injected regression; empty: no-change runs
	Base     string // the gate's base revision
	Out      string // the campaign's folder
	Judge    bool   // re-judge the stored runs instead of measuring
	Given    map[string]bool
}

// Run runs the campaign cfg describes and writes its summary to stdout
// and to Out/summary.md; progress goes to stderr.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	f := &cfg
	if f.Runs < 0 {
		return fmt.Errorf("gaterate: --runs %d: want 0 or more", f.Runs)
	}
	if f.Judge && (f.Given["runs"] || f.Given["base"]) {
		return errors.New("gaterate: --judge measures nothing: it takes no --runs or --base")
	}
	if err := os.MkdirAll(f.Out, 0o755); err != nil {
		return fmt.Errorf("gaterate: %w", err)
	}
	have, _ := filepath.Glob(filepath.Join(f.Out, "run-*.json"))
	slices.Sort(have)
	if f.Judge {
		for _, js := range have {
			dir, err := runDirOf(js)
			if err != nil {
				return fmt.Errorf("gaterate: %w", err)
			}
			g := gate.Defaults()
			g.Run, g.JSON, g.MD = dir, js, strings.TrimSuffix(js, ".json")+".md"
			g.Given = map[string]bool{"run": true, "json": true, "md": true}
			err = gate.Run(ctx, g, io.Discard, stderr)
			if _, ok := gateCode(err); !ok {
				return fmt.Errorf("gaterate: re-judging %s: %w", dir, err)
			}
		}
	}
	for i := len(have); !f.Judge && i < f.Runs; i++ {
		if err := measureGateRun(ctx, f, i, stderr); err != nil {
			return err
		}
	}
	all, _ := filepath.Glob(filepath.Join(f.Out, "run-*.json"))
	slices.Sort(all)
	var reps []gateReport
	for _, js := range all {
		r, err := results.ReadJSON[gateReport](js)
		if err != nil {
			return fmt.Errorf("gaterate: %w", err)
		}
		reps = append(reps, *r)
	}
	s := summarize(reps, f.HeadTags)
	fmt.Fprint(stdout, s)
	if err := os.WriteFile(filepath.Join(f.Out, "summary.md"), []byte(s), 0o644); err != nil {
		return fmt.Errorf("gaterate: %w", err)
	}
	return nil
}

// measureGateRun runs the gate once as run i of the campaign: its
// verdict in run-NNN.json and .md, its progress in run-NNN.log. An
// interrupted run is removed, so that it is not counted as undecided.
func measureGateRun(ctx context.Context, f *Config, i int, stderr io.Writer) error {
	js := filepath.Join(f.Out, fmt.Sprintf("run-%03d.json", i))
	stem := strings.TrimSuffix(js, ".json")
	g := gate.Defaults()
	g.Base, g.Out, g.JSON, g.MD = f.Base, filepath.Join(f.Out, "runs"), js, stem+".md"
	g.Given = map[string]bool{"base": true, "out": true, "json": true, "md": true}
	if f.HeadTags != "" {
		g.HeadTags, g.Given["head-tags"] = f.HeadTags, true
	}
	start := time.Now()
	var progress bytes.Buffer
	err := gate.Run(ctx, g, io.Discard, &progress)
	if ctx.Err() != nil {
		os.Remove(js)
		os.Remove(stem + ".md")
		return fmt.Errorf("gaterate: run %d interrupted (not kept): %w", i, ctx.Err())
	}
	code, ok := gateCode(err)
	if _, serr := os.Stat(js); !ok || serr != nil {
		return fmt.Errorf("gaterate: run %d: the gate gave no verdict: %v\n%s", i, err, progress.String())
	}
	fmt.Fprintf(stderr, "gaterate: run %d of %d: exit %d (%s)\n", i+1, f.Runs, code, time.Since(start).Round(time.Second))
	if err := os.WriteFile(stem+".log", progress.Bytes(), 0o644); err != nil {
		return fmt.Errorf("gaterate: %w", err)
	}
	return nil
}

// gateCode returns the gate's exit status for the error gate.Run
// returned: 0 pass, 1 regression, 2 undecided; ok is false for an error
// that is no verdict.
func gateCode(err error) (code int, ok bool) {
	var es *cli.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &es) && (es.Code == 1 || es.Code == 2):
		return es.Code, true
	}
	return 0, false
}

// gateReport is what the campaign reads of one gate run's JSON.
type gateReport struct {
	Outcome     string   `json:"outcome"`
	ExitCode    int      `json:"exit_code"`
	Regressions []string `json:"regressions"`
	Rows        []struct {
		Config   string   `json:"config"`
		Load     string   `json:"load"`
		Metric   string   `json:"metric"`
		Method   string   `json:"method"`
		Verdict  string   `json:"verdict"`
		Delta    *float64 `json:"delta"`
		AbsDelta *float64 `json:"abs_delta"`
		P        *float64 `json:"p"`
		PAdj     *float64 `json:"p_holm"`
	} `json:"rows"`
}

// runDirOf returns the run folder a gate report names in its notes
// ("Run folder: DIR (…").
func runDirOf(js string) (string, error) {
	v, err := results.ReadJSON[struct {
		Notes []string `json:"notes"`
	}](js)
	if err != nil {
		return "", err
	}
	for _, n := range v.Notes {
		// A measured run's note, or a re-judged one's.
		for _, prefix := range []string{"Run folder: ", "Judged the existing run folder "} {
			if rest, ok := strings.CutPrefix(n, prefix); ok {
				return strings.TrimSuffix(strings.Fields(rest)[0], "."), nil
			}
		}
	}
	return "", fmt.Errorf("%s names no run folder", js)
}

// summarize writes the campaign's summary in Markdown; tags are
// the head's build tags (empty: no-change runs).
func summarize(reps []gateReport, tags string) string {
	var b strings.Builder
	n := len(reps)
	codes := map[int]int{}
	for _, r := range reps {
		codes[r.ExitCode]++
	}
	what := "no-change runs (false-positive rate)"
	if tags != "" {
		what = "runs with " + tags + " (power)"
	}
	lo, hi := stats.ClopperPearson(codes[1], n, 0.95)
	fmt.Fprintf(&b, "# gate campaign: %d %s\n\n", n, what)
	fmt.Fprintf(&b, "- exit 1 (regression): %d of %d = %.1f%%, 95%% CI [%.1f%%, %.1f%%] (Clopper–Pearson)\n", codes[1], n, pct(codes[1], n), 100*lo, 100*hi)
	fmt.Fprintf(&b, "- exit 0 (pass): %d; exit 2 (undecided): %d\n\n", codes[0], codes[2])

	type key struct{ config, load, metric string }
	type acc struct {
		deltas, ps []float64
		regress    int
		method     string
	}
	rows := map[key]*acc{}
	var order []key
	for _, r := range reps {
		for _, row := range r.Rows {
			k := key{row.Config, row.Load, row.Metric}
			a := rows[k]
			if a == nil {
				a = &acc{method: row.Method}
				rows[k] = a
				order = append(order, k)
			}
			if row.Verdict == "REGRESSION" {
				a.regress++
			}
			d := row.AbsDelta
			if row.Method == "u-test" {
				d = row.Delta
			}
			if d != nil {
				a.deltas = append(a.deltas, *d)
			}
			if row.P != nil {
				a.ps = append(a.ps, *row.P)
			}
		}
	}
	b.WriteString("| configuration | load | metric | method | change of the medians: min · median · max | smallest p | runs flagged |\n")
	b.WriteString("|:--|:--|:--|:--|:--|--:|--:|\n")
	for _, k := range order {
		a := rows[k]
		sort.Float64s(a.deltas)
		rel := a.method == "u-test"
		f := func(v float64) string {
			if rel {
				return fmt.Sprintf("%+.1f%%", 100*v)
			}
			return fmt.Sprintf("%+.3f", v)
		}
		span := "n/a"
		if len(a.deltas) > 0 {
			span = f(a.deltas[0]) + " · " + f(a.deltas[len(a.deltas)/2]) + " · " + f(a.deltas[len(a.deltas)-1])
		}
		minP := "—"
		if len(a.ps) > 0 {
			minP = fmt.Sprintf("%.4f", slices.Min(a.ps))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", k.config, k.load, k.metric, a.method, span, minP, a.regress)
	}
	var flagged []string
	for i, r := range reps {
		if len(r.Regressions) > 0 {
			flagged = append(flagged, fmt.Sprintf("- run %d: %s", i, strings.Join(r.Regressions, "; ")))
		}
	}
	if len(flagged) > 0 {
		b.WriteString("\nRegressions named:\n")
		b.WriteString(strings.Join(flagged, "\n") + "\n")
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
