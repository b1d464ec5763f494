package report

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"concbench/plots"
	"concbench/plots/plotstest"
	"concbench/results"
	"concbench/results/resultstest"
)

// TestReportHTMLSelfContained checks that report.html embeds every figure
// and refers to no other file when the figures were asked for in a
// format other than SVG (TeX: PNG would check nothing more here, and it
// is by far the slowest format to render under the race detector).
func TestReportHTMLSelfContained(t *testing.T) {
	dir, r, pts := synthetic(t)
	if _, err := Render(dir, r, pts, Options{Formats: []string{"tex"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(html, -1)
	if len(refs) != len(plotstest.SyntheticFigures) {
		t.Errorf("%d src/href attributes, want one image per figure (%d)", len(refs), len(plotstest.SyntheticFigures))
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[1], "data:image/svg&#43;xml;base64,") {
			t.Errorf("report.html refers to %.60q, want only embedded data", m[1])
		}
	}
	for _, want := range []string{"io_uring_setup: operation not permitted", "halfsynchalfreactive open 0.90 rep 5",
		"leaderfollowers/fifo open 0.90 rep 2", "achieved 40219 req/s", `<p class="banner">Gaps in this run:`,
		"<details><summary>Every point that is not valid", "<td>0/6 — generator-lag</td>", "<code>over-capacity</code>: "} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestPartialAndEmptyRuns renders an interrupted run with a part of its
// points, and a run with no points at all.
func TestPartialAndEmptyRuns(t *testing.T) {
	tests := []struct {
		name    string
		keep    func(p *results.Point) bool
		wantMD  []string
		figures int
	}{
		{
			name: "interrupted after the capacity, mechanisms and 0.10 points",
			keep: func(p *results.Point) bool {
				return p.Kind == results.KindCapacity || p.Kind == results.KindMechanisms || p.Fraction == 0.1
			},
			wantMD: []string{"**Partial run:** the run was interrupted", "Costs per request at 0.10 of capacity"},
			// Every figure still has data, at 0.10.
			figures: len(plotstest.SyntheticFigures),
		},
		{
			name:    "interrupted before any point",
			keep:    func(*results.Point) bool { return false },
			wantMD:  []string{"**Partial run:**", "0 points", "Latency vs offered load: not drawn", "Capacity: not drawn"},
			figures: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := resultstest.WriteTemp(t, func(r *results.Run) { r.Interrupted, r.Finished = true, time.Time{} }, tc.keep)
			files, err := RenderRun(dir, Options{Formats: []string{"svg"}})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range files {
				if strings.HasSuffix(f, ".svg") {
					n++
				}
			}
			if n != tc.figures {
				t.Errorf("%d figures, want %d", n, tc.figures)
			}
			md, err := os.ReadFile(filepath.Join(dir, ReportMD))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantMD {
				if !strings.Contains(string(md), want) {
					t.Errorf("report.md lacks %q", want)
				}
			}
		})
	}
}

func TestUnknownFormat(t *testing.T) {
	dir, r, pts := synthetic(t)
	_, err := Render(dir, r, pts, Options{Formats: []string{"svg", "gif"}})
	if err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("RenderRun with gif: %v, want an error naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ReportMD)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RenderRun wrote a report before rejecting the format: %v", err)
	}
}

// TestReportServerErrors: errors a server counted (a connection refused at
// a model's limit) are listed per configuration in the report.
func TestReportServerErrors(t *testing.T) {
	dir, r, pts := synthetic(t)
	for i := range pts {
		if pts[i].Config.Name == "netpoll" && pts[i].Measured() {
			pts[i].Server.Errors = map[string]uint64{"refused": 2, "peer_reset": 1}
		}
	}
	if _, err := Render(dir, r, pts, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportMD))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`- netpoll: peer_reset [0-9]+, refused [0-9]+`).Match(md) {
		t.Errorf("report.md does not list netpoll's server errors")
	}
	if strings.Contains(string(md), "- leaderfollowers/lifo: ") {
		t.Errorf("report.md lists server errors for a configuration without any")
	}
}

// TestAnswersWithoutFactor: where a configuration's values include 0 (no
// allocations at all), ratios have no meaning; the answer names those
// configurations once with the reason instead of repeating it per
// configuration.
func TestAnswersWithoutFactor(t *testing.T) {
	dir, r, pts := synthetic(t)
	zeroed := map[string]bool{}
	for i := range pts {
		if pts[i].Config.Name != pts[0].Config.Name {
			pts[i].Server.AllocsPerRequest = 0
			zeroed[pts[i].Config.Name] = true
		}
	}
	if len(zeroed) < 2 {
		t.Fatalf("the synthetic run has %d other configurations, want at least 2", len(zeroed))
	}
	if _, err := Render(dir, r, pts, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(md), "\n") {
		if strings.Contains(l, "Allocations per request") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no answer about allocations in:\n%s", md)
	}
	if strings.Count(line, "No factor for") != 1 || strings.Contains(line, "(no factor") {
		t.Errorf("answer: %s\nwant the configurations without a factor named once, with the reason", line)
	}
}

// syntheticDir is the synthetic run, written once for the package's
// tests (TestMain); tests read it and render into folders of their own.
var syntheticDir string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(resultstest.Main(m, &syntheticDir))
}

// synthetic reads the synthetic run and returns an empty folder to render
// it into (plotstest.Synthetic).
func synthetic(t *testing.T) (string, *results.Run, []results.Point) {
	t.Helper()
	return plotstest.Synthetic(t, syntheticDir)
}

// TestGolden renders the synthetic run: every figure in every format with
// its CSV, each file what it claims to be, and report.md as the golden
// file (the figures' own golden files are package plots').
func TestGolden(t *testing.T) {
	dir, r, pts := synthetic(t)
	files, err := Render(dir, r, pts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, f := range files {
		written[f] = true
	}
	magic := map[string]string{"svg": "<?xml", "pdf": "%PDF-", "png": "\x89PNG", "tex": "%% gonum/plot created for LaTeX/pgf"}
	for _, name := range plotstest.SyntheticFigures {
		for _, ext := range append(append([]string(nil), plots.Formats...), "csv") {
			path := filepath.Join(dir, FiguresDir, name+"."+ext)
			if !written[path] {
				t.Errorf("RenderRun did not report %s", path)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				continue
			}
			if m, ok := magic[ext]; ok && !bytes.HasPrefix(b, []byte(m)) {
				t.Errorf("%s does not start with %q", path, m)
			}
		}
	}
	for _, f := range []string{PointsCSV, BenchFile, ReportMD, ReportHTML} {
		if !written[filepath.Join(dir, f)] {
			t.Errorf("RenderRun did not write %s", f)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportMD))
	if err != nil {
		t.Fatal(err)
	}
	resultstest.GoldenFile(t, filepath.Join("golden", "report.md"), md)
}
