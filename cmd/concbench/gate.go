package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"concbench/gate"
	"concbench/harness"
	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/results"
)

const gateUsage = `usage: concbench gate --base REV [flags]      a base revision against the current tree
       concbench gate --reference [flags]     the revision named in results/baseline/reference against it (CI)
       concbench gate --run DIR               judge a gate run folder again (nothing is measured)

The CI performance-regression gate. It builds the base revision in a
temporary git worktree and the current tree, and measures both in one job
on this machine with the harness's "gate" profile (leaderfollowers/lifo,
halfsynchalfreactive and netpoll; capacity, and open-loop points at 10% and
50% of the BASE's capacity for both sides: equal load), interleaved and
counterbalanced (base head, head base, …), from one load generator in this
process. Nothing measured on another machine is compared.

  --base REV       the base: a commit, a branch, HEAD (your uncommitted
                   changes against the last commit), or a merge base.
  --reference      the base is the revision named in results/baseline/reference
                   (what make gate-ci and .ci/run use; see gate/doc.go).

Every configuration × load × metric is a row: allocations and bytes per
request strictly (a fixed bound on the change of the medians), context
switches per request within a tolerance that scales with the base's value,
throughput, server CPU per request and latency percentiles by a
Mann–Whitney U test that must be significant after Holm's correction over
all of the run's U tests (a family-wise error rate of 5%) AND show a
minimum effect; and the points the server failed (died, failed
verification, fell behind the equal load) — any more of them on the head
side is a regression. Only changes in the bad direction fail;
improvements are reported. Points whose load-generator verdict on itself
is invalid are left out of every sample (and listed); a row with fewer
than --min-samples valid samples on a side is undecided.

The report (Markdown, benchstat's manner, for a pull-request comment) goes
to standard output and, with the JSON verdict, into the run folder
(gate.md, gate.json) and to --md and --json. Progress goes to standard
error.

--agents host:port,… (with --agent-token, and --server-addr where the
agents reach the servers) generates both sides' load through "concbench
agent"s, as bench --agents does (see "help bench"); the report says so.

Exit status: 0 pass, 1 regression, 2 the gate could not decide (a build
failed, a run folder cannot be read, too few valid samples, a model
unavailable on one side, the run was interrupted, bad flags) — never a
silent pass. .ci/run measures once more when the gate cannot decide, and
then passes with a warning (see gate/doc.go).

Flags:
`

// gateFlags are the gate command's settings.
type gateFlags struct {
	base, run                        string
	reference, relaxLoadChecks       bool
	baseBinary, headBinary, headTags string
	md, json, out                    string
	models                           string
	reps, conns, minSamples          int
	duration, warmup                 time.Duration
	agent                            agentFlags
}

// Side suffixes of the configurations of a same-job run.
const (
	baseSuffix = "/base"
	headSuffix = "/head"
)

func runGate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	var f gateFlags
	prof, _ := harness.Profile("gate")
	fs.StringVar(&f.base, "base", "", "the base git revision (e.g. HEAD, origin/main, a merge base), built in a temporary worktree and measured in the same job")
	fs.BoolVar(&f.reference, "reference", false, "the base is the revision named in "+gate.ReferenceFile+" (make gate-ci)")
	fs.StringVar(&f.run, "run", "", "judge this existing gate run folder instead of measuring (with --baseline: against the baseline)")
	fs.StringVar(&f.baseBinary, "base-binary", "", "a concbench built from the base, instead of --base (e.g. built elsewhere)")
	fs.StringVar(&f.headBinary, "head-binary", "", "a concbench built from the current tree, instead of building it (by default the gate builds it, with the same flags as the base)")
	fs.StringVar(&f.headTags, "head-tags", "", "build tags for the current tree's build: concbench_regress_<alloc|cpu|handoff|stall> injects a regression into leaderfollowers (the gate's self-tests; one at a time)")
	fs.StringVar(&f.md, "md", "", "also write the Markdown report to this file")
	fs.StringVar(&f.json, "json", "", "also write the JSON verdict to this file")
	fs.StringVar(&f.out, "out", "out", "the folder under which the run folder gate-<UTC time> is made")
	fs.StringVar(&f.models, "models", "", "comma-separated configurations, by name or model (default: the gate profile's)")
	fs.IntVar(&f.reps, "reps", prof.Repetitions, "repetitions per side (the profile's)")
	fs.IntVar(&f.conns, "conns", prof.Workloads[0].Conns, "connections (the profile's)")
	fs.DurationVar(&f.duration, "duration", time.Duration(prof.Duration), "measured window of every point (the profile's)")
	fs.DurationVar(&f.warmup, "warmup", time.Duration(prof.Warmup), "warm-up before every window (the profile's)")
	fs.IntVar(&f.minSamples, "min-samples", gate.DefaultMinSamples, "valid samples per side a gated row needs (fewer: undecided)")
	f.agent.register(fs)
	fs.BoolVar(&f.relaxLoadChecks, "relax-load-checks", false, "turn off the load generator's checks on its own health (only for tests on a machine busy with other work; the report says so)")
	if err := cli.Parse(fs, args, stdout, gateUsage); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cli.Exit(2, err)
	}
	set := cli.Set(fs)
	if err := checkGateFlags(&f, set, fs.Args()); err != nil {
		return cli.Exit(2, err)
	}
	if _, err := f.agent.options("gate", io.Discard); err != nil {
		return cli.Exit(2, err)
	}
	exp, err := gateExperiment(&f, set)
	if err != nil {
		return cli.Exit(2, err)
	}
	opt := gate.DefaultOptions()
	opt.MinSamples = f.minSamples
	g := &gateRun{f: &f, exp: exp, opt: opt, stdout: stdout, stderr: stderr}
	return g.do(ctx)
}

