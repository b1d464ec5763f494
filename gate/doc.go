// Package gate is the judgement of the CI performance-regression gate: it
// compares a head side (the current tree) with a base side (a reference
// revision's build measured in the same job), decides pass, regression or
// undecided, and writes the decision as a Markdown table for a
// pull-request comment and as JSON. "concbench gate" (programs/gate,
// with gate/build) builds and measures, then calls it; "make gate", "make gate-ci" and
// .ci/run call that.
//
// # Participants
//
//   - Side: one side's points reduced to what is judged (Point: identity,
//     status, whose fault it is if it cannot be used, the value of every
//     metric a rule reads), with the commit that served them. FromRun
//     makes a side from a run folder's points: a gate run holds both
//     sides as configurations "<name>/base" and "<name>/head".
//   - Rule: how one metric of one kind of point is judged (Method: Strict,
//     Tolerance, UTest or Failures, with its bound). DefaultRules are the
//     gate's.
//   - Compare: every configuration × load × rule of its kind becomes a Row
//     (both samples' medians, the change, the p-value and its Holm
//     adjustment, the verdict); the Report's Outcome gives the exit status
//     (ExitCode).
//   - Report.WriteMarkdown and Report.WriteJSON: the outputs.
//   - ReadReference: the revision results/baseline/reference names, the
//     base of "make gate-ci".
//
// # What is measured, and against what
//
// Both sides are measured in the same job, on the same machine: the base
// revision is checked out in a temporary git worktree and built, the
// current tree is built, and the harness's "gate" profile runs them as two
// configurations per model (leaderfollowers/lifo, halfsynchalfreactive,
// netpoll): per repetition a capacity point (closed loop) and open-loop
// points at 10 % and 50 % of the BASE's capacity for both sides
// (harness.Config.RatesFrom), so that a head that got slower is offered the
// same load as the base and its latency regression shows, instead of
// being offered less. The order is counterbalanced (base head in even
// repetitions, head base in odd ones: harness.Experiment.Counterbalance),
// so that neither side is measured first, or warmer, more often. One load
// generator, this process, drives both; only the servers differ. Numbers
// measured on another machine are never compared: context switches,
// throughput and latency at a given load depend on the host (the first
// batch's committed baseline failed on the next machine of the same kind,
// with the code unchanged).
//
// The reference of CI (make gate-ci, .ci/run) is the revision named in
// results/baseline/reference, not "the previous commit": CI runs on a
// checkout of main that already holds the change, and does not know where
// the change began; a merge base needs a branch. A named reference is
// machine-independent (it is code, rebuilt and re-measured in every job)
// and moves only by a commit that says why — the commit that means to
// change the gated costs, which the gate's failure on it reminds of. For a
// branch, "make gate BASE=$(git merge-base origin/main HEAD)"; for
// uncommitted work, "make gate" (BASE=HEAD).
//
// # How a row is judged
//
// Each side's sample is the metric's values over the group's usable
// repetitions (one per repetition). Only changes in the bad direction
// fail; the same change in the good direction is reported as an
// improvement and never fails.
//
//   - Strict (allocations and bytes per request, near-deterministic): the
//     medians may differ by at most Abs (DefaultAllocsAbs 0.05/request,
//     DefaultBytesAbs 8 B/request), read only from windows of at least
//     DefaultAllocRequests (20 000) requests: runtime/metrics counts
//     allocations a span at a time, and over the 10 % point's fewer
//     requests no-change runs moved by more than the bound
//     (docs/findings.md). A row without such windows is "not gated"
//     (reported, neither a pass nor undecided).
//   - Tolerance (context switches per request): the medians may differ by
//     at most Abs + Rel × |base median| (DefaultCtxswAbs 0.1 +
//     DefaultCtxswRel 25 %): the bound scales with the metric, from
//     netpoll's small fraction of a switch per request at capacity to
//     the few of a model that hands requests off. A change beyond it fails
//     only when a one-sided U test in the bad direction also gives
//     p < Alpha (uncorrected: the tolerance is the criterion, the test
//     only tells a shift of every repetition from a median moved by the
//     metric's spread; Row.PShift).
//   - UTest (throughput and the server's user CPU per request at
//     capacity; p99 latency at both open points — at 10 % the base's p99
//     is a small fraction of its p99 at half load, so a tail regression
//     shows there —; p50 latency and user
//     CPU per request at 50 %: 18 tests in all): a regression needs a
//     one-sided Mann–Whitney U test for a change in the bad direction
//     (stats.MannWhitneyGreater, exact for these sample sizes) that is
//     significant after Holm's step-down correction (stats.Holm) over all
//     of the run's U tests, so that the probability of any false
//     regression in a run is at most Alpha (5 %) when nothing changed,
//     AND a change of the medians of at least MinEffect (10 %
//     throughput, CPU and p50, 100 % p99: DefaultP99Effect says why): a
//     significant 5 % shift does not fail the build — two builds of
//     identical server code differed by more than that at capacity, once
//     significantly (DefaultCapacityEffect; docs/findings.md has the
//     runs). One-sided, because
//     only a change in the bad direction fails; an improvement of the
//     minimum effect, significant one-sided at Alpha by itself, is
//     reported and never fails. The latency rows leave out each side's
//     highest repetition (Rule.TrimHighest) when the side has one more
//     than MinSamples: one stall of the server's CPU can multiply one
//     repetition's p99 (seen in a no-change run: docs/findings.md), which
//     would otherwise mask a regression that moved every repetition. User
//     CPU rather than all of it: the kernel's share moves with how the
//     machine schedules (across one run's repetitions, by more than the
//     user time did), and a kernel-side regression shows in throughput and
//     context switches. With 7 repetitions a side, a row can still decide
//     with a point of each side lost, or two of one.
//   - Failures: the points the server itself failed (the server died, a
//     response failed verification, or the load generator's verdict is
//     invalid for the server's doing: over capacity at the equal load,
//     the rate missed, requests never sent, while the generator had its
//     CPU: a point whose generator waited for its CPU is the generator's,
//     whatever else it missed, since a starved generator can neither send
//     nor read on time). Any more of them on the head
//     side than on the base side is a regression, named: a head that
//     crashes in some repetitions, or falls behind a load the base
//     sustains, is worse, not merely unmeasurable.
//
// # Samples, invalid points, undecided rows
//
// A point enters the samples only if it was measured and the load
// generator's verdict is valid. A point the server failed is counted by
// its Failures row and left out of the samples. A point whose verdict is
// invalid for the generator's own doing (it could not keep its schedule,
// its CPU was taken: loadgen's generator-lag, generator-cpu,
// generator-busy, send-process checks) says nothing about either server:
// it is left out and listed. A row needs MinSamples (5 of the profile's 7)
// valid samples per side, and a U-test row samples large enough that the
// test can reach significance as the smallest p of the family (its
// smallest possible p below Alpha / the number of U tests); otherwise it
// is undecided, never "~".
//
// # Outcome
//
// Any REGRESSION row makes the outcome Regressed (exit 1), naming the
// configuration, the load and the metric. Otherwise any undecided row or
// problem makes it Unsure (exit 2): a build that failed, a model
// unavailable on one side (or on both: it was not judged), a
// configuration or load measured on one side only, an interrupted run,
// or nothing gated at all. Only then does it pass (exit 0).
//
// Undecided: .ci/run measures once more, since it is usually the
// machine's doing (a neighbour taking the load generator's CPU
// invalidates its points); undecided twice, CI passes with a warning as
// the first line of the gate's report (out/gate-ci.md) and the last line
// of its output, with the reasons — never silently.
//
// # Injected regressions
//
// Build tags inject one regression into leaderfollowers, each but the
// first without an allocation, for proving the gate's power
// (models/leaderfollowers/inject_none.go; concbench gate --head-tags T):
// concbench_regress_alloc (one 64-byte allocation per request: the strict
// rule, in make test's short self-test), concbench_regress_cpu (about
// 5 µs of CPU per request), concbench_regress_handoff (a hand-off to
// another thread and back per request) and concbench_regress_stall (a
// 1 ms sleep of the serving thread once every 100 requests: a tail-only
// regression, visible at the 10 % point, where the base's p99 is below
// the stall, while at half load it is already of the stall's order).
//
// "concbench gaterate" measures the rates: the share of N runs that exit
// 1, with its Clopper–Pearson 95 % interval, and per row the changes seen;
// "concbench gaterate --runs 0 --out results/gaterate/<kind>" recounts a
// committed campaign.
//
// # Measured error rates
//
// The false-positive rate of no-change runs and the power against each
// injected regression, measured with concbench gaterate, are in
// docs/findings.md ("The CI gate"), with the commands, commits and
// machines; the runs behind them are under results/gaterate/.
package gate
