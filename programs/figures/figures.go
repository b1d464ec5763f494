package figures

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"concbench/plots"
	"concbench/report"
	"concbench/results"
)

// Config is what to render.
type Config struct {
	Run     string  // the run folder (holding run.json and points/)
	Formats string  // figure formats, comma-separated
	Load    float64 // load fraction for the spectrum, per-request cost and per-thread figures
}

// Defaults returns the Config of an unset command line.
func Defaults() Config {
	return Config{Formats: strings.Join(plots.Formats, ","), Load: plots.DefaultLoad}
}

// Run renders cfg.Run and writes to stdout what it rendered and where.
func Run(cfg Config, stdout io.Writer) error {
	if cfg.Run == "" {
		return fmt.Errorf("figures: --run is required (run 'concbench help figures' for the flags)")
	}
	if !(cfg.Load > 0 && cfg.Load <= 1) {
		return fmt.Errorf("figures: --spectrum-load %v: want a fraction of capacity in (0, 1]", cfg.Load)
	}
	var fmts []string
	for _, f := range strings.Split(cfg.Formats, ",") {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" && !slices.Contains(fmts, f) {
			fmts = append(fmts, f)
		}
	}
	if len(fmts) == 0 {
		return fmt.Errorf("figures: --formats is empty (want some of %s)", strings.Join(plots.Formats, ","))
	}
	dir := cfg.Run
	r, pts, err := results.ReadRun(dir)
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	files, err := report.Render(dir, r, pts, report.Options{Formats: fmts, Load: cfg.Load})
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}

	state := "complete"
	if r.Partial() {
		state = "PARTIAL (not finished: rendered the points written so far)"
		if r.Interrupted {
			state = "PARTIAL (interrupted: rendered the points it finished)"
		}
	}
	fmt.Fprintf(stdout, "run %s: %s, %d points\n", r.ID, state, len(pts))
	for _, u := range r.Unreadable {
		fmt.Fprintf(stdout, "warning: left out an unreadable point file: %s\n", u)
	}
	var figs []string
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == report.FiguresDir && filepath.Ext(f) == ".csv" {
			figs = append(figs, strings.TrimSuffix(filepath.Base(f), ".csv"))
		}
	}
	fmt.Fprintf(stdout, "report:  %s\n         %s\n", filepath.Join(dir, report.ReportHTML), filepath.Join(dir, report.ReportMD))
	fmt.Fprintf(stdout, "         %s\n", Screenshot(dir))
	fmt.Fprintf(stdout, "figures: %s/ (%s; %s, each with its data as .csv)\n", filepath.Join(dir, report.FiguresDir),
		strings.Join(figs, ", "), strings.Join(fmts, ", "))
	fmt.Fprintf(stdout, "data:    %s (every point)\n         %s (go tool benchstat -col /config %[2]s)\n",
		filepath.Join(dir, report.PointsCSV), filepath.Join(dir, report.BenchFile))
	return nil
}

// Screenshot takes report.png of the run folder's report with headless
// Chromium, for a quick look, and says what it did: the file's path, or
// why there is none (no Chromium is not an error: the report is complete
// without it).
func Screenshot(dir string) string {
	png := filepath.Join(dir, report.ReportPNG)
	switch err := report.Screenshot(context.Background(), filepath.Join(dir, report.ReportHTML), png); {
	case err == nil:
		return png + " (screenshot)"
	case errors.Is(err, report.ErrNoBrowser):
		return "no screenshot: no Chromium here (apt-get install -y chromium for report.png)"
	default:
		return fmt.Sprintf("no screenshot: %v", strings.SplitN(err.Error(), "\n", 2)[0])
	}
}
