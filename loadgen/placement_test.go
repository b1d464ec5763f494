package loadgen

import (
	"slices"
	"testing"

	"concbench/internal/cpuset"
)

func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cpus        cpuset.Set
		max         int
		wantWorkers int
		wantCPUs    []int
	}{
		{name: "unpinned", cpus: nil, wantWorkers: 1},
		{name: "one CPU", cpus: cpuset.Set{1}, wantWorkers: 1},
		{name: "two CPUs", cpus: cpuset.Set{2, 3}, wantWorkers: 1, wantCPUs: []int{3}},
		{name: "eight CPUs", cpus: cpuset.Set{8, 9, 10, 11, 12, 13, 14, 15}, wantWorkers: 7, wantCPUs: []int{9, 10, 11, 12, 13, 14, 15}},
		{name: "bounded by connections", cpus: cpuset.Set{0, 1, 2, 3, 4, 5}, max: 2, wantWorkers: 2, wantCPUs: []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, cpus := Placement(tc.cpus, tc.max)
			if w != tc.wantWorkers || !slices.Equal(cpus, tc.wantCPUs) {
				t.Errorf("Placement(%v, %d) = %d, %v; want %d, %v", tc.cpus, tc.max, w, cpus, tc.wantWorkers, tc.wantCPUs)
			}
		})
	}
}

// TestProcs checks that the collector's dedicated workers (a quarter of
// GOMAXPROCS, rounded) fit in the Ps beyond the workers'.
func TestProcs(t *testing.T) {
	for w := 1; w <= 256; w++ {
		p := Procs(w)
		if dedicated := (p + 2) / 4; p-w < dedicated || p-w < 1 || w == 1 && p != 2 {
			t.Errorf("Procs(%d) = %d: %d spare Ps for %d dedicated mark workers", w, p, p-w, dedicated)
		}
	}
}
