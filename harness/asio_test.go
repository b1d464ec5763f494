package harness

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"concbench/models"
	"concbench/models/registry"
)

// TestParseAsioStats checks the reading of the asio server's "stats"
// line: its connections accepted and a ThreadStats per io_context
// thread, and any other answer refused.
func TestParseAsioStats(t *testing.T) {
	for _, tc := range []struct {
		name     string
		line     string
		accepted uint64
		threads  []models.ThreadStats
		bad      bool
	}{
		{name: "two threads", line: "stats 65 101:7 102:0", accepted: 65,
			threads: []models.ThreadStats{{TID: 101, Role: "pool", Requests: 7}, {TID: 102, Role: "pool"}}},
		{name: "no thread", line: "stats 0", accepted: 0},
		{name: "an error", line: "error unknown command", bad: true},
		{name: "empty", line: "", bad: true},
		{name: "no count", line: "stats x 1:2", bad: true},
		{name: "no pair", line: "stats 1 12", bad: true},
		{name: "a thread not started", line: "stats 1 0:0", bad: true},
		{name: "a negative count", line: "stats 1 5:-1", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accepted, threads, err := parseAsioStats(tc.line)
			if tc.bad {
				if err == nil {
					t.Errorf("parseAsioStats(%q) = %d, %v; want an error", tc.line, accepted, threads)
				}
				return
			}
			if err != nil || accepted != tc.accepted || !slices.Equal(threads, tc.threads) {
				t.Errorf("parseAsioStats(%q) = %d, %v, %v; want %d, %v", tc.line, accepted, threads, err, tc.accepted, tc.threads)
			}
		})
	}
}

// TestAsioPair checks the asio profile's configurations against the
// model table: the sharedqueue model's first configuration sized by the
// rule with the practised floor, its name alone where there is no row,
// then real asio sized as it is.
func TestAsioPair(t *testing.T) {
	saved := registry.Models
	t.Cleanup(func() { registry.Models = saved })
	others := slices.DeleteFunc(slices.Clone(saved), func(m registry.Model) bool { return m.Name == SharedQueueModel })
	row := registry.Model{Name: SharedQueueModel, Family: registry.FamilyPractised, Sizing: registry.Sizing{Kind: registry.PoolThreads},
		Configs: []registry.Config{{Name: "sharedqueue/x", Args: []string{"--sq-shards", "2"}}}}
	for _, tc := range []struct {
		name   string
		models []registry.Model
		want   []string
	}{
		{name: "in the table", models: append(slices.Clone(others), row),
			want: []string{`sharedqueue/x sharedqueue [--sq-shards 2] "rule" 2`, `asio asio [] "rule" 2`}},
		{name: "not in the table", models: others,
			want: []string{`sharedqueue sharedqueue [] "" 0`, `asio asio [] "rule" 2`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registry.Models = tc.models
			var got []string
			for _, c := range AsioPair() {
				got = append(got, fmt.Sprintf("%s %s %v %q %d", c.Name, c.Model, c.Args, c.Sizing, c.MinPool))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("AsioPair() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAsioSize checks the sizing rule for real asio: an io_context
// thread per server CPU, whatever the workload's work, at least the
// profile's floor.
func TestAsioSize(t *testing.T) {
	c := AsioConfig()
	w := Workload{Workload: DefaultWorkload()}
	w.Block = "300us"
	for _, tc := range []struct{ cpus, want int }{{cpus: 1, want: PractisedFloor}, {cpus: 4, want: 4}} {
		s := c.size(&w, tc.cpus)
		if s.Err != "" || s.Threads != tc.want || s.Pool != tc.want || s.GOMAXPROCS != 0 || !strings.Contains(s.Rule, "io_context thread") {
			t.Errorf("on %d CPUs: %+v; want %d io_context threads, no GOMAXPROCS", tc.cpus, s, tc.want)
		}
	}
}
