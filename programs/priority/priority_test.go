package priority

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"concbench/internal/concbenchtest"
	"concbench/internal/testenv"
	"concbench/loadgen"
	"concbench/programs/serverconf"
)

func TestMain(m *testing.M) { os.Exit(concbenchtest.Main(m)) }

// TestLaneCounts lists a laned server's requests per lane, in lane order,
// and nothing for a server without lanes.
func TestLaneCounts(t *testing.T) {
	if got := laneCounts(map[string]uint64{"lane1_requests": 7, "lane0_requests": 3, "requests": 10}); got != "lane0 3, lane1 7" {
		t.Errorf("laneCounts = %q", got)
	}
	if got := laneCounts(map[string]uint64{"requests": 10}); got != "" {
		t.Errorf("laneCounts without lanes = %q", got)
	}
}

// TestPriorityRun measures one short point of two configurations end to
// end (the capacity given, so not measured): the table, the medians and
// the figure's files.
func TestPriorityRun(t *testing.T) {
	testenv.EndToEnd(t)
	out := t.TempDir()
	c := Default()
	c.ServerBinary, c.Out, c.Capacity, c.Lows = concbenchtest.Binary(t), out, 2000, []float64{0.5}
	c.Reps, c.Warmup, c.Duration, c.HighNice, c.HighRate, c.LowConns = 1, 100*time.Millisecond, 500*time.Millisecond, 0, 100, 4
	var err error
	if c.Configs, err = serverconf.Parse([]string{"lf=--model leaderfollowers --threads 2", "lanes=--model leaderfollowers --lanes 0:1,128:1 --lane-sched nice"}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = Run(context.Background(), c, &stdout, &stderr)
	if err != nil {
		t.Fatalf("priority: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"high stream: 100 req/s, priority 200", "lanes=0:1,128:1", "lane0 ", "high-priority p99, median", "figure: " + filepath.Join(out, "priority")} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "failed:") {
		t.Errorf("a point failed:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "fewer than three low-priority loads") {
		t.Errorf("no warning for one load on stderr: %q", stderr.String())
	}
	for _, name := range []string{"priority.png", "priority.svg", "priority.csv", "lf-0-0-high.json", "lanes-0-0-low.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestLoad: each generator is configured as the "concbench load --cpus"
// child it replaces was: load's defaults, the workers placed on the load
// CPUs as load --cpus placed them, the stream's priority and polling.
func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cpus     string
		conns    int
		workers  int
		pinnedTo []int
	}{
		{name: "one CPU", cpus: "1", conns: 64, workers: 1},
		{name: "unpinned", cpus: "", conns: 4, workers: 1},
		{name: "three CPUs", cpus: "1-3", conns: 64, workers: 2, pinnedTo: []int{2, 3}},
		{name: "fewer connections than CPUs", cpus: "1-3", conns: 1, workers: 1, pinnedTo: []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.LoadCPUs = tc.cpus
			lc, err := c.load("127.0.0.1:1", tc.conns, 200, 100, loadgen.PollSleep)
			if err != nil {
				t.Fatal(err)
			}
			if lc.Workers != tc.workers || !slices.Equal(lc.WorkerCPUs, tc.pinnedTo) {
				t.Errorf("workers %d on %v, want %d on %v", lc.Workers, lc.WorkerCPUs, tc.workers, tc.pinnedTo)
			}
			if lc.Conns != tc.conns || lc.Priority != loadgen.Fixed(200) || lc.Poll != loadgen.PollSleep || lc.Closed || lc.Rate != 100 ||
				lc.Warmup != c.Warmup || lc.Duration != c.Duration || lc.Verify != loadgen.VerifyFull || lc.Seed != 1 {
				t.Errorf("config %+v", lc)
			}
		})
	}
}
