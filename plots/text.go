package plots

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"concbench/results"
)

// plural returns "n one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// fmtStat formats a median with its interval: "45.1µs [43.2µs, 47.0µs]",
// or with the reason there is none: "45.1µs (n=5, no CI)". Latencies
// (unit "ns") are written with their unit, other values as bare numbers.
func fmtStat(s results.Stats, unit string) string { return fmtStatLevel(s, unit, true) }

// rangeLevel is the level at which the range of n values holds their
// median, 1 − 2·2⁻ⁿ, in percent, as fmtStat prints it.
func rangeLevel(n int) string {
	return trimFloat(math.Round(1000*(1-2*math.Pow(0.5, float64(n))))/10) + "%"
}

// fmtStatLevel is fmtStat; without level, a range (3 to 5 values) is
// printed without its level, which a table then states once (the
// Summary's header).
func fmtStatLevel(s results.Stats, unit string, level bool) string {
	if s.N == 0 {
		return "n/a"
	}
	format := trimFloat
	if unit == "ns" {
		format = formatNs
	}
	if s.HasCI() {
		return fmt.Sprintf("%s [%s, %s]", format(s.Median), format(s.Lo), format(s.Hi))
	}
	if s.N >= 3 {
		// The range of n values holds the median with probability
		// 1 − 2·2⁻ⁿ: the order-statistic interval below the 95 % level.
		if !level {
			return fmt.Sprintf("%s [%s, %s]", format(s.Median), format(s.Min), format(s.Max))
		}
		return fmt.Sprintf("%s [%s, %s] %s", format(s.Median), format(s.Min), format(s.Max), rangeLevel(s.N))
	}
	return fmt.Sprintf("%s (n=%d, no CI)", format(s.Median), s.N)
}

// bandText says what the figure's intervals are.
const bandText = "95% confidence interval of the median across repetitions; where fewer than 6 repetitions were measured (too few for that interval) the min–max range instead, marked \"range\" in the CSV"

// joinAnd joins items as "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
