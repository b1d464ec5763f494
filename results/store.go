package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
)

// Run describes one run of an experiment: what was asked for, on what, and
// how far it got. It is stored as run.json in the run's folder; the points
// are stored beside it under points/.
type Run struct {
	Schema      int           `json:"schema"`
	ID          string        `json:"id"`
	Profile     string        `json:"profile"`    // e.g. "default", "thesis", "gate"
	Experiment  any           `json:"experiment"` // the harness's full experiment configuration
	Configs     []ModelConfig `json:"configs"`    // in report order
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	Provenance  Provenance    `json:"provenance"`
	Started     time.Time     `json:"started"`
	Finished    time.Time     `json:"finished,omitzero"` // zero while running or if interrupted
	Interrupted bool          `json:"interrupted,omitempty"`
	Warnings    []string      `json:"warnings,omitempty"`
	// Ceilings are the load generator's own ceilings, measured at the
	// start of the run (one per protocol of its workloads).
	Ceilings []Ceiling `json:"ceilings,omitempty"`
	// Decisions is how the who-wins table is decided, written by a run
	// with a time budget (two looks, and the extra rounds it measured);
	// nil: one look at WinnersAlpha.
	Decisions *DecisionPlan `json:"decisions,omitempty"`
	// Orders are the order the configurations were measured in, by round
	// (the experiment's Shuffle: a seeded permutation per round; a round
	// of extra rounds lists its contenders).
	Orders map[int][]string `json:"orders,omitempty"`
	// Objectives are the latency objectives the run's searches met or
	// missed, by workload: the published bound, or one stated relative to
	// the machine's own tail where the published one lies inside it
	// (Objective).
	Objectives []Objective `json:"objectives,omitempty"`

	// Unreadable lists the point files ReadRun could not read (not
	// stored: it describes the folder as read). Their points are in no
	// statistic; every reader of a run must say so.
	Unreadable []UnreadablePoint `json:"-"`
}

// Objective is one workload's latency objective as a run searched for
// it. The machine's own tail — the floor: zero work, a low rate, every
// request to an idle server, measured at the start of the run on the
// server CPUs — can lie close to a published bound on a machine that
// stalls (p99 663 µs of a 1 ms bound, seen on a 2-vCPU VM): a probe then
// passes or fails on whether a stall hit it, and the capacity at the
// objective measures the machine. Where the floor's percentile exceeds
// ObjectiveFloorShare of the bound, the search's bound is the floor's
// percentile plus the rest of the published one, (1 −
// ObjectiveFloorShare) of it: on a quiet machine the objective is the
// published one, on a stalling one it still asks what the model adds.
type Objective struct {
	Workload    string  `json:"workload"`
	Percentile  float64 `json:"percentile"`
	PublishedNs int64   `json:"published_ns"`
	BoundNs     int64   `json:"bound_ns"` // what the searches used
	// FloorNs is the floor's percentile (0: not measured; the published
	// bound then holds), from FloorRequests requests at FloorRatePerS.
	FloorNs       int64   `json:"floor_ns,omitempty"`
	FloorRequests int64   `json:"floor_requests,omitempty"`
	FloorRatePerS float64 `json:"floor_rate_per_s,omitempty"`
	// Note says why the bound is what it is.
	Note string `json:"note,omitempty"`
}

// ObjectiveFloorShare is the share of a published latency bound the
// machine's floor may take before the bound is stated relative to the
// floor (Objective).
const ObjectiveFloorShare = 0.25

// ObjectiveBound returns the bound a search uses for a published bound,
// given the floor's percentile (0: not measured): the published bound
// while the floor is within ObjectiveFloorShare of it, else the floor
// plus (1 − ObjectiveFloorShare) of it — equal at the threshold, so
// that the bound grows smoothly with the floor.
func ObjectiveBound(published, floor int64) int64 {
	if floor <= int64(ObjectiveFloorShare*float64(published)) {
		return published
	}
	b := floor + int64((1-ObjectiveFloorShare)*float64(published))
	return int64(time.Duration(b).Round(time.Microsecond))
}

// Ceiling is the load generator's own ceiling for one protocol: the
// highest rate its workers sustain, estimated from a closed loop against
// a server that answers at once (no work) on the server's CPUs as the
// achieved rate over the share of their time the workers were busy
// (RatePerS ÷ Busy). Since a busier generator batches more responses
// per system call, the estimate errs low. A point whose rate reaches
// Fraction of it is beyond what this generator measures (the harness
// marks it, loadgen.CheckCeiling).
type Ceiling struct {
	Protocol   string  `json:"protocol"`
	Workers    int     `json:"workers"`
	WorkerCPUs string  `json:"worker_cpus,omitempty"`
	Server     string  `json:"server"`     // the null server: model, work, CPUs
	RatePerS   float64 `json:"rate_per_s"` // achieved against it
	Busy       float64 `json:"busy"`       // the workers' busy share at that rate
	PerS       float64 `json:"ceiling_per_s"`
	Fraction   float64 `json:"fraction"` // points at or above Fraction × PerS are marked
	// Reason says why there is no ceiling (PerS 0): the measurement
	// failed, or the run's load comes from agents.
	Reason string `json:"reason,omitempty"`
}

// Bound is the rate at or above which a point is the generator's as much
// as the server's: Fraction × PerS.
func (c *Ceiling) Bound() float64 { return c.Fraction * c.PerS }

