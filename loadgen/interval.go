package loadgen

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ivPair is one interval's corrected and uncorrected latency histograms.
type ivPair struct{ corrected, uncorrected *hdr.Histogram }

func newPair(cfg *Config) *ivPair {
	return &ivPair{corrected: newHistogram(cfg), uncorrected: newHistogram(cfg)}
}

// ivMsg hands a worker's finished interval to the collector.
type ivMsg struct {
	worker     int
	index      int64 // 0 for the interval that starts with the measurement
	start, end int64 // ns since the run's base
	pair       *ivPair
}

// intervals cuts one worker's measured latencies into intervals of
// HlogInterval by completion time, for the .hlog. Finished intervals go to
// the collector (Run), which merges the workers' and returns the pairs on
// free for reuse, so that steady state does not allocate; an interval is
// sent even if empty, so that every worker reports every index.
type intervals struct {
	worker     int
	every      int64
	start, end int64
	index      int64
	highest    int64
	cur        *ivPair
	cfg        *Config
	out        chan<- ivMsg
	free       chan *ivPair
}

// newIntervals returns worker's intervals from measureAt.
func newIntervals(cfg *Config, worker int, measureAt int64, out chan<- ivMsg) *intervals {
	return &intervals{
		worker:  worker,
		every:   int64(cfg.HlogInterval),
		start:   measureAt,
		end:     measureAt + int64(cfg.HlogInterval),
		highest: int64(cfg.HistHighest),
		cur:     newPair(cfg),
		cfg:     cfg,
		out:     out,
		free:    make(chan *ivPair, 4),
	}
}

// record records one response completed at at; values are clamped as the
// run's recorders clamp them (which count them).
func (iv *intervals) record(at, lat, unc int64) {
	if at >= iv.end {
		iv.rotate(at)
	}
	iv.cur.corrected.RecordValue(min(max(lat, 0), iv.highest))
	iv.cur.uncorrected.RecordValue(min(max(unc, 0), iv.highest))
}

// rotate sends every interval that ended by now.
func (iv *intervals) rotate(now int64) {
	for now >= iv.end {
		iv.emit(iv.end)
		iv.start = iv.end
		iv.end += iv.every
	}
}

// finish sends the last, partial interval, ending at now.
func (iv *intervals) finish(now int64) {
	iv.rotate(now)
	if now > iv.start {
		iv.emit(now)
	}
}

func (iv *intervals) emit(end int64) {
	iv.out <- ivMsg{worker: iv.worker, index: iv.index, start: iv.start, end: end, pair: iv.cur}
	iv.index++
	select {
	case iv.cur = <-iv.free:
	default:
		iv.cur = newPair(iv.cfg) // the collector is behind: allocate rather than wait
	}
}
