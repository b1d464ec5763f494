package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"concbench/results"
)

// BaselineFile is the committed baseline's file inside its folder
// (results/baseline/baseline.json).
const BaselineFile = "baseline.json"

// BaselineSchema is the version of the baseline format this code reads
// and writes; a baseline of another version is refused, not misread.
const BaselineSchema = 1

// Setup is what a gate run measured, as far as its numbers depend on it.
// A committed baseline is comparable only with a run of the same setup.
type Setup struct {
	Profile string `json:"profile"`
	// Configs are the configurations as the run recorded them (serve
	// flags including the effective --gomaxprocs), side suffixes removed.
	Configs             []results.ModelConfig `json:"configs"`
	Workloads           []results.Workload    `json:"workloads"`
	Fractions           []float64             `json:"fractions"`
	Repetitions         int                   `json:"repetitions"`
	Warmup              string                `json:"warmup"`
	Duration            string                `json:"duration"`
	CapacityOutstanding int                   `json:"capacity_outstanding"`
	LoadWorkers         int                   `json:"load_workers"`
	Seed                uint64                `json:"seed"`
}

// Diff lists, one sentence each, the fields in which o differs from s.
func (s *Setup) Diff(o *Setup) []string {
	var out []string
	a, b := reflect.ValueOf(s).Elem(), reflect.ValueOf(o).Elem()
	for i := range a.NumField() {
		if reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			continue
		}
		name := a.Type().Field(i).Tag.Get("json")
		ja, _ := json.Marshal(a.Field(i).Interface())
		jb, _ := json.Marshal(b.Field(i).Interface())
		out = append(out, fmt.Sprintf("%s: %s, not %s", name, jb, ja))
	}
	return out
}

// Baseline is a committed baseline: one run of the gate's setup on the
// current tree, reduced to the points' verdicts and the rules' metric
// values, small enough to review in a pull request. "make baseline"
// (concbench gate --write-baseline) writes it; nothing else should.
type Baseline struct {
	Schema int `json:"schema"`
	// About says how the baseline was made and when to refresh it.
	About      string             `json:"about"`
	Setup      Setup              `json:"setup"`
	Provenance results.Provenance `json:"provenance"`
	// Side holds the commit, the unavailable configurations and the
	// points (one line each in the file).
	Side
}

// About is the text every baseline carries.
const About = "The CI performance gate's committed baseline (make gate-ci compares with it). Written only by " +
	"'make baseline' (concbench gate --write-baseline results/baseline), on the CI machine type; refresh it after an " +
	"intended performance change or a Go/toolchain change, in its own reviewed commit. One line per measured point."

// WriteBaseline writes b to dir/BaselineFile atomically: the header
// indented, then one line per point, so that a refresh reads as a
// reviewable diff.
func WriteBaseline(dir string, b *Baseline) error {
	b.Schema = BaselineSchema
	head := *b
	head.Points = nil
	hb, err := json.MarshalIndent(head, "", "  ")
	if err != nil {
		return fmt.Errorf("gate: baseline: %w", err)
	}
	var out bytes.Buffer
	out.Write(bytes.TrimSuffix(bytes.TrimRight(hb, "\n"), []byte("}")))
	out.WriteString(",\n  \"points\": [\n")
	for i := range b.Points {
		pb, err := json.Marshal(&b.Points[i])
		if err != nil {
			return fmt.Errorf("gate: baseline: %w", err)
		}
		out.WriteString("    ")
		out.Write(pb)
		if i < len(b.Points)-1 {
			out.WriteString(",")
		}
		out.WriteString("\n")
	}
	out.WriteString("  ]\n}\n")
	if err := results.WriteFile(filepath.Join(dir, BaselineFile), out.Bytes()); err != nil {
		return fmt.Errorf("gate: baseline: %w", err)
	}
	return nil
}

// ReadBaseline reads and checks dir/BaselineFile: unknown fields, another
// schema, a missing setup or no points are errors (a baseline that cannot
// be read makes the gate undecided, never a pass).
func ReadBaseline(dir string) (*Baseline, error) {
	path := filepath.Join(dir, BaselineFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gate: baseline: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Baseline
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("gate: baseline %s: %w", path, err)
	}
	var errs []error
	if b.Schema != BaselineSchema {
		errs = append(errs, fmt.Errorf("schema %d (this build reads %d; regenerate it with make baseline)", b.Schema, BaselineSchema))
	}
	if b.Setup.Profile == "" || len(b.Setup.Configs) == 0 || b.Setup.Repetitions < 1 {
		errs = append(errs, errors.New("no setup (profile, configurations, repetitions)"))
	}
	if len(b.Points) == 0 {
		errs = append(errs, errors.New("no points"))
	}
	for i := range b.Points {
		p := &b.Points[i]
		if p.Config == "" || !slices.Contains([]results.Kind{results.KindCapacity, results.KindOpen}, p.Kind) ||
			!slices.Contains([]results.Status{results.StatusOK, results.StatusFailed, results.StatusUnavailable}, p.Status) {
			errs = append(errs, fmt.Errorf("point %d: config %q, kind %q, status %q (accepted: a name, capacity or open, ok, failed or unavailable)", i, p.Config, p.Kind, p.Status))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("gate: baseline %s: %w", path, err)
	}
	if b.Unavailable == nil {
		b.Unavailable = map[string]string{}
	}
	return &b, nil
}