// Text describes c in one line: the ceiling, how it was measured and
// what it marks.
func (c *Ceiling) Text() string {
	workers := fmt.Sprintf("%d worker", c.Workers)
	if c.Workers != 1 {
		workers += "s"
	}
	if c.WorkerCPUs != "" {
		workers += " on CPUs " + c.WorkerCPUs
	}
	if c.PerS <= 0 {
		return fmt.Sprintf("not measured (%s): no point is checked against it", c.Reason)
	}
	return fmt.Sprintf("%.0f req/s for %s (%.0f req/s with the workers %.0f%% busy against %s); a point at %.0f req/s or more (%.0f%%) is beyond what it measures",
		c.PerS, workers, c.RatePerS, 100*c.Busy, c.Server, c.Fraction*c.PerS, 100*c.Fraction)
}

// UnreadablePoint is a point file that could not be read: truncated,
// corrupt, or of another schema.
type UnreadablePoint struct {
	File   string // its path
	Reason string
}

// String describes the file and why it could not be read.
func (u UnreadablePoint) String() string { return u.File + ": " + u.Reason }

// Unavailable is a configuration that could not run on this machine.
type Unavailable struct {
	Config ModelConfig `json:"config"`
	Reason string      `json:"reason"`
}

// File and folder names inside a run folder.
const (
	RunFile   = "run.json"
	PointsDir = "points"
)

// writeFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so a reader (or an interrupted run) never sees a
// partial file.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	cherr := f.Chmod(0o644) // CreateTemp makes 0600; results are for everyone to read
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(cherr, werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// WriteRun writes r as dir/run.json, atomically.
func WriteRun(dir string, r *Run) error {
	r.Schema = SchemaVersion
	return writeJSON(filepath.Join(dir, RunFile), r)
}

// PointFileName is the file name of p inside dir/points: unique per
// (configuration, kind, fraction — or, for KindRate and KindMechanisms,
// offered rate, for KindProbe the probe's index —, repetition), so a
// resumed run finds the points it already has.
func PointFileName(p *Point) string {
	name := strings.NewReplacer("/", "_", " ", "_", "=", "-").Replace(p.Config.Name)
	frac := strconv.FormatFloat(p.Fraction, 'f', 3, 64)
	switch p.Kind {
	case KindRate, KindMechanisms:
		frac = strconv.FormatFloat(p.OfferedRatePerS, 'f', 0, 64)
	case KindProbe, KindSLO:
		// A probe's rate depends on the earlier probes: its index
		// names it, so that a resumed search finds it.
		frac = fmt.Sprintf("%02d", p.Probe)
	}
	return fmt.Sprintf("%s__%s__%s__rep%02d.json", name, p.Kind, frac, p.Repetition)
}

// WritePointHlog writes the latency histograms of p's measured window as
// an HdrHistogram log, dir/points/<PointFileName with .hlog>, atomically
// (loadgen.WriteWindowHlog: the corrected latency untagged, the
// uncorrected tagged "uncorrected"), for HdrHistogram's own tools. A point
// without a load-generator result has none, and that is not an error.
func WritePointHlog(dir string, p *Point) error {
	if p.Load == nil || p.Load.Latency.Histogram == "" {
		return nil
	}
	var b bytes.Buffer
	if err := loadgen.WriteWindowHlog(&b, p.Load, p.Label()); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	name := strings.TrimSuffix(PointFileName(p), ".json") + ".hlog"
	if err := WriteFile(filepath.Join(dir, PointsDir, name), b.Bytes()); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// WritePoint writes p as dir/points/<PointFileName>, atomically.
func WritePoint(dir string, p *Point) error {
	p.Schema = SchemaVersion
	return writeJSON(filepath.Join(dir, PointsDir, PointFileName(p)), p)
}

// HasPoint reports whether dir already holds the point that p names (for
// resuming an interrupted run).
func HasPoint(dir string, p *Point) bool {
	_, err := os.Stat(filepath.Join(dir, PointsDir, PointFileName(p)))
	return err == nil
}

// ReadRun reads a run folder: its run.json and every point, sorted by
// configuration (in the run's order), kind, fraction and repetition. A
// point file that cannot be read does not make the whole run unreadable:
// it is left out of the points and listed in Run.Unreadable, which the
// caller must report. A run.json that cannot be read is an error.
func ReadRun(dir string) (*Run, []Point, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("results: %s: %w", filepath.Join(dir, RunFile), err)
	}
	if r.Schema != SchemaVersion {
		return nil, nil, fmt.Errorf("results: %s has schema %d, this build reads %d", filepath.Join(dir, RunFile), r.Schema, SchemaVersion)
	}
	files, err := filepath.Glob(filepath.Join(dir, PointsDir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	pts := make([]Point, 0, len(files))
	for _, f := range files {
		var p Point
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err == nil && p.Schema != SchemaVersion {
			err = fmt.Errorf("schema %d, this build reads %d", p.Schema, SchemaVersion)
		}
		if err != nil {
			r.Unreadable = append(r.Unreadable, UnreadablePoint{File: f, Reason: err.Error()})
			continue
		}
		pts = append(pts, p)
	}
	order := map[string]int{}
	for i, c := range r.Configs {
		order[c.Name] = i
	}
	sort.SliceStable(pts, func(i, j int) bool {
		a, b := &pts[i], &pts[j]
		if oa, ob := order[a.Config.Name], order[b.Config.Name]; oa != ob {
			return oa < ob
		}
		if c := CompareLoad(a.Kind, a.LoadValue(), b.Kind, b.LoadValue()); c != 0 {
			return c < 0
		}
		return a.Repetition < b.Repetition
	})
	return &r, pts, nil
}
