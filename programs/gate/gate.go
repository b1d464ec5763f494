package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"concbench/gate"
	"concbench/gate/build"
	"concbench/harness"
	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/programs/internal/override"
	"concbench/programs/loadopt"
	"concbench/results"
)

// Config is a gate invocation. A measurement field overrides the gate
// profile's only if Given names its flag; Given also says which of the
// modes (Base, BaseBinary, Reference, Run) was asked for.
type Config struct {
	Base, Run                        string // the base revision; a run folder to judge again
	Reference, RelaxLoadChecks       bool
	BaseBinary, HeadBinary, HeadTags string
	MD, JSON, Out                    string // report files; the folder of the run folder
	Models                           string
	Reps, Conns, MinSamples          int
	Duration, Warmup                 time.Duration
	CapacityRequests                 int64 // > 0: capacity windows of that many requests
	Agents                           loadopt.Agents
	Given                            map[string]bool // the flags given on the command line
}

// Defaults returns the Config of an unset command line: the gate
// profile's values, which the flags show as their defaults.
func Defaults() Config {
	prof, _ := harness.Profile("gate")
	return Config{Out: "out", Reps: prof.Repetitions, Conns: prof.Workloads[0].Conns,
		Duration: time.Duration(prof.Duration), Warmup: time.Duration(prof.Warmup),
		MinSamples: gate.DefaultMinSamples, Agents: loadopt.Agents{Lead: loadopt.DefaultLead}}
}

// Run runs the gate cfg describes: the report to stdout (and the files),
// progress to stderr. Its error carries the exit status (cli.ExitCode):
// 1 for a regression, 2 when the gate could not decide.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	f := &cfg
	if err := checkFlags(f); err != nil {
		return cli.Exit(2, err)
	}
	if _, err := f.Agents.Options("gate", io.Discard); err != nil {
		return cli.Exit(2, err)
	}
	exp, err := experiment(f)
	if err != nil {
		return cli.Exit(2, err)
	}
	opt := gate.DefaultOptions()
	opt.MinSamples = f.MinSamples
	g := &run{f: f, exp: exp, opt: opt, stdout: stdout, stderr: stderr}
	return g.do(ctx)
}

// Side suffixes of the configurations of a same-job run.
const (
	baseSuffix = "/base"
	headSuffix = "/head"
)

// checkFlags refuses combinations that make no sense.
func checkFlags(f *Config) error {
	set := f.Given
	modes := 0
	for _, m := range []string{"base", "base-binary", "reference"} {
		if set[m] {
			modes++
		}
	}
	switch {
	case f.Run == "" && modes != 1:
		return errors.New("gate: give one base: --base REV, --reference or --base-binary FILE (run 'concbench help gate')")
	case f.Run != "" && modes > 0:
		return errors.New("gate: --run judges a folder that already holds both sides; --base, --reference and --base-binary cannot change it")
	case f.Run != "" && (set["head-binary"] || set["head-tags"] || set["models"] || set["reps"] || set["conns"] || set["duration"] || set["warmup"] || set["capacity-requests"] || set["relax-load-checks"]):
		return errors.New("gate: --run judges a folder as it was measured; the measurement flags cannot change it")
	case f.HeadTags != "" && !slices.Contains(RegressionTags, f.HeadTags):
		return fmt.Errorf("gate: --head-tags %q unknown (accepted: one of %s)", f.HeadTags, strings.Join(RegressionTags, ", "))
	case set["head-binary"] && set["head-tags"]:
		return errors.New("gate: --head-binary and --head-tags both given (accepted: a build, or tags to build with)")
	case f.MinSamples < 1 || f.MinSamples > harness.MaxRepetitions:
		return fmt.Errorf("gate: --min-samples %d out of range (accepted: 1..%d)", f.MinSamples, harness.MaxRepetitions)
	}
	return nil
}