// checkGateFlags refuses combinations that make no sense.
func checkGateFlags(f *gateFlags, set map[string]bool, rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("gate: unexpected argument %q (flags only)", rest[0])
	}
	modes := 0
	for _, m := range []string{"base", "base-binary", "reference"} {
		if set[m] {
			modes++
		}
	}
	switch {
	case f.run == "" && modes != 1:
		return errors.New("gate: give one base: --base REV, --reference or --base-binary FILE (run 'concbench help gate')")
	case f.run != "" && modes > 0:
		return errors.New("gate: --run judges a folder that already holds both sides; --base, --reference and --base-binary cannot change it")
	case f.run != "" && (set["head-binary"] || set["head-tags"] || set["models"] || set["reps"] || set["conns"] || set["duration"] || set["warmup"] || set["relax-load-checks"]):
		return errors.New("gate: --run judges a folder as it was measured; the measurement flags cannot change it")
	case f.headTags != "" && !slices.Contains(regressionTags, f.headTags):
		return fmt.Errorf("gate: --head-tags %q unknown (accepted: one of %s)", f.headTags, strings.Join(regressionTags, ", "))
	case set["head-binary"] && set["head-tags"]:
		return errors.New("gate: --head-binary and --head-tags both given (accepted: a build, or tags to build with)")
	case f.minSamples < 1 || f.minSamples > harness.MaxRepetitions:
		return fmt.Errorf("gate: --min-samples %d out of range (accepted: 1..%d)", f.minSamples, harness.MaxRepetitions)
	}
	return nil
}

// relaxedLimits turn off every check of the load generator on its own
// health (--relax-load-checks).
var relaxedLimits = loadgen.Limits{MaxLagShare: 1, MaxBusy: 1, MaxRunQueue: 1, MaxSteal: 1, SendProcessAlpha: 1e-300}

// regressionTags are the build tags that inject a regression into the
// head's build (models/leaderfollowers/inject_none.go), one at a time.
var regressionTags = []string{"concbench_regress_alloc", "concbench_regress_cpu", "concbench_regress_handoff", "concbench_regress_stall"}

// gateExperiment is the gate profile with the flags that were set
// applied over it.
func gateExperiment(f *gateFlags, set map[string]bool) (harness.Experiment, error) {
	exp, err := harness.Profile("gate")
	if err != nil {
		return exp, err
	}
	exp = exp.WithDefaults()
	if set["models"] {
		if exp.Configs, err = selectConfigs(exp.Configs, f.models); err != nil {
			return exp, fmt.Errorf("gate: %w", err)
		}
	}
	given(set, "reps", &exp.Repetitions, f.reps)
	given(set, "conns", &exp.Workloads[0].Conns, f.conns)
	given(set, "duration", &exp.Duration, harness.Duration(f.duration))
	given(set, "warmup", &exp.Warmup, harness.Duration(f.warmup))
	if f.relaxLoadChecks {
		exp.LoadLimits = relaxedLimits
	}
	if err := exp.Validate(); err != nil {
		return exp, fmt.Errorf("gate: %w", err)
	}
	return exp, nil
}

// gateRun is one invocation of the gate.
type gateRun struct {
	f              *gateFlags
	exp            harness.Experiment
	opt            gate.Options
	stdout, stderr io.Writer
	tmp            string
	notes          []string
	base, head     gate.Side // labels and refs, filled in as the sides are built
	dir            string    // the run folder
}

