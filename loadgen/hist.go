package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// recorder is an HDR histogram of nanosecond values with a hard range:
// values above the configured highest are recorded as the highest and
// counted in over, negative ones (a clock that went backwards) as 0 and
// counted in under. Nothing is dropped silently. One goroutine records.
type recorder struct {
	h       *hdr.Histogram
	highest int64
	over    int64
	under   int64
}

func newRecorder(cfg *Config) *recorder {
	return &recorder{
		h:       newHistogram(cfg),
		highest: int64(cfg.HistHighest),
	}
}

// newHistogram returns an empty histogram with cfg's range and precision.
func newHistogram(cfg *Config) *hdr.Histogram {
	return hdr.New(int64(cfg.HistLowest), int64(cfg.HistHighest), cfg.HistDigits)
}

// record records v. It does not allocate: the clamp keeps RecordValue off
// its error path.
func (r *recorder) record(v int64) {
	switch {
	case v > r.highest:
		v = r.highest
		r.over++
	case v < 0:
		v = 0
		r.under++
	}
	_ = r.h.RecordValue(v) // in range by the clamp above
}

// merge adds o into r; values the merge could not take (it cannot happen
// between histograms of one geometry) are counted as over.
func (r *recorder) merge(o *recorder) {
	r.over += o.over + r.h.Merge(o.h)
	r.under += o.under
}

// Summary is a latency (or send-lag) distribution: a percentile table in
// nanoseconds and the histogram it came from, encoded so that runs can be
// merged later (percentiles are never averaged).
type Summary struct {
	Count   int64   `json:"count"`
	MinNs   int64   `json:"min_ns"`
	MeanNs  float64 `json:"mean_ns"`
	P50Ns   int64   `json:"p50_ns"`
	P90Ns   int64   `json:"p90_ns"`
	P99Ns   int64   `json:"p99_ns"`
	P999Ns  int64   `json:"p99_9_ns"`
	P9999Ns int64   `json:"p99_99_ns"`
	MaxNs   int64   `json:"max_ns"`
	// OutOfRange counts values outside the histogram's range, recorded at
	// its nearest end (so they are in Count and in the percentiles, at
	// that value).
	OutOfRange int64 `json:"out_of_range"`
	// Histogram is the HdrHistogram V2 compressed encoding, base64
	// ("HISTF…"), readable by every HdrHistogram implementation; merge
	// repetitions by decoding (DecodeHistogram) and Merge.
	Histogram string `json:"histogram"`
}

// Summarize returns the summary of h, with outOfRange values counted as
// clamped. It never returns NaN or Inf: an empty histogram gives zeros.
func Summarize(h *hdr.Histogram, outOfRange int64) Summary {
	s := Summary{Count: h.TotalCount(), OutOfRange: outOfRange}
	if s.Count > 0 {
		v := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9, 99.99})
		s.P50Ns, s.P90Ns, s.P99Ns, s.P999Ns, s.P9999Ns = v[0], v[1], v[2], v[3], v[4]
		s.MinNs, s.MaxNs = h.Min(), h.Max()
		s.MeanNs = finite(h.Mean())
	}
	if enc, err := h.EncodeV2(); err == nil {
		s.Histogram = string(enc)
	}
	return s
}

// DecodeHistogram decodes a Summary's Histogram.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	return hdr.Decode([]byte(s))
}

// finite returns f, or 0 if f is NaN or infinite: JSON has no NaN.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// hlog writes the per-interval histograms as an HdrHistogram log, format
// version 1.3, which HdrHistogram's own tools (HistogramLogProcessor,
// HistogramLogAnalyzer) and hdrhistogram-go's HistogramLogReader read:
//
//	#[Histogram log format version 1.3]
//	#[StartTime: 1700000000.123 (seconds since epoch), 2023-11-14T22:13:20Z]
//	#[BaseTime: 1700000000.123 (seconds since epoch)]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	0.000000,1.000000,0.052000,HISTF…
//	Tag=uncorrected,0.000000,1.000000,0.031000,HISTF…
//
// Interval start times are seconds relative to BaseTime, lengths seconds,
// and the max is in milliseconds (the values are nanoseconds; the log's
// conventional ratio is 1e6). The untagged histograms are the corrected
// latency, which tools process by default; "Tag=uncorrected" lines hold the
// uncorrected latency.
//
// Note: the StartTime and BaseTime lines are written here, not with the
// library's OutputStartTime/OutputBaseTime, because those truncate to whole
// seconds while interval times are relative to the exact base in
// milliseconds: a reader would place every interval up to 999 ms early.
//
// Note: the interval lines are written here too, byte for byte as the
// library's HistogramLogWriter.OutputIntervalHistogram writes them ("%f"
// for the three numbers), from hdrCounts encoded by an hdrEncoder into a
// reused buffer: the library's writer allocates hundreds of objects a line,
// more the more buckets are counted (a zlib writer and its buffers, a
// slice per count, a regexp for the tag, fmt), and the generator must not
// allocate while it measures.
type hlog struct {
	f      *os.File
	bw     *bufio.Writer
	baseMs int64
	enc    hdrEncoder
	line   []byte // an interval's two lines, reused
	// allocated counts what mergeIntervals allocated once running: pairs
	// of histograms and growths of its ring of pending intervals (0 in
	// steady state). Read it after mergeIntervals has returned.
	allocated int64
}

