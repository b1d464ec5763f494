package harness

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"concbench/internal/cpuset"
	"concbench/models"
	"concbench/models/registry"
	"concbench/results"
	"concbench/results/resultstest"
)

// TestNginxConf checks the generated nginx.conf of each accept mode
// against its golden file (go test -run TestNginxConf -update rewrites
// them).
func TestNginxConf(t *testing.T) {
	for _, mode := range NginxModes {
		t.Run(mode, func(t *testing.T) {
			c := &nginxConf{
				Name: "nginx/" + mode + "/zero", Workers: 4, CPUs: cpuset.Set{0, 1, 2, 3}, Mode: mode,
				Listen: "127.0.0.1:40001", Status: "127.0.0.1:40002", Conns: 64,
				Dir: "/runs/bench-x/nginx", Base: "nginx_" + mode + "_zero",
			}
			resultstest.GoldenWrite(t, "nginx-"+mode+".conf", func(w io.Writer) error { return writeNginxConf(w, c) })
		})
	}
}

// TestNginxAffinity checks worker_cpu_affinity's mask: CPU 0 is the
// rightmost digit, and no CPUs means no directive.
func TestNginxAffinity(t *testing.T) {
	for _, tc := range []struct {
		cpus cpuset.Set
		want string
	}{
		{cpuset.Set{0}, "1"},
		{cpuset.Set{0, 1, 2, 3}, "1111"},
		{cpuset.Set{2, 3}, "1100"},
		{cpuset.Set{1, 4}, "10010"},
		{nil, ""},
	} {
		c := &nginxConf{CPUs: tc.cpus}
		if got := c.Affinity(); got != tc.want {
			t.Errorf("affinity of %v = %q, want %q", tc.cpus, got, tc.want)
		}
	}
	var buf bytes.Buffer
	if err := writeNginxConf(&buf, &nginxConf{Workers: 1, Mode: "mutex"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "worker_cpu_affinity") {
		t.Errorf("an unpinned nginx.conf has worker_cpu_affinity:\n%s", buf.String())
	}
}

// TestNginxMode checks the accept mode's flag in both forms, and that
// anything else is refused.
func TestNginxMode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		err  string
	}{
		{args: []string{"--accept", "mutex"}, want: "mutex"},
		{args: []string{"--accept=reuseport"}, want: "reuseport"},
		{args: []string{"--accept", "exclusive"}, want: "exclusive"},
		{args: nil, err: `accept mode "" unknown`},
		{args: []string{"--accept", "roundrobin"}, err: `accept mode "roundrobin" unknown`},
		{args: []string{"--threads", "4"}, err: `argument "--threads" unknown`},
	} {
		got, err := nginxMode(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("nginxMode(%q) = %q, %v; want an error containing %q", tc.args, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("nginxMode(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

// TestParseNginxStatus checks the stub_status page's parser on nginx's
// own page and on pages it must refuse.
func TestParseNginxStatus(t *testing.T) {
	page := "Active connections: 65 \nserver accepts handled requests\n 19 19 11372 \nReading: 0 Writing: 1 Waiting: 64 \n"
	st, err := parseNginxStatus(strings.NewReader(page))
	if err != nil || st != (nginxStatus{Active: 65, Accepts: 19, Handled: 19, Requests: 11372}) {
		t.Errorf("parseNginxStatus = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "<html>not found</html>", "Active connections: x\nserver accepts handled requests\n 1 1 1\n", "Active connections: 1\nserver accepts handled requests\n 1 1\n"} {
		if st, err := parseNginxStatus(strings.NewReader(bad)); err == nil {
			t.Errorf("parseNginxStatus(%q) = %+v, want an error", bad, st)
		}
	}
}

// TestEstablished checks the selection of a /proc/net/tcp table: the
// established sockets on the port, not the listening one, not another
// port's, not one closing.
func TestEstablished(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9C41 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000    65534        0 1002 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:D2F0 0100007F:9C41 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:9C41 0100007F:D2F2 08 00000000:00000000 00:00000000 00000000    65534        0 1004 1 0000000000000000 20 4 30 10 -1
   4: 0100007F:9C41 0100007F:D2F4 01 00000000:00000000 00:00000000 00000000    65534        0 1005 1 0000000000000000 20 4 30 10 -1
`
	got := established([]byte(table), 0x9C41)
	if strings.Join(got, ",") != "1002,1005" {
		t.Errorf("established = %v, want [1002 1005]", got)
	}
}

// TestSplitCPU checks that nginx's CPU time is schedstat's total split in
// the clock ticks' ratio, and the ticks alone without schedstat.
func TestSplitCPU(t *testing.T) {
	for _, tc := range []struct {
		run        int64
		schedstat  bool
		u, s       int64
		user, syst int64
	}{
		{run: 1_000_000, schedstat: true, u: 3, s: 1, user: 750_000, syst: 250_000},
		{run: 1_000_000, schedstat: true, user: 1_000_000},
		{run: 1_000_000, schedstat: false, u: 3, s: 1, user: 30_000_000, syst: 10_000_000},
	} {
		u, s := splitCPU(tc.run, tc.schedstat, tc.u, tc.s)
		if u != tc.user || s != tc.syst {
			t.Errorf("splitCPU(%d, %t, %d, %d) = %d, %d; want %d, %d", tc.run, tc.schedstat, tc.u, tc.s, u, s, tc.user, tc.syst)
		}
	}
}

// TestAcceptedSince checks that a thread's connections count from the
// reading before the load connected, not from the window's start (when
// every connection is open already), matched by thread id.
func TestAcceptedSince(t *testing.T) {
	begin := []models.ThreadStats{{TID: 1, Role: "worker", Accepted: 10}, {TID: 2, Role: "worker", Accepted: 5}}
	start := []models.ThreadStats{{TID: 1, Role: "worker", Accepted: 40, Requests: 100}, {TID: 2, Role: "worker", Accepted: 39, Requests: 50}}
	end := []models.ThreadStats{{TID: 2, Role: "worker", Accepted: 39, Requests: 350}, {TID: 1, Role: "worker", Accepted: 40, Requests: 400}, {TID: 3, Role: "worker", Accepted: 2}}
	w := &window{
		begin:  &models.Snapshot{Stats: models.Stats{PerThread: begin}},
		before: &models.Snapshot{Stats: models.Stats{PerThread: start}},
		after:  &models.Snapshot{Stats: models.Stats{PerThread: end}},
	}
	c := w.cost()
	want := map[int][2]uint64{2: {34, 300}, 1: {30, 300}} // accepted, requests
	if len(c.PerThread) != len(want) {
		t.Fatalf("per thread %+v, want threads 1 and 2 (3 started in the window)", c.PerThread)
	}
	for _, th := range c.PerThread {
		if got := [2]uint64{th.Accepted, th.Requests}; got != want[th.TID] {
			t.Errorf("thread %d: accepted, requests = %v, want %v", th.TID, got, want[th.TID])
		}
	}
	b, ok := results.Balance(c.PerThread)
	if !ok || b.Conns != 64 || b.ConnsMaxMean != 34.0/32 {
		t.Errorf("Balance = %+v, %t; want 64 connections, max/mean 34/32", b, ok)
	}
}

// TestNginxPairs checks the nginx profile's pairs against the model
// table: the model's own configuration for a mode where the table has
// one, its name and flag sized by the rule where the row lacks it, and
// the model's defaults where there is no row (a binary without the
// model reports it unavailable).
func TestNginxPairs(t *testing.T) {
	saved := registry.Models
	t.Cleanup(func() { registry.Models = saved })
	others := slices.DeleteFunc(slices.Clone(saved), func(m registry.Model) bool { return m.Name == AcceptMutexModel })
	row := registry.Model{Name: AcceptMutexModel, Family: registry.FamilyPractised, Sizing: registry.Sizing{Kind: registry.PoolThreads},
		Configs: []registry.Config{{Name: "acceptmutex"}, {Name: "acceptmutex/lock", Args: []string{"--accept=mutex"}}}}
	for _, tc := range []struct {
		name   string
		models []registry.Model
		want   []string
	}{
		{
			name:   "in the table",
			models: append(slices.Clone(others), row),
			want: []string{"acceptmutex/lock [--accept=mutex] rule", "nginx/mutex [--accept mutex] rule",
				"acceptmutex/exclusive [--accept exclusive] rule", "nginx/exclusive [--accept exclusive] rule",
				"acceptmutex/reuseport [--accept reuseport] rule", "nginx/reuseport [--accept reuseport] rule"},
		},
		{
			name:   "not in the table",
			models: others,
			want: []string{"acceptmutex/mutex [--accept mutex] ", "nginx/mutex [--accept mutex] rule",
				"acceptmutex/exclusive [--accept exclusive] ", "nginx/exclusive [--accept exclusive] rule",
				"acceptmutex/reuseport [--accept reuseport] ", "nginx/reuseport [--accept reuseport] rule"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registry.Models = tc.models
			var got []string
			for _, c := range NginxPairs() {
				got = append(got, fmt.Sprintf("%s %v %s", c.Name, c.Args, c.Sizing))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("NginxPairs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			e, _ := Profile("nginx")
			e = e.WithDefaults()
			if err := e.Validate(); err != nil {
				t.Errorf("the nginx profile: %v", err)
			}
		})
	}
}