// AllocRequests is the fewest requests a capacity window must hold for
// its allocation rows to be gated (Config.CapacityRequests sizes windows
// to hold them).
const AllocRequests = gate.DefaultAllocRequests

// RegressionTags are the build tags that inject a regression into the
// head's build (models/leaderfollowers/inject_none.go), one at a time.
var RegressionTags = []string{"concbench_regress_alloc", "concbench_regress_cpu", "concbench_regress_handoff", "concbench_regress_stall"}

// experiment is the gate profile with the flags that were set
// applied over it.
func experiment(f *Config) (harness.Experiment, error) {
	set := f.Given
	exp, err := harness.Profile("gate")
	if err != nil {
		return exp, err
	}
	exp = exp.WithDefaults()
	if set["models"] {
		if exp.Configs, err = override.Configs(exp.Configs, f.Models); err != nil {
			return exp, fmt.Errorf("gate: %w", err)
		}
	}
	override.Given(set, "reps", &exp.Repetitions, f.Reps)
	override.Given(set, "conns", &exp.Workloads[0].Conns, f.Conns)
	override.Given(set, "duration", &exp.Duration, harness.Duration(f.Duration))
	override.Given(set, "warmup", &exp.Warmup, harness.Duration(f.Warmup))
	override.Given(set, "capacity-requests", &exp.CapacityRequests, f.CapacityRequests)
	if f.RelaxLoadChecks {
		exp.LoadLimits = loadgen.RelaxedLimits
	}
	if err := exp.Validate(); err != nil {
		return exp, fmt.Errorf("gate: %w", err)
	}
	return exp, nil
}

// run is one invocation of the gate.
type run struct {
	f              *Config
	exp            harness.Experiment
	opt            gate.Options
	stdout, stderr io.Writer
	tmp            string
	notes          []string
	base, head     gate.Side // labels and refs, filled in as the sides are built
	dir            string    // the run folder
}

// mode names the comparison for the report.
func (g *run) mode() string {
	return "same job, interleaved and counterbalanced (base head, head base, …); open points at the same absolute rate on both sides (a fraction of the base's capacity)"
}

// undecided ends the gate with exit status 2 and a report that says why.
func (g *run) undecided(format string, args ...any) error {
	r := gate.Failed(g.base, g.head, g.mode(), fmt.Sprintf(format, args...))
	r.Notes = g.notes
	return g.finish(r)
}

func (g *run) do(ctx context.Context) error {
	f := g.f
	g.base = gate.Side{Label: "base", Commit: "unknown"}
	g.head = gate.Side{Label: "head", Commit: "unknown", Ref: "working tree"}
	var err error
	if g.tmp, err = os.MkdirTemp("", "concbench-gate-"); err != nil {
		return cli.Exit(2, fmt.Errorf("gate: %w", err))
	}
	defer os.RemoveAll(g.tmp)

	if f.Run != "" {
		g.dir = f.Run
		g.head.Ref, g.base.Ref = "", ""
		g.notes = append(g.notes, fmt.Sprintf("Judged the existing run folder %s (nothing was measured).", f.Run))
	} else {
		if err := g.measure(ctx); err != nil {
			return err
		}
	}

	rr, pts, err := results.ReadRun(g.dir)
	if err != nil {
		return g.undecided("the run folder cannot be read: %v", err)
	}
	if len(rr.Unreadable) > 0 {
		return g.undecided("%d point file(s) of the run cannot be read, so a side may have lost samples: %v", len(rr.Unreadable), rr.Unreadable)
	}
	metrics := gate.Metrics(g.opt.Rules)
	base := gate.FromRun(rr, pts, "base", baseSuffix, metrics)
	head := gate.FromRun(rr, pts, "head", headSuffix, metrics)
	label(base, &g.base)
	label(head, &g.head)
	r := gate.Compare(base, head, g.opt, g.mode())
	if len(base.Points) == 0 && len(head.Points) == 0 {
		r.AddProblem("the run folder %s has no %s and %s configurations (not a gate run)", g.dir, baseSuffix, headSuffix)
	}
	if rr.Partial() {
		r.AddProblem("the run did not finish (interrupted or still running): only %d points were measured", len(pts))
	}
	r.Notes = append(r.Notes, g.notes...)
	return g.finish(r)
}

