package agree

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concbench/programs/aarate"
	"concbench/results"
	"concbench/stats"
)

// TestAgree: three runs' records, the third with the cell's
// answer reversed: the summary counts each run's decided cells by kind
// and names the claims the reversed run excludes, and --out leaves the
// records and the summary.
func TestAgree(t *testing.T) {
	arm := func(name string, vs ...float64) stats.Arm {
		a := stats.Arm{Name: name, Values: map[int]float64{}}
		for i, v := range vs {
			a.Values[i] = v
		}
		return a
	}
	dir := t.TempDir()
	write := func(run string, a, b stats.Arm) string {
		rec := &aarate.Record{Run: run, Cells: []results.CellRecord{{Workload: "cpu", Column: "CPU per request", Margin: 0.10, Arms: []stats.Arm{a, b}}}}
		path := filepath.Join(dir, run+".json")
		if err := aarate.WriteRecord(path, rec); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fast, slow := []float64{20, 20.4, 19.8, 20.2, 20.1}, []float64{40, 41, 39, 40.5, 40.2}
	r1 := write("bench-1", arm("a", fast...), arm("b", slow...))
	r2 := write("bench-2", arm("a", fast...), arm("b", slow...))
	r3 := write("bench-3", arm("a", slow...), arm("b", fast...))
	out := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	if err := Run(t.Context(), Config{Runs: []string{r1, r2, r3}, Out: out}, &stdout); err != nil {
		t.Fatal(err)
	}
	s := stdout.String()
	// Each run decides a winner; bench-3's is the reverse of the others':
	// each of the three excludes the claims of the runs that disagree with it.
	for _, want := range []string{"# Agreement of 3 runs", "| bench-1 | 1 | 1 | 1 | 0 | 0 | no twin |", "Median cells decided: 1.",
		"checked against the other runs: 6; **4 contradicted**", "bench-1 decided b behind a; bench-3 measured a's advantage 0.50×"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	for _, f := range []string{"summary.md", "records/bench-1.json", "records/bench-3.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("--out: %v", err)
		}
	}
	if err := Run(t.Context(), Config{Runs: []string{r1}}, io.Discard); err == nil {
		t.Error("one run: want an error")
	}
}
