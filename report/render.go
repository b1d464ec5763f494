package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"concbench/plots"
	"concbench/results"
)

// Output names inside a run folder.
const (
	FiguresDir = "figures"
	PointsCSV  = "points.csv"
	BenchFile  = "bench.txt"
	ReportMD   = "report.md"
	ReportHTML = "report.html"
)

// Options control what RenderRun writes; Load and Floor are the
// figures' (plots.Options).
type Options struct {
	// Formats are the figure formats to write (svg, pdf, png, tex); nil
	// means all of plots.Formats. The HTML report embeds SVG whatever this says.
	Formats []string
	// Load is the open-loop fraction of capacity for the spectrum,
	// per-request cost and per-thread figures; the run's measured fraction
	// closest to it is used. 0 means plots.DefaultLoad.
	Load float64
	// Floor is the measured loopback floor (results.ChainFloor: zero
	// work, idle server) the latency figure adds to its M/M/c ideal; nil
	// means none. Render fills it from the run folder's validation.json
	// when it is nil.
	Floor *results.ChainFloor
}

// checkFormats returns the formats to write, or an error naming an
// unknown one.
func checkFormats(formats []string) ([]string, error) {
	if len(formats) == 0 {
		return plots.Formats, nil
	}
	for _, f := range formats {
		if !slices.Contains(plots.Formats, f) {
			return nil, fmt.Errorf("report: unknown format %q (want some of %v)", f, plots.Formats)
		}
	}
	return formats, nil
}

// RenderRun reads the run folder dir (results.ReadRun) and writes, from
// the stored results only: every figure in opts.Formats with a CSV of its
// data under dir/figures/, the exports dir/points.csv (every point) and
// dir/bench.txt (Go benchmark format), and the report dir/report.md and
// the self-contained dir/report.html. It works on a partial run (an
// interrupted or running sweep): it renders what exists and the report
// says the run is partial. It returns the files written. Every file is
// written atomically.
func RenderRun(dir string, opts Options) (files []string, err error) {
	r, pts, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	return Render(dir, r, pts, opts)
}

// Render is RenderRun on a run already read. Point files the reader could
// not read (r.Unreadable) become run warnings in the report.
func Render(dir string, r *results.Run, pts []results.Point, opts Options) (files []string, err error) {
	if len(r.Unreadable) > 0 {
		rr := *r
		rr.Warnings = slices.Clone(r.Warnings)
		for _, u := range r.Unreadable {
			rr.Warnings = append(rr.Warnings, fmt.Sprintf("point file %s could not be read (%s): its point is in no statistic, figure or table",
				filepath.Join(results.PointsDir, filepath.Base(u.File)), u.Reason))
		}
		r = &rr
	}
	formats, err := checkFormats(opts.Formats)
	if err != nil {
		return nil, err
	}
	out := &outDir{dir: dir}
	write := out.write

	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, r, pts); err != nil {
		return out.files, err
	}
	if err := write(PointsCSV, buf.Bytes()); err != nil {
		return out.files, err
	}
	buf.Reset()
	if err := results.WriteBench(&buf, r, pts); err != nil {
		return out.files, err
	}
	if err := write(BenchFile, buf.Bytes()); err != nil {
		return out.files, err
	}

	if opts.Floor == nil {
		// A validation that cannot be read is reported by the Measurement
		// chain section; the ideal is then drawn without the floor.
		if v, err := ReadValidation(dir); err == nil && v != nil && v.Floor.Requests > 0 {
			opts.Floor = &v.Floor
		}
	}
	a := analyze(r, pts, opts)
	figs, omitted := a.Figures()
	rep := newReport(a, figs, omitted, formats)
	rep.Chain = chainSectionOf(dir)
	for i, f := range figs {
		svg, err := out.writeFigure(f, formats)
		if err != nil {
			return out.files, err
		}
		if svg == nil {
			// The HTML report embeds SVG even when it was not asked for.
			buf.Reset()
			if err := f.Render(&buf, "svg"); err != nil {
				return out.files, err
			}
			svg = slices.Clone(buf.Bytes())
		}
		rep.Figures[i].SVG = svg
	}

	buf.Reset()
	if err := rep.writeMarkdown(&buf); err != nil {
		return out.files, err
	}
	if err := write(ReportMD, buf.Bytes()); err != nil {
		return out.files, err
	}
	buf.Reset()
	if err := rep.writeHTML(&buf); err != nil {
		return out.files, err
	}
	if err := write(ReportHTML, buf.Bytes()); err != nil {
		return out.files, err
	}
	return out.files, nil
}

// outDir writes a run's output files into dir and lists them, for Render
// and WriteValidation.
type outDir struct {
	dir   string
	files []string // the paths written, in order
}

// write writes data to dir/rel (results.WriteFile) and lists it.
func (o *outDir) write(rel string, data []byte) error {
	path := filepath.Join(o.dir, rel)
	if err := results.WriteFile(path, data); err != nil {
		return err
	}
	o.files = append(o.files, path)
	return nil
}

// writeFigure writes f into the figures folder in each of formats and its
// data as CSV; it returns the SVG rendering if "svg" is among formats.
func (o *outDir) writeFigure(f *plots.Figure, formats []string) (svg []byte, err error) {
	var buf bytes.Buffer
	for _, format := range formats {
		buf.Reset()
		if err := f.Render(&buf, format); err != nil {
			return nil, err
		}
		if err := o.write(filepath.Join(FiguresDir, f.Name+"."+format), buf.Bytes()); err != nil {
			return nil, err
		}
		if format == "svg" {
			svg = slices.Clone(buf.Bytes())
		}
	}
	buf.Reset()
	if err := f.WriteCSV(&buf); err != nil {
		return nil, fmt.Errorf("report: %s.csv: %w", f.Name, err)
	}
	return svg, o.write(filepath.Join(FiguresDir, f.Name+".csv"), buf.Bytes())
}
