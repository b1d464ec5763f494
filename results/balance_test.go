package results

import (
	"math"
	"testing"

	"concbench/models"
)

// TestBalance checks the thread balance on synthetic per-thread stats:
// even threads, one hot thread, a role that serves nothing beside the
// pool, connections not reported, and no per-thread stats at all.
func TestBalance(t *testing.T) {
	pool := func(reqs ...uint64) []models.ThreadStats {
		var ts []models.ThreadStats
		for i, r := range reqs {
			ts = append(ts, models.ThreadStats{TID: 100 + i, Role: "worker", Requests: r, Accepted: r / 100})
		}
		return ts
	}
	for _, tc := range []struct {
		name    string
		threads []models.ThreadStats
		want    ThreadBalance
		ok      bool
	}{
		{
			name:    "even",
			threads: pool(1000, 1000, 1000, 1000),
			want:    ThreadBalance{Role: "worker", Threads: 4, Conns: 40, ConnsMaxMean: 1, Requests: 4000, RequestsMaxMean: 1, BusiestShare: 25},
			ok:      true,
		},
		{
			name:    "one hot thread",
			threads: pool(3000, 0, 0, 0),
			want:    ThreadBalance{Role: "worker", Threads: 4, Conns: 30, ConnsMaxMean: 4, Requests: 3000, RequestsMaxMean: 4, BusiestShare: 100},
			ok:      true,
		},
		{
			name:    "skewed",
			threads: pool(2000, 1000, 1000),
			want:    ThreadBalance{Role: "worker", Threads: 3, Conns: 40, ConnsMaxMean: 1.5, Requests: 4000, RequestsMaxMean: 1.5, BusiestShare: 50},
			ok:      true,
		},
		{
			name: "a reactor beside the workers is not counted",
			threads: append([]models.ThreadStats{{TID: 1, Role: "reactor", Events: 9000}},
				pool(1000, 1000)...),
			want: ThreadBalance{Role: "worker", Threads: 2, Conns: 20, ConnsMaxMean: 1, Requests: 2000, RequestsMaxMean: 1, BusiestShare: 50},
			ok:   true,
		},
		{
			name: "no connections reported",
			threads: []models.ThreadStats{
				{TID: 1, Role: "pool", Requests: 300}, {TID: 2, Role: "pool", Requests: 100},
			},
			want: ThreadBalance{Role: "pool", Threads: 2, Requests: 400, RequestsMaxMean: 1.5, BusiestShare: 75},
			ok:   true,
		},
		{
			name: "connections but no requests",
			threads: []models.ThreadStats{
				{TID: 1, Role: "worker", Accepted: 64}, {TID: 2, Role: "worker"},
			},
			want: ThreadBalance{Role: "worker", Threads: 2, Conns: 64, ConnsMaxMean: 2},
			ok:   true,
		},
		{name: "no per-thread stats", threads: nil, ok: false},
		{name: "threads that did nothing", threads: []models.ThreadStats{{TID: 1, Role: "pool"}}, ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Balance(tc.threads)
			if ok != tc.ok {
				t.Fatalf("Balance ok = %t, want %t (%+v)", ok, tc.ok, got)
			}
			if !balanceEqual(got, tc.want) {
				t.Errorf("Balance = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func balanceEqual(a, b ThreadBalance) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Role == b.Role && a.Threads == b.Threads && a.Conns == b.Conns && a.Requests == b.Requests &&
		near(a.ConnsMaxMean, b.ConnsMaxMean) && near(a.RequestsMaxMean, b.RequestsMaxMean) && near(a.BusiestShare, b.BusiestShare)
}

// TestBalanceMetrics checks that the balance columns are absent, not 0,
// where a point has no balance or no connections per thread, and that
// a foreign server has no allocations per request.
func TestBalanceMetrics(t *testing.T) {
	p := Point{Status: StatusOK, Server: ServerCost{Requests: 100}}
	for _, m := range []Metric{BalanceThreads, ConnsMaxMean, RequestsMaxMean, BusiestShare} {
		if v, ok := m.Value(&p); ok {
			t.Errorf("%s = %g without a balance, want absent", m.Name, v)
		}
	}
	p.Server.Balance = &ThreadBalance{Role: "pool", Threads: 2, Requests: 100, RequestsMaxMean: 1.2, BusiestShare: 60}
	if v, ok := ConnsMaxMean.Value(&p); ok {
		t.Errorf("%s = %g without connections per thread, want absent", ConnsMaxMean.Name, v)
	}
	if v, ok := RequestsMaxMean.Value(&p); !ok || v != 1.2 {
		t.Errorf("%s = %g, %t; want 1.2", RequestsMaxMean.Name, v, ok)
	}
	if _, ok := AllocsPerReq.Value(&p); !ok {
		t.Errorf("%s absent for a concbench server", AllocsPerReq.Name)
	}
	p.Server.Foreign = "nginx/1.22.1"
	if v, ok := AllocsPerReq.Value(&p); ok {
		t.Errorf("%s = %g for a foreign server, want absent", AllocsPerReq.Name, v)
	}
}
