// Package stats holds the project's statistical inference, one place per
// test: every package that tests, corrects or ranks calls it, none
// computes a statistic of its own.
//
//   - Samples: MedianCI, the median with its order-statistic confidence
//     interval (x/perf benchmath, AssumeNothing: what benchstat reports),
//     for results.Summarize.
//   - Two samples: MannWhitney, the two-sided Mann–Whitney U test
//     (benchmath, benchstat's test); MannWhitneyGreater, the one-sided U
//     test with its exact p and MannWhitneyMinP, the smallest p it can
//     give (the regression gate); RatioCI, the Hodges–Lehmann ratio with
//     its distribution-free Moses interval (the report's margins and
//     factors); WelchLog, Welch's t-test on logarithms with the ratio of
//     geometric means and its interval (the report's verdicts).
//   - Proportions: ClopperPearson, the exact interval of a binomial
//     proportion (the gate's measured error rates, concbench gaterate).
//   - Families of tests: Holm, Holm's step-down procedure (the gate's
//     U tests, the report's who-wins table and promotion orders).
//   - Deciding among configurations: Decide, the who-wins table's rule —
//     the best against every other by paired t-tests on logarithms
//     ("behind by more than the margin"; two one-sided tests for "within
//     it"), with the spread pooled over the arms where Bartlett's test
//     allows (Block, the additive fit with rounds as blocks), bounds
//     (Censor) restricting the claims a round allows, Holm within the
//     cell for the claims of an undecided one, an indifference-zone
//     selection (Near: the best shown to be within the margin of the
//     true best) where neither a winner nor a group is shown, and the
//     repetitions a decision needs as a t-based range.
//   - The load generator's self-checks: KSExp, the Kolmogorov–Smirnov test
//     against the exponential; Spearman, the rank correlation; and
//     MannKendallZ, the trend test. Ranks ranks a sample for them and for
//     the U test.
//
// Every function leaves its arguments unmodified unless its comment says
// otherwise (KSExp sorts in place: its caller's slices are scratch).
//
// # Libraries
//
// Summary statistics (min, max, mean, median, spread: Describe, MedianOf)
// stay on github.com/montanaflynn/stats, the project's chosen library for
// them, imported as mstats. This package is the only one that imports it,
// and the two libraries below:
//
//   - golang.org/x/perf/benchmath, for the median's interval and the
//     two-sided U test, so that the report's numbers are benchstat's.
//   - github.com/aclements/go-moremath/stats, for Welch's t-test and the
//     t distribution's quantile (mathx's regularized incomplete beta
//     function underneath), imported as moremath: mstats is
//     montanaflynn/stats.
//
// Note: go-moremath is kept, not replaced. benchmath itself imports it,
// so it stays in the module graph whatever this package does; writing
// the incomplete beta function here would add code to maintain and drop
// no dependency.
//
// Note: MannWhitneyGreater is not benchmath's test made one-sided.
// benchmath offers only the two-sided test; go-moremath's one-sided U
// test switches to its normal approximation at other sample sizes, and
// the gate's verdicts (and its measured error rates) were established
// with this exact tail. One implementation of each remains, here.
package stats
