package report

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"concbench/models"
	"concbench/plots"
	"concbench/plots/plotstest"
	"concbench/results"
	"concbench/results/resultstest"
)

// orderValues are the medians a made-up Leader/Followers order gets: the
// four threads' events, context switches and CPU (µs) per request, p99
// (µs), the % of promotions with a choice that promoted the
// longest-waiting follower, (os and os-vacant) the followers that waited
// again in % of the promotions and (os-vacant) the vacant roles a
// rejoining thread took, in % of the events.
type orderValues struct {
	events        [4]uint64
	ctxsw, cpu, p float64
	longest       float64
	rewaits       float64
	rejoins       float64
}

// ordersRun builds a one-workload run of Leader/Followers configurations,
// one per order in want, with 5 repetitions at one equal-load rate, each
// value its median times a small spread per repetition.
func ordersRun(t *testing.T, want map[string]orderValues) (*results.Run, []results.Point) {
	t.Helper()
	_, r, pts := synthetic(t)
	tmpl := plotstest.ValidOpenPoint(t, pts)
	run := *r
	run.Configs = nil
	var cfgs []string
	spread := []float64{0.97, 0.99, 1, 1.01, 1.03}
	var out []results.Point
	for _, o := range []string{orderLIFO, orderFIFO, orderPriority, orderOS, orderOSVacant} {
		v, ok := want[o]
		if !ok {
			continue
		}
		cfg := results.ModelConfig{Name: plots.ModelLF + "/" + o, Model: plots.ModelLF, Args: []string{"--promotion", o}, Threads: 4}
		run.Configs = append(run.Configs, cfg)
		cfgs = append(cfgs, cfg.Name)
		for rep, f := range spread {
			p := *tmpl
			load := *tmpl.Load
			p.Load, p.Config, p.Kind, p.Repetition = &load, cfg, results.KindRate, rep
			p.Fraction, p.OfferedRatePerS = 0, 1000
			load.Latency.P99Ns = int64(math.Round(v.p * 1e3 * f))
			p.Server.CPUNsPerRequest = v.cpu * 1e3 * f
			p.Server.CtxswPerRequest = v.ctxsw * f
			p.Server.PerThread = nil
			p.Server.Counters = map[string]uint64{"promotions_with_choice": 1000,
				"promoted_longest_waiting": uint64(min(1000, math.Round(v.longest*10*f)))}
			for i, ev := range v.events {
				// The busiest thread's events vary by repetition, so that
				// its share has a spread; every event but the first's
				// woke a follower.
				if i == 0 {
					ev = uint64(math.Round(float64(ev) * f))
				}
				p.Server.PerThread = append(p.Server.PerThread, models.ThreadStats{Role: "pool", Events: ev, Requests: ev, Promotions: ev * 9 / 10})
			}
			if o == orderOS || o == orderOSVacant { // the model counts re-waits in these orders only
				var pr, ev uint64
				for _, t := range p.Server.PerThread {
					pr += t.Promotions
					ev += t.Events
				}
				p.Server.Counters["os_rewaits"] = uint64(math.Round(v.rewaits / 100 * float64(pr)))
				if o == orderOSVacant {
					p.Server.Counters["vacancy_rejoins"] = uint64(math.Round(v.rejoins / 100 * float64(ev)))
				}
			}
			out = append(out, p)
		}
	}
	run.Experiment = map[string]any{"configs": plotstest.NameList(cfgs...), "workloads": plotstest.NameList("cpu")}
	return &run, out
}

// TestOrdersSection: the orders section's verdicts on made-up runs, os
// equal to fifo and os clearly different, and no section with one order.
func TestOrdersSection(t *testing.T) {
	fifo := orderValues{events: [4]uint64{1000, 1000, 1000, 1000}, ctxsw: 1.6, cpu: 33, p: 3000, longest: 100}
	lifo := orderValues{events: [4]uint64{3000, 500, 300, 200}, ctxsw: 1.2, cpu: 30, p: 2800, longest: 0}
	osDiff := orderValues{events: [4]uint64{2000, 1000, 500, 500}, ctxsw: 3.2, cpu: 40, p: 3000, longest: 60, rewaits: 5}
	for _, tc := range []struct {
		name   string
		orders map[string]orderValues
		golden string   // compared with the section's Markdown; "" for none
		want   []string // in the section's Markdown
		none   bool     // no section
	}{
		{name: "os equals fifo", orders: map[string]orderValues{orderLIFO: lifo, orderFIFO: fifo, orderOS: fifo},
			golden: "orders_same.md",
			want:   []string{"**os vs fifo: no significant difference**", "The measurements agree: no metric tells os from fifo.", "**lifo differs from fifo** in busiest thread's share", "The result agrees: lifo's busiest thread"}},
		{name: "os differs", orders: map[string]orderValues{orderFIFO: fifo, orderOS: osDiff},
			golden: "orders_differ.md",
			want:   []string{"**os differs from fifo** in busiest thread's share", "ctxsw/req 2", "A difference here is therefore", "| p50 | p99 | os re-waits (% of promotions) |", "| 5 (range 4.99–5.01) |"}},
		{name: "os-vacant concentrates", orders: map[string]orderValues{orderFIFO: fifo, orderOSVacant: {events: [4]uint64{3000, 500, 300, 200}, ctxsw: 1.2, cpu: 30, p: 2800, longest: 100, rewaits: 20, rejoins: 30}},
			want: []string{"**os-vacant differs from fifo** in busiest thread's share", "the rejoining threads' doing", "| os re-waits (% of promotions) | vacancy rejoins (% of events) |", "| 30 (range ", "os-vacant promoted the longest-waiting follower in 100%"}},
		{name: "one order", orders: map[string]orderValues{orderFIFO: fifo}, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, pts := ordersRun(t, tc.orders)
			s := analyze(r, pts, Options{}).orders()
			if tc.none {
				if s != nil {
					t.Fatalf("a section for one order: %+v", s)
				}
				return
			}
			if s == nil {
				t.Fatal("no section")
			}
			md := s.Markdown()
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("section lacks %q:\n%s", w, md)
				}
			}
			if tc.golden != "" {
				resultstest.GoldenFile(t, filepath.Join("golden", tc.golden), []byte(md))
			}
		})
	}
}

// TestPromotionOrder: the order is read from the configuration's
// arguments, lifo (the model's default) without one.
func TestPromotionOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"flag and value", []string{"--promotion", "os", "--gomaxprocs", "4"}, orderOS},
		{"flag=value", []string{"--promotion=fifo"}, orderFIFO},
		{"default", []string{"--gomaxprocs", "4"}, orderLIFO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := promotionOrder(tc.args); got != tc.want {
				t.Errorf("promotionOrder(%q) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}
