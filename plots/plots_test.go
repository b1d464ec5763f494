package plots

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"concbench/loadgen"
	"concbench/models"
	"concbench/results"
	"concbench/results/resultstest"

	"gonum.org/v1/plot/vg"
)

// syntheticDir is the synthetic run, written once for the package's
// tests (TestMain); tests read it and render into folders of their own.
var syntheticDir string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(resultstest.Main(m, &syntheticDir))
}

// synthetic reads the synthetic run and returns an empty folder to render
// it into.
func synthetic(t *testing.T) (string, *results.Run, []results.Point) {
	t.Helper()
	r, pts, err := results.ReadRun(syntheticDir)
	if err != nil {
		t.Fatal(err)
	}
	return t.TempDir(), r, pts
}

var wantFigures = []string{"latency", "spectrum", "capacity", "ctxsw", "cpu", "allocs", "mechanisms", "threads"}

// TestGolden renders the synthetic run and compares every figure's SVG
// and CSV, report.md, with the golden files; the other formats must
// render and look like what they claim to be.
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
	for _, name := range wantFigures {
		for _, ext := range append(append([]string(nil), Formats...), "csv") {
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
			if ext == "svg" || ext == "csv" {
				resultstest.GoldenFile(t, filepath.Join("golden", name+"."+ext), b)
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

// TestDeterministic renders the same run twice: every byte of the SVG,
// CSV, TeX and report output is the same.
func TestDeterministic(t *testing.T) {
	_, r, pts := synthetic(t)
	render := func() map[string][]byte {
		out := map[string][]byte{}
		figs, _ := Figures(r, pts, Options{})
		for _, f := range figs {
			for _, format := range []string{"svg", "tex"} {
				out[f.Name+"."+format] = rendered(t, f, format)
			}
			out[f.Name+".csv"] = figureCSV(t, f)
		}
		return out
	}
	a, b := render(), render()
	if len(a) != 3*len(wantFigures) {
		t.Fatalf("%d outputs, want %d", len(a), 3*len(wantFigures))
	}
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Errorf("%s differs between two renderings", k)
		}
	}
}

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
	if len(refs) != len(wantFigures) {
		t.Errorf("%d src/href attributes, want one image per figure (%d)", len(refs), len(wantFigures))
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

// TestLogTicks checks that a log axis always gets at least two labels,
// never panics on a non-positive range, and labels powers of ten when
// the range spans decades.
func TestLogTicks(t *testing.T) {
	tests := []struct {
		name     string
		min, max float64
		labels   []string
	}{
		{name: "decades: powers of ten", min: 0.9, max: 1100, labels: []string{"1", "10", "100", "1000"}},
		{name: "inside a decade: 1-2-5", min: 15, max: 60, labels: []string{"20", "50"}},
		{name: "narrower: every multiple", min: 25, max: 45, labels: []string{"30", "40"}},
		{name: "between two multiples: the ends", min: 31, max: 39, labels: []string{"31", "39"}},
		{name: "across a decade boundary", min: 7, max: 30, labels: []string{"10", "20"}},
		{name: "zero", min: 0, max: 10},
		{name: "negative", min: -5, max: -1},
		{name: "inverted", min: 10, max: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var labels []string
			for _, tk := range (logTicks{}).Ticks(tc.min, tc.max) {
				if tk.Value < tc.min || tk.Value > tc.max {
					t.Errorf("tick %v outside [%v, %v]", tk.Value, tc.min, tc.max)
				}
				if tk.Label != "" {
					labels = append(labels, tk.Label)
				}
			}
			if strings.Join(labels, ",") != strings.Join(tc.labels, ",") {
				t.Errorf("labels %q, want %q", labels, tc.labels)
			}
		})
	}
}

func TestLogRange(t *testing.T) {
	min, max, dropped := logRange([]float64{0, -3, 10, 1000, 0})
	if dropped != 3 || !(min > 0 && min < 10) || max <= 1000 {
		t.Errorf("logRange = %v, %v, %d; want a positive range around 10..1000 and 3 dropped", min, max, dropped)
	}
	if min, max, dropped := logRange([]float64{0}); min != 1 || max != 10 || dropped != 1 {
		t.Errorf("logRange of zeros = %v, %v, %d; want 1, 10, 1", min, max, dropped)
	}
}

func TestFormatNs(t *testing.T) {
	for ns, want := range map[float64]string{500: "500ns", 1000: "1µs", 20000: "20µs", 1.5e6: "1.5ms", 2e9: "2s", 123456: "123µs"} {
		if got := FormatNs(ns); got != want {
			t.Errorf("formatNs(%v) = %q, want %q", ns, got, want)
		}
	}
	for q, want := range map[float64]string{0.5: "50%", 0.9: "90%", 0.999: "99.9%", 0.9999: "99.99%"} {
		if got := percentileLabel(q); got != want {
			t.Errorf("percentileLabel(%v) = %q, want %q", q, got, want)
		}
	}
}

// nameList is names as a run's experiment lists its configurations or
// workloads, [{"name": …}, …]: the order analyze reads them in.
func nameList(names ...string) []map[string]any {
	var out []map[string]any
	for _, n := range names {
		out = append(out, map[string]any{"name": n})
	}
	return out
}

// mutate returns a copy of pts with f applied to each.
func mutate(pts []results.Point, f func(p *results.Point)) []results.Point {
	out := append([]results.Point(nil), pts...)
	for i := range out {
		if out[i].Load != nil {
			l := *out[i].Load
			out[i].Load = &l
		}
		out[i].Server.PerThread = append([]models.ThreadStats(nil), out[i].Server.PerThread...)
		f(&out[i])
	}
	return out
}

// TestZerosNeverPanic renders runs whose values would break a log axis:
// every latency 0, every theory 0, every histogram empty.
func TestZerosNeverPanic(t *testing.T) {
	_, r, pts := synthetic(t)
	zero := mutate(pts, func(p *results.Point) {
		if p.Load != nil {
			p.Load.Latency = zeroSummary(p.Load.Latency)
			p.Load.Uncorrected = zeroSummary(p.Load.Uncorrected)
		}
		if p.Theory != nil {
			th := *p.Theory
			th.P50Ns, th.P99Ns, th.P999Ns = 0, 0, 0
			p.Theory = &th
		}
	})
	figs, omitted := Figures(r, zero, Options{})
	for _, f := range figs {
		checkRenders(t, f, Formats...)
	}
	got := strings.Join(omitted, "\n")
	for _, want := range []string{"Latency vs offered load: not drawn", "Percentile spectrum: not drawn"} {
		if !strings.Contains(got, want) {
			t.Errorf("omitted %q lacks %q", omitted, want)
		}
	}
}

// zeroSummary keeps the count but zeroes every percentile and drops the
// histogram.
func zeroSummary(s loadgen.Summary) loadgen.Summary {
	return loadgen.Summary{Count: s.Count}
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
			figures: len(wantFigures),
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

// TestStyles checks that a configuration has the same style whatever
// points a figure uses, that a model has the same colour in every run
// (whatever configurations come before it), and that two configurations
// of one model differ in marker and dash.
func TestStyles(t *testing.T) {
	_, r, pts := synthetic(t)
	full := styles(r, results.GroupPoints(r, pts), identity)
	// A figure that uses only the later points (later configurations).
	part := styles(r, results.GroupPoints(r, pts[len(pts)/2:]), identity)
	type look struct {
		color string
		glyph string
		dash  string
	}
	seen := map[look]string{}
	for name, s := range full {
		if q := part[name]; q.Color != s.Color || q.Glyph != s.Glyph || fmt.Sprint(q.Dash) != fmt.Sprint(s.Dash) {
			t.Errorf("%s: style %v in one figure, %v in another", name, s, part[name])
		}
		k := look{fmt.Sprint(s.Color), fmt.Sprintf("%T", s.Glyph), fmt.Sprint(s.Dash)}
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s look the same", name, other)
		}
		seen[k] = name
	}
	// Another run, its configurations in another order and with other
	// models before them: every model keeps its colour.
	models := map[string]string{}
	for _, c := range r.Configs {
		models[c.Name] = c.Model
	}
	for _, u := range r.Unavailable {
		models[u.Config.Name] = u.Config.Model
	}
	other := &results.Run{Configs: []results.ModelConfig{{Name: "x", Model: "netpoll"}, {Name: "y", Model: "proactor"}}, Unavailable: r.Unavailable}
	for i := len(r.Configs) - 1; i >= 0; i-- {
		other.Configs = append(other.Configs, r.Configs[i])
	}
	again := styles(other, nil, identity)
	for name, s := range full {
		if again[name].Color != s.Color {
			t.Errorf("%s: colour %v in one run, %v in another", name, s.Color, again[name].Color)
		}
		if want := modelColor(models[name]); s.Color != want {
			t.Errorf("%s: colour %v, want its model's %v", name, s.Color, want)
		}
	}
	if modelColor(ModelLF) == modelColor(ModelHSHR) {
		t.Error("leaderfollowers and halfsynchalfreactive share a colour")
	}
}

// TestTexEscaped checks that no text in the TeX output carries an
// unescaped LaTeX special character (a bare % would comment out the rest
// of the line and break the document).
func TestTexEscaped(t *testing.T) {
	_, r, pts := synthetic(t)
	figs, _ := Figures(r, pts, Options{})
	text := regexp.MustCompile(`\\selectfont (.*)\}\}$`)
	bad := regexp.MustCompile(`(^|[^\\])[%_&#]|µ`)
	for _, f := range figs {
		for _, line := range strings.Split(string(rendered(t, f, "tex")), "\n") {
			if m := text.FindStringSubmatch(line); m != nil && bad.MatchString(m[1]) {
				t.Errorf("%s.tex: unescaped text %q", f.Name, m[1])
			}
		}
	}
}

// TestTexWidth: every figure's TeX canvas fits a thesis text width, so it
// is included at its natural size (scaled down, its labels would shrink).
func TestTexWidth(t *testing.T) {
	_, r, pts := synthetic(t)
	figs, _ := Figures(r, pts, Options{})
	for _, f := range figs {
		c, err := f.canvas("tex")
		if err != nil {
			t.Fatal(err)
		}
		sz, ok := c.(interface{ Size() (w, h vg.Length) })
		if !ok {
			t.Fatalf("%s: the TeX canvas does not report its size", f.Name)
		}
		if w, _ := sz.Size(); w > TexMaxWidth {
			t.Errorf("%s.tex is %v wide, more than %v", f.Name, w, TexMaxWidth)
		}
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