// label fills in a side's label and where it came from, keeping what the
// points know (their binary's commit) unless the gate knows better.
func label(s *gate.Side, known *gate.Side) {
	s.Label, s.Ref = known.Label, known.Ref
	if known.Commit != "unknown" && known.Commit != "" {
		s.Commit, s.Dirty = known.Commit, known.Dirty
	}
}

// measure builds what needs building and runs the experiment into a new
// run folder.
func (g *run) measure(ctx context.Context) error {
	f := g.f
	tree, treeErr := build.FindTree()
	buildStart := time.Now()

	// The base first: a base that cannot be built ends the gate before
	// anything else is spent.
	baseBin := f.BaseBinary
	if baseBin != "" {
		g.base.Ref = "--base-binary " + f.BaseBinary
	}
	if f.Reference {
		if treeErr != nil {
			return g.undecided("the reference cannot be read: %v", treeErr)
		}
		rev, err := gate.ReadReference(filepath.Join(tree.ModRoot, gate.ReferenceFile))
		if err != nil {
			return g.undecided("%v", err)
		}
		f.Base = rev
		g.notes = append(g.notes, fmt.Sprintf("The base is the reference revision %s named in %s.", rev, gate.ReferenceFile))
	}
	if f.Base != "" {
		g.base.Ref = "--base " + f.Base
		if treeErr != nil {
			return g.undecided("the base cannot be built: %v", treeErr)
		}
		if tree.GitRoot == "" {
			return g.undecided("the base cannot be built: %s is not in a git repository", tree.ModRoot)
		}
		fmt.Fprintf(g.stderr, "concbench gate: building the base %s in a temporary git worktree\n", f.Base)
		var commit string
		var err error
		baseBin, commit, err = build.Base(ctx, tree, f.Base, g.tmp)
		if commit != "" {
			g.base.Commit = commit
		}
		if err != nil {
			return g.undecided("the base %s cannot be built: %v", f.Base, err)
		}
		g.notes = append(g.notes, fmt.Sprintf("The base was built from %s (%s) in a temporary git worktree, removed afterwards.", f.Base, commit))
	}

	headBin := f.HeadBinary
	if headBin == "" {
		if treeErr != nil {
			return g.undecided("the current tree cannot be built: %v", treeErr)
		}
		headBin = filepath.Join(g.tmp, "concbench-head")
		fmt.Fprintf(g.stderr, "concbench gate: building the current tree (%s)%s\n", tree.ModRoot, tagText(f.HeadTags))
		if err := build.Go(ctx, tree.ModRoot, headBin, f.HeadTags); err != nil {
			return g.undecided("the current tree does not build: %v", err)
		}
		g.head.Ref = "working tree" + tagText(f.HeadTags)
	} else {
		g.head.Ref = "--head-binary " + f.HeadBinary
	}
	if treeErr == nil && tree.GitRoot != "" {
		if c, dirty, err := build.Head(ctx, tree.ModRoot); err == nil {
			g.head.Commit, g.head.Dirty = c, dirty
		}
	}

	exp := g.exp
	exp.ServerBinary = headBin
	exp.Counterbalance = true
	exp.Configs = nil
	for _, c := range g.exp.Configs {
		b, h := c, c
		b.Name, b.ServerBinary = c.Name+baseSuffix, baseBin
		h.Name, h.ServerBinary, h.RatesFrom = c.Name+headSuffix, headBin, b.Name
		exp.Configs = append(exp.Configs, b, h)
	}
	opt, _ := g.f.Agents.Options("gate", g.stderr) // checked with the flags
	if g.f.Agents.Using() {
		g.notes = append(g.notes, fmt.Sprintf("The load generators are the agents %s (coordinated by this process) for both sides; only the servers' binaries differ.", g.f.Agents.Agents))
	} else {
		g.notes = append(g.notes, "The load generator is this process (in-process, the current tree's concbench) for both sides; only the servers' binaries differ.")
	}
	buildTime := time.Since(buildStart)
	if err := exp.Validate(); err != nil {
		return g.undecided("the experiment is invalid: %v", err)
	}

	g.dir = filepath.Join(g.f.Out, "gate-"+time.Now().UTC().Format("20060102T150405Z"))
	fmt.Fprintf(g.stderr, "concbench gate: %d configurations × %d repetitions → %s\n", len(exp.Configs), exp.Repetitions, g.dir)
	runStart := time.Now()
	sum, err := harness.Run(ctx, exp, g.dir, opt)
	if err != nil && sum == nil {
		return g.undecided("the run could not be made: %v", err)
	}
	fmt.Fprintf(g.stderr, "concbench gate: %s\n", sum)
	g.notes = append(g.notes, fmt.Sprintf("Run folder: %s (%s). Builds %s, measurement %s.", g.dir, sum, buildTime.Round(time.Second), time.Since(runStart).Round(time.Second)))
	if err != nil {
		return g.undecided("the run failed: %v", err)
	}
	if !setupIsProfile(&g.exp) {
		g.notes = append(g.notes, "The setup was changed by flags: this is not the gate profile's suite.")
	}
	if g.exp.LoadLimits.Relaxed() {
		g.notes = append(g.notes, "The load generator's checks on its own health were turned off (--relax-load-checks): this run is a test of the gate's mechanics, not a measurement to trust.")
	}
	return nil
}

