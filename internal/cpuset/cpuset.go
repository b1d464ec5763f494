// Package cpuset parses CPU lists ("0", "0-3,6") and pins every thread of a
// process to a set of CPUs, so that a server and its load generator run on
// disjoint CPUs.
package cpuset

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Count returns how many CPUs the calling thread may run on (its
// affinity mask, which a process pinned with Pin shares), or
// runtime.NumCPU where the mask cannot be read: the "thread per CPU" of
// the models sized by it.
func Count() int {
	if s, err := Current(); err == nil && len(s) > 0 {
		return len(s)
	}
	return runtime.NumCPU()
}

// Set is a sorted list of distinct CPU numbers.
type Set []int

// Parse parses a CPU list in the kernel's cpulist syntax: comma-separated
// numbers and inclusive ranges ("0-2,5"). The empty string is the empty set.
func Parse(s string) (Set, error) {
	var set Set
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: %q is not a CPU number (accepted: e.g. 0, 0-3, 0,2)", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: %q is not a range low-high with low <= high", s, part)
			}
		}
		if b >= 1024 {
			return nil, fmt.Errorf("cpu list %q: CPU %d out of range (accepted: 0..1023)", s, b)
		}
		for c := a; c <= b; c++ {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	return slices.Compact(set), nil
}

// String formats the set in cpulist syntax.
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", s[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", s[i], s[j])
		}
		i = j + 1
	}
	return b.String()
}
