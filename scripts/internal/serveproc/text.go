package serveproc

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"concbench/loadgen"
)

// Median returns the median of xs (the mean of the two middle values for
// an even count), 0 for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// FirstLine returns the first line of s, trimmed: an error's or a child's
// output's first line, for a table cell.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// ReadResult reads a load generator's result, as "concbench load --json
// path" writes it.
func ReadResult(path string) (*loadgen.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r loadgen.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}