// setupIsProfile reports whether exp is the gate profile unchanged (apart
// from what a run resolves).
func setupIsProfile(exp *harness.Experiment) bool {
	p, _ := harness.Profile("gate")
	p = p.WithDefaults()
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(exp)
	return bytes.Equal(a, b)
}

// finish writes the report (stdout, the run folder, --md, --json) and
// returns the exit status it calls for.
func (g *run) finish(r *gate.Report) error {
	var md, js bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return cli.Exit(2, fmt.Errorf("gate: %w", err))
	}
	if err := r.WriteJSON(&js); err != nil {
		return cli.Exit(2, fmt.Errorf("gate: %w", err))
	}
	var errs []error
	if _, err := g.stdout.Write(md.Bytes()); err != nil {
		errs = append(errs, err)
	}
	files := map[string][]byte{g.f.MD: md.Bytes(), g.f.JSON: js.Bytes()}
	if g.dir != "" && g.f.Run == "" {
		files[filepath.Join(g.dir, "gate.md")] = md.Bytes()
		files[filepath.Join(g.dir, "gate.json")] = js.Bytes()
	}
	for path, b := range files {
		if path == "" {
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cli.Exit(2, fmt.Errorf("gate: writing the report: %w", err))
	}
	switch code := r.ExitCode(); code {
	case 0:
		return nil
	case 1:
		return cli.Exit(1, fmt.Errorf("gate: REGRESSION: %s", strings.Join(r.Regressions(), "; ")))
	default:
		return cli.Exit(code, fmt.Errorf("gate: could not decide: %s", strings.Join(undecidedReasons(r), "; ")))
	}
}

// undecidedReasons lists why r is undecided, briefly.
func undecidedReasons(r *gate.Report) []string {
	out := append([]string(nil), r.Problems...)
	n := 0
	for i := range r.Rows {
		if r.Rows[i].Verdict == gate.Undecided {
			n++
		}
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%d rows undecided (see the report)", n))
	}
	return out
}

func tagText(tags string) string {
	if tags == "" {
		return ""
	}
	return " with -tags " + tags
}

// ReferenceFile is the file naming the reference revision (--reference),
// relative to the module root.
const ReferenceFile = gate.ReferenceFile
