package gaterate

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGaterateRecount recounts the committed campaigns under
// results/gaterate (--runs 0: nothing is measured) from copies of their
// runs, and gets each summary.md exactly as committed.
func TestGaterateRecount(t *testing.T) {
	for _, kind := range []string{"nochange", "nochange-2026-11-28", "cpu", "handoff", "stall"} {
		t.Run(kind, func(t *testing.T) {
			src := filepath.Join("..", "..", "results", "gaterate", kind)
			runs, _ := filepath.Glob(filepath.Join(src, "run-*.json"))
			if len(runs) == 0 {
				t.Fatalf("no runs in %s", src)
			}
			dir := t.TempDir()
			for _, r := range runs {
				b, err := os.ReadFile(r)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(r)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := Config{Runs: 0, Out: dir, Base: "HEAD"}
			if !strings.HasPrefix(kind, "nochange") {
				c.HeadTags = "concbench_regress_" + kind
			}
			var stdout bytes.Buffer
			if err := Run(context.Background(), c, &stdout, io.Discard); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(src, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || stdout.String() != string(want) {
				t.Errorf("recounted summary differs from %s:\n%s", filepath.Join(src, "summary.md"), got)
			}
		})
	}
}
