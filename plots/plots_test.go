package plots

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/plots/plotstest"
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
// it into (plotstest.Synthetic).
func synthetic(t *testing.T) (string, *results.Run, []results.Point) {
	t.Helper()
	return plotstest.Synthetic(t, syntheticDir)
}

// TestGolden draws the synthetic run's figures and compares every
// figure's SVG and CSV with the golden files; the other formats must
// render and look like what they claim to be.
func TestGolden(t *testing.T) {
	_, r, pts := synthetic(t)
	figs, _ := Figures(r, pts, Options{})
	drawn := map[string]*Figure{}
	for _, f := range figs {
		drawn[f.Name] = f
	}
	magic := map[string]string{"svg": "<?xml", "pdf": "%PDF-", "png": "\x89PNG", "tex": "%% gonum/plot created for LaTeX/pgf"}
	for _, name := range plotstest.SyntheticFigures {
		f := drawn[name]
		if f == nil {
			t.Errorf("figure %s not drawn", name)
			continue
		}
		for _, ext := range Formats {
			b := rendered(t, f, ext)
			if m, ok := magic[ext]; ok && !bytes.HasPrefix(b, []byte(m)) {
				t.Errorf("%s.%s does not start with %q", name, ext, m)
			}
			if ext == "svg" {
				resultstest.GoldenFile(t, filepath.Join("golden", name+".svg"), b)
			}
		}
		resultstest.GoldenFile(t, filepath.Join("golden", name+".csv"), figureCSV(t, f))
	}
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
	if len(a) != 3*len(plotstest.SyntheticFigures) {
		t.Fatalf("%d outputs, want %d", len(a), 3*len(plotstest.SyntheticFigures))
	}
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Errorf("%s differs between two renderings", k)
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

// TestZerosNeverPanic renders runs whose values would break a log axis:
// every latency 0, every theory 0, every histogram empty.
func TestZerosNeverPanic(t *testing.T) {
	_, r, pts := synthetic(t)
	zero := plotstest.Mutate(pts, func(p *results.Point) {
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