// createHlog creates the log at path with its header; start is the
// measurement's start (BaseTime and StartTime). It also makes the
// encoder's zlib writer and buffers, so that the first interval does not.
func createHlog(path string, start time.Time, comment string) (*hlog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("loadgen: hlog: %w", err)
	}
	l := &hlog{f: f, bw: bufio.NewWriter(f), baseMs: start.UnixMilli()}
	if err := writeHlogHeader(l.bw, l.baseMs, comment); err != nil {
		f.Close()
		return nil, err
	}
	const initialBuf = 16 << 10 // a typical interval's encoding fits
	l.enc.raw = make([]byte, 0, initialBuf)
	l.enc.out = make(byteSink, 0, initialBuf)
	l.line = l.enc.appendV2Compressed(make([]byte, 0, 3*initialBuf), newHdrCounts(1, 2, 1))[:0]
	return l, nil
}

// writeHlogHeader writes a log's header: the format version, comment, the
// start and base time baseMs (ms since the epoch), and the legend.
func writeHlogHeader(w io.Writer, baseMs int64, comment string) error {
	lw := hdr.NewHistogramLogWriter(w)
	lw.SetBaseTime(baseMs)
	secs := float64(baseMs) / 1000
	for _, step := range []func() error{
		lw.OutputLogFormatVersion,
		func() error { return lw.OutputComment("[" + comment + "]") },
		func() error {
			return lw.OutputComment(fmt.Sprintf("[StartTime: %.3f (seconds since epoch), %s]",
				secs, time.UnixMilli(baseMs).UTC().Format(time.RFC3339Nano)))
		},
		func() error { return lw.OutputComment(fmt.Sprintf("[BaseTime: %.3f (seconds since epoch)]", secs)) },
		lw.OutputLegend,
	} {
		if err := step(); err != nil {
			return fmt.Errorf("loadgen: hlog: %w", err)
		}
	}
	return nil
}

// WriteWindowHlog writes r's whole measured window as an HdrHistogram log
// (the format of Config.HlogPath, one interval): the corrected latency
// untagged, the uncorrected latency tagged "uncorrected", from the
// histograms r already holds. It is written after the run, so that a
// harness can keep one per point at no cost to the measurement.
func WriteWindowHlog(w io.Writer, r *Result, comment string) error {
	base := r.StartTime.UnixMilli()
	if err := writeHlogHeader(w, base, comment); err != nil {
		return err
	}
	length := float64(r.WindowNs) / 1e9
	var b []byte
	for _, h := range []struct {
		tag string
		s   *Summary
	}{{"", &r.Latency}, {"uncorrected", &r.Uncorrected}} {
		if h.s.Histogram == "" {
			continue
		}
		if h.tag != "" {
			b = append(b, "Tag="+h.tag+","...)
		}
		b = strconv.AppendFloat(b, 0, 'f', 6, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, length, 'f', 6, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(h.s.MaxNs)/hdr.MsToNsRatio, 'f', 6, 64)
		b = append(b, ',')
		b = append(b, h.s.Histogram...)
		b = append(b, '\n')
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("loadgen: hlog: %w", err)
	}
	return nil
}

// interval writes one interval [startMs, endMs) (ms since the epoch): the
// corrected histogram untagged, then the uncorrected one tagged. Once its
// buffers have grown to the intervals' size, it allocates nothing.
func (l *hlog) interval(startMs, endMs int64, corrected, uncorrected *hdrCounts) error {
	l.line = l.appendInterval(l.line[:0], "", startMs, endMs, corrected)
	l.line = l.appendInterval(l.line, "uncorrected", startMs, endMs, uncorrected)
	if _, err := l.bw.Write(l.line); err != nil {
		return fmt.Errorf("loadgen: hlog: %w", err)
	}
	return nil
}

// appendInterval appends c's line for [startMs, endMs), tagged if tag is
// not empty, as OutputIntervalHistogram formats it: "%s%f,%f,%f,%s\n" of
// the tag, the start and length in seconds from the base, computed in
// float64 as it does, the max in ms, and the encoding.
func (l *hlog) appendInterval(b []byte, tag string, startMs, endMs int64, c *hdrCounts) []byte {
	if tag != "" {
		b = append(b, "Tag="...)
		b = append(b, tag...)
		b = append(b, ',')
	}
	start := (float64(startMs) - float64(l.baseMs)) / 1000
	end := (float64(endMs) - float64(l.baseMs)) / 1000
	b = strconv.AppendFloat(b, start, 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, end-start, 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, float64(c.max())/hdr.MsToNsRatio, 'f', 6, 64)
	b = append(b, ',')
	b = l.enc.appendV2Compressed(b, c)
	return append(b, '\n')
}

// close flushes and closes the file.
func (l *hlog) close() error {
	err := l.bw.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("loadgen: hlog: %w", err)
	}
	return nil
}

// lagShares compares the corrected latency with the latency without the
// generator's own lag at every percentile the outputs report.
func lagShares(cfg *Config, corrected, withoutLag *recorder) []LagShare {
	n := corrected.h.TotalCount()
	var out []LagShare
	for _, p := range reportedPercentiles {
		l, s := corrected.h.ValueAtPercentile(p), withoutLag.h.ValueAtPercentile(p)
		ls := LagShare{Percentile: p, LatencyNs: l, WithoutLagNs: s,
			BoundNs: max(int64(cfg.Limits.MaxLagShare*float64(l)), int64(cfg.HistLowest)),
			Judged:  float64(n)*(1-p/100) >= minTail}
		if l > 0 {
			ls.Share = finite(float64(l-s) / float64(l))
		}
		out = append(out, ls)
	}
	return out
}

// reportedPercentiles are the percentiles the outputs report (Summary):
// the verdict judges the generator's share of each.
var reportedPercentiles = []float64{50, 90, 99, 99.9, 99.99}
