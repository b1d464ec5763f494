package figures

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concbench/plots"
	"concbench/report"
	"concbench/results"
	"concbench/results/resultstest"
)

func TestFigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.WriteRun(dir); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(Config{Run: dir, Formats: "svg, PNG,svg", Load: 0.9}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"complete", filepath.Join(dir, report.ReportHTML), filepath.Join(dir, report.ReportMD),
		filepath.Join(dir, report.PointsCSV), filepath.Join(dir, report.BenchFile), "latency, spectrum, capacity, ctxsw, cpu, allocs, mechanisms, threads", "svg, png"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{"figures/latency.svg", "figures/latency.png", "figures/latency.csv", "report.md", "report.html", "points.csv", "bench.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "figures/latency.pdf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("latency.pdf written without being asked for: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.ReportMD))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Costs per request at 0.90 of capacity") {
		t.Errorf("--spectrum-load 0.9 did not choose 0.90")
	}
}

func TestFiguresPartial(t *testing.T) {
	t.Parallel()
	written := 0
	dir := resultstest.WriteTemp(t, func(r *results.Run) { r.Interrupted, r.Finished = true, time.Time{} },
		func(*results.Point) bool { written++; return written == 1 }) // the first point only
	var out bytes.Buffer
	if err := Run(Config{Run: dir, Formats: "svg", Load: plots.DefaultLoad}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "PARTIAL (interrupted") || !strings.Contains(out.String(), "1 points") {
		t.Errorf("output does not say the run is partial:\n%s", out.String())
	}
}

// TestFiguresUnreadablePoint: one corrupt point file does not stop the
// figures: the rest is rendered, and the output and the report's run
// warnings name the file.
func TestFiguresUnreadablePoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := resultstest.WriteRun(dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, results.PointsDir, "*.json"))
	if len(files) == 0 {
		t.Fatal("no point files")
	}
	bad := files[len(files)/2]
	if err := os.WriteFile(bad, []byte(`{"schema": 1, "config": `), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(Config{Run: dir, Formats: "svg", Load: plots.DefaultLoad}, &out); err != nil {
		t.Fatalf("figures with one corrupt point: %v", err)
	}
	if !strings.Contains(out.String(), "warning: left out an unreadable point file: "+bad) {
		t.Errorf("output does not name the unreadable file %s:\n%s", bad, out.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, report.ReportMD))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), filepath.Join(results.PointsDir, filepath.Base(bad))+" could not be read") {
		t.Errorf("the report does not name the unreadable file %s", filepath.Base(bad))
	}
}