// mode names the comparison for the report.
func (g *gateRun) mode() string {
	return "same job, interleaved and counterbalanced (base head, head base, …); open points at the same absolute rate on both sides (a fraction of the base's capacity)"
}

// undecided ends the gate with exit status 2 and a report that says why.
func (g *gateRun) undecided(format string, args ...any) error {
	r := gate.Failed(g.base, g.head, g.mode(), fmt.Sprintf(format, args...))
	r.Notes = g.notes
	return g.finish(r)
}

func (g *gateRun) do(ctx context.Context) error {
	f := g.f
	g.base = gate.Side{Label: "base", Commit: "unknown"}
	g.head = gate.Side{Label: "head", Commit: "unknown", Ref: "working tree"}
	var err error
	if g.tmp, err = os.MkdirTemp("", "concbench-gate-"); err != nil {
		return cli.Exit(2, fmt.Errorf("gate: %w", err))
	}
	defer os.RemoveAll(g.tmp)

	if f.run != "" {
		g.dir = f.run
		g.head.Ref, g.base.Ref = "", ""
		g.notes = append(g.notes, fmt.Sprintf("Judged the existing run folder %s (nothing was measured).", f.run))
	} else {
		if err := g.measure(ctx); err != nil {
			return err
		}
	}

	run, pts, err := results.ReadRun(g.dir)
	if err != nil {
		return g.undecided("the run folder cannot be read: %v", err)
	}
	if len(run.Unreadable) > 0 {
		return g.undecided("%d point file(s) of the run cannot be read, so a side may have lost samples: %v", len(run.Unreadable), run.Unreadable)
	}
	metrics := gate.Metrics(g.opt.Rules)
	base := gate.FromRun(run, pts, "base", baseSuffix, metrics)
	head := gate.FromRun(run, pts, "head", headSuffix, metrics)
	label(base, &g.base)
	label(head, &g.head)
	r := gate.Compare(base, head, g.opt, g.mode())
	if len(base.Points) == 0 && len(head.Points) == 0 {
		r.AddProblem("the run folder %s has no %s and %s configurations (not a gate run)", g.dir, baseSuffix, headSuffix)
	}
	if run.Partial() {
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
func (g *gateRun) measure(ctx context.Context) error {
	f := g.f
	tree, treeErr := findTree()
	buildStart := time.Now()

	// The base first: a base that cannot be built ends the gate before
	// anything else is spent.
	baseBin := f.baseBinary
	if baseBin != "" {
		g.base.Ref = "--base-binary " + f.baseBinary
	}
	if f.reference {
		if treeErr != nil {
			return g.undecided("the reference cannot be read: %v", treeErr)
		}
		rev, err := gate.ReadReference(filepath.Join(tree.modRoot, gate.ReferenceFile))
		if err != nil {
			return g.undecided("%v", err)
		}
		f.base = rev
		g.notes = append(g.notes, fmt.Sprintf("The base is the reference revision %s named in %s.", rev, gate.ReferenceFile))
	}
	if f.base != "" {
		g.base.Ref = "--base " + f.base
		if treeErr != nil {
			return g.undecided("the base cannot be built: %v", treeErr)
		}
		if tree.gitRoot == "" {
			return g.undecided("the base cannot be built: %s is not in a git repository", tree.modRoot)
		}
		fmt.Fprintf(g.stderr, "concbench gate: building the base %s in a temporary git worktree\n", f.base)
		var commit string
		var err error
		baseBin, commit, err = buildBase(ctx, tree, f.base, g.tmp)
		if commit != "" {
			g.base.Commit = commit
		}
		if err != nil {
			return g.undecided("the base %s cannot be built: %v", f.base, err)
		}
		g.notes = append(g.notes, fmt.Sprintf("The base was built from %s (%s) in a temporary git worktree, removed afterwards.", f.base, commit))
	}

	headBin := f.headBinary
	if headBin == "" {
		if treeErr != nil {
			return g.undecided("the current tree cannot be built: %v", treeErr)
		}
		headBin = filepath.Join(g.tmp, "concbench-head")
		fmt.Fprintf(g.stderr, "concbench gate: building the current tree (%s)%s\n", tree.modRoot, tagText(f.headTags))
		if err := goBuild(ctx, tree.modRoot, headBin, f.headTags); err != nil {
			return g.undecided("the current tree does not build: %v", err)
		}
		g.head.Ref = "working tree" + tagText(f.headTags)
	} else {
		g.head.Ref = "--head-binary " + f.headBinary
	}
	if treeErr == nil && tree.gitRoot != "" {
		if c, dirty, err := gitHead(ctx, tree.modRoot); err == nil {
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
	opt, _ := g.f.agent.options("gate", g.stderr) // checked with the flags
	if g.f.agent.using() {
		g.notes = append(g.notes, fmt.Sprintf("The load generators are the agents %s (coordinated by this process) for both sides; only the servers' binaries differ.", g.f.agent.agents))
	} else {
		g.notes = append(g.notes, "The load generator is this process (in-process, the current tree's concbench) for both sides; only the servers' binaries differ.")
	}
	buildTime := time.Since(buildStart)
	if err := exp.Validate(); err != nil {
		return g.undecided("the experiment is invalid: %v", err)
	}

	g.dir = filepath.Join(g.f.out, "gate-"+time.Now().UTC().Format("20060102T150405Z"))
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
func (g *gateRun) finish(r *gate.Report) error {
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
	files := map[string][]byte{g.f.md: md.Bytes(), g.f.json: js.Bytes()}
	if g.dir != "" && g.f.run == "" {
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

// tree is where the current tree is: its module root and, if it is in
// a git repository, the repository's root.
type tree struct {
	modRoot, gitRoot string
	rel              string // modRoot relative to gitRoot
}

// findTree locates the concbench module around the working directory.
func findTree() (tree, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return tree{}, fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return tree{}, errors.New("the working directory is not inside a Go module (run the gate from the concbench checkout)")
	}
	t := tree{modRoot: filepath.Dir(mod)}
	if _, err := os.Stat(filepath.Join(t.modRoot, "cmd", "concbench")); err != nil {
		return tree{}, fmt.Errorf("%s is not the concbench module: %w", t.modRoot, err)
	}
	if out, err := exec.Command("git", "-C", t.modRoot, "rev-parse", "--show-toplevel").Output(); err == nil {
		t.gitRoot = strings.TrimSpace(string(out))
		if t.rel, err = filepath.Rel(t.gitRoot, t.modRoot); err != nil {
			return tree{}, err
		}
	}
	return t, nil
}

// goBuild builds ./cmd/concbench in dir into out, with build tags. Both
// sides are built alike: -trimpath (so that the build cache serves the
// base's unchanged packages from a worktree in another folder) and
// -buildvcs=auto (so that each binary carries the commit it was built
// from, whatever GOFLAGS says).
func goBuild(ctx context.Context, dir, out, tags string) error {
	args := []string{"build", "-trimpath", "-buildvcs=auto"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "-o", out, "./cmd/concbench")
	return runIn(ctx, dir, "go", args...)
}

// runIn runs a command in dir; its error carries the command's output.
func runIn(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, bytes.TrimSpace(b))
	}
	return nil
}

// gitHead returns the commit checked out in dir and whether the tree has
// uncommitted changes (harness.GitHead, its error worded for the gate).
func gitHead(ctx context.Context, dir string) (string, bool, error) {
	commit, dirty, err := harness.GitHead(ctx, dir)
	if err != nil {
		return "", false, fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	return commit, dirty, nil
}

// buildBase checks rev out in a temporary git worktree under tmp, builds
// concbench there into tmp, and removes the worktree. It returns the
// binary and the commit rev names (as soon as it is known, also on
// failure).
func buildBase(ctx context.Context, t tree, rev, tmp string) (bin, commit string, err error) {
	out, err := exec.CommandContext(ctx, "git", "-C", t.gitRoot, "rev-parse", "--verify", "--quiet", rev+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("git rev-parse: %q is not a commit in %s", rev, t.gitRoot)
	}
	commit = strings.TrimSpace(string(out))
	wt := filepath.Join(tmp, "base-src")
	if err := runIn(ctx, t.gitRoot, "git", "worktree", "add", "--detach", wt, commit); err != nil {
		return "", commit, err
	}
	defer func() {
		// Remove the worktree and its administrative files whatever
		// happened; a failure to do so is reported, not hidden.
		rerr := runIn(context.Background(), t.gitRoot, "git", "worktree", "remove", "--force", wt)
		if rerr != nil {
			rerr = errors.Join(rerr, runIn(context.Background(), t.gitRoot, "git", "worktree", "prune"))
		}
		if rerr != nil && err == nil {
			err = fmt.Errorf("removing the base worktree %s: %w", wt, rerr)
		}
	}()
	bin = filepath.Join(tmp, "concbench-base")
	if err := goBuild(ctx, filepath.Join(wt, t.rel), bin, ""); err != nil {
		return "", commit, err
	}
	return bin, commit, nil
}
