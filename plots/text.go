package plots

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"concbench/results"
)

// Plural returns "n one" or "n many".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// FormatStat formats a median with its interval: "45.1µs [43.2µs, 47.0µs]",
// or with the reason there is none: "45.1µs (n=5, no CI)". Latencies
// (unit "ns") are written with their unit, other values as bare numbers.
func FormatStat(s results.Stats, unit string) string { return FormatStatLevel(s, unit, true) }

// RangeLevel is the level at which the range of n values holds their
// median, 1 − 2·2⁻ⁿ, in percent, as FormatStat prints it.
func RangeLevel(n int) string {
	return TrimFloat(math.Round(1000*(1-2*math.Pow(0.5, float64(n))))/10) + "%"
}

// FormatStatLevel is FormatStat; without level, a range (3 to 5 values) is
// printed without its level, which a table then states once (the
// Summary's header).
func FormatStatLevel(s results.Stats, unit string, level bool) string {
	if s.N == 0 {
		return "n/a"
	}
	format := TrimFloat
	if unit == "ns" {
		format = FormatNs
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
		return fmt.Sprintf("%s [%s, %s] %s", format(s.Median), format(s.Min), format(s.Max), RangeLevel(s.N))
	}
	return fmt.Sprintf("%s (n=%d, no CI)", format(s.Median), s.N)
}

// bandText says what the figure's intervals are.
const bandText = "95% confidence interval of the median across repetitions; where fewer than 6 repetitions were measured (too few for that interval) the min–max range instead, marked \"range\" in the CSV"

// JoinAnd joins items as "a, b and c".
func JoinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// Capitalize returns s with its first letter upper-case.
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
