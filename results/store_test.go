package results_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concbench/results"
	"concbench/results/resultstest"
)

// TestReadRunUnreadablePoint: a corrupt point file, and one of another
// schema, leave the rest of the run readable; both are listed with their
// reasons in Run.Unreadable, and neither is among the points.
func TestReadRunUnreadablePoint(t *testing.T) {
	dir := t.TempDir()
	if _, err := resultstest.WriteRun(dir); err != nil {
		t.Fatal(err)
	}
	_, all := resultstest.ReadRun(t, dir)
	files, _ := filepath.Glob(filepath.Join(dir, results.PointsDir, "*.json"))
	if len(files) < 2 || len(files) != len(all) {
		t.Fatalf("%d point files for %d points", len(files), len(all))
	}
	truncated, otherSchema := files[0], files[1]
	b, err := os.ReadFile(truncated)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(otherSchema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["schema"] = results.SchemaVersion + 1
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherSchema, b, 0o644); err != nil {
		t.Fatal(err)
	}

	r, pts, err := results.ReadRun(dir)
	if err != nil {
		t.Fatalf("ReadRun with two unreadable points: %v", err)
	}
	if len(pts) != len(all)-2 {
		t.Errorf("%d points read, want %d", len(pts), len(all)-2)
	}
	if len(r.Unreadable) != 2 {
		t.Fatalf("Unreadable = %v, want the two files", r.Unreadable)
	}
	for _, u := range r.Unreadable {
		if u.File != truncated && u.File != otherSchema {
			t.Errorf("listed %s, which is readable", u.File)
		}
		if u.Reason == "" || !strings.Contains(u.String(), filepath.Base(u.File)) {
			t.Errorf("entry %q names no file or reason", u.String())
		}
	}
}
