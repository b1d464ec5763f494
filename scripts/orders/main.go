// Command orders measures what Leader/Followers' promotion orders do: the
// four orders (lifo, fifo, priority with nice 0,5,10,15, os) under two
// workloads, at the same absolute open-loop rate for every order of a
// workload (-load of fifo's closed-loop capacity, measured first), each
// point on a fresh server pinned to -server-cpus with one "concbench load"
// process on -load-cpus.
//
//	make build
//	go run ./scripts/orders -runs 5
//
// With the defaults (-runs 5, -warmup 1s, -duration 3s) it measures 2
// capacities and 40 points of about 4.5 s each (server start, warm-up,
// window): about 3 minutes and 10 seconds estimated; measured 2 min 52 s
// ("go run ./scripts/orders -runs 5" in a fresh clone at commit 95e8634
// on the otherwise idle 2-vCPU VM), every point valid. Medians [min, max]
// of that run: os promoted the longest-waiting follower in 99.8% [99.6,
// 99.9] of its promotions with a choice under cpu and 100% [99.9, 100]
// under bimodal (fifo 100%, lifo 0% by construction), and its p50, p99,
// busiest share and context switches fell inside fifo's ranges; lifo's
// busiest thread took 25.7% [25.5, 26.4] of the events (uniform 25%:
// promotions per event 96%, so followers rarely accumulate); priority's
// took 48.7%, with a lower p99 than fifo's under cpu (1832 [1498, 2925]
// µs against 3115 [2597, 3471]) and a higher one under bimodal (6291
// [5235, 6746] against 5087 [4563, 6083]), as expected below.
//
// It prints a row per point, then per workload and order the median and
// range over the runs whose verdict is valid of p50, p99, the busiest
// thread's share of the handle-set events, promotions per event, the share
// of promotions with a choice that promoted the longest-waiting follower
// (the model's promoted_longest_waiting over promotions_with_choice) and
// context switches per request. The server's counters (per-thread events,
// promotions, rusage) are read from snapshots taken just before and just
// after the load process, so they include its warm-up.
//
// The workloads, "name=load flags", default to
//
//	cpu=--cpu exp:10us
//	bimodal=--cpu bimodal:0.99:5us:1ms
//
// What to expect, and why:
//
//   - os ≈ fifo under both: the os order's followers wait on one futex and
//     Linux wakes the waiters of one futex in FIFO order among threads
//     that are not real-time (kernel/futex/core.c, __futex_queue), so the
//     kernel chooses the longest-waiting follower, as fifo does; only the
//     grant protocol differs.
//   - lifo concentrates the events on few threads only when followers
//     accumulate (idle pool); when nearly every event wakes the only
//     follower (promotions per event near 100%), it spreads them like fifo.
//   - priority: its nice-0 thread leads whenever it is a follower, so it
//     takes the largest share under both workloads. Its nice values change
//     latency only when the pool's threads compete for the CPU: under cpu
//     (10 µs requests) a thread rarely has a runnable sibling, so priority
//     should be close to fifo; under bimodal a 1 ms request keeps a thread
//     runnable while the others lead and process, and CFS weights a nice-15
//     thread 36 against a nice-0 one's 1024 (about 1/28), so a long request
//     caught by a low-priority thread is stretched by the others' work: a
//     higher p99 than fifo's where the server has fewer CPUs than threads
//     (the default: one CPU for 4 threads).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/models"
	"concbench/scripts/internal/serveproc"
)

// orders are the configurations measured, in the model's documentation's
// order; GOMAXPROCS is one P per thread, as bench gives them.
var orders = []serveproc.Config{
	{Label: "lifo", Flags: strings.Fields("--model leaderfollowers --threads 4 --promotion lifo --gomaxprocs 4")},
	{Label: "fifo", Flags: strings.Fields("--model leaderfollowers --threads 4 --promotion fifo --gomaxprocs 4")},
	{Label: "priority", Flags: strings.Fields("--model leaderfollowers --threads 4 --promotion priority --nice 0,5,10,15 --gomaxprocs 4")},
	{Label: "os", Flags: strings.Fields("--model leaderfollowers --threads 4 --promotion os --gomaxprocs 4")},
}

var defaultWorkloads = []string{
	"cpu=--cpu exp:10us",
	"bimodal=--cpu bimodal:0.99:5us:1ms",
}

type opts struct {
	bin, serverCPUs, loadCPUs, out string
	conns                          int
	warmup, duration               time.Duration
}

// point is one measured point: the load's verdict and latency, and the
// server's counters over the load run.
type point struct {
	valid            bool
	checks           []loadgen.Check // the failed checks of an invalid verdict
	p50, p99         float64         // µs
	busiest, promote float64         // %
	longest          float64         // % of promotions with a choice that promoted the longest-waiting follower; NaN: none
	rewaits          uint64          // os order: followers back from the futex wait with no grant
	ctxsw            float64         // per request
	failed           string
}

func main() {
	var o opts
	flag.StringVar(&o.bin, "bin", "bin/concbench", "the concbench binary")
	flag.StringVar(&o.serverCPUs, "server-cpus", "0", "CPUs the server is pinned to")
	flag.StringVar(&o.loadCPUs, "load-cpus", "1", "CPUs the load generator is pinned to")
	flag.IntVar(&o.conns, "conns", 64, "connections")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "load --warmup")
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "load --duration (the measured window)")
	load := flag.Float64("load", 0.7, "the open-loop rate as a fraction of fifo's capacity under each workload")
	runs := flag.Int("runs", 5, "repetitions of every point")
	flag.StringVar(&o.out, "out", "out/orders", "folder for every point's load result")
	flag.Parse()
	if *load <= 0 || *runs < 1 {
		fatalf("-load must be positive and -runs at least 1")
	}
	wargs := flag.Args()
	if len(wargs) == 0 {
		wargs = defaultWorkloads
	}
	workloads, err := serveproc.ParseConfigs(wargs)
	if err != nil {
		fatalf("workloads: %v", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fatalf("%v", err)
	}
	rates := map[string]float64{}
	for _, w := range workloads {
		c, err := capacity(o, orders[1].Flags, w)
		if err != nil {
			fatalf("capacity of fifo under %s: %v", w.Label, err)
		}
		rates[w.Label] = *load * c
		fmt.Printf("%s: fifo's capacity %.0f req/s (closed loop, %d connections); every order at %.0f req/s\n", w.Label, c, o.conns, rates[w.Label])
	}
	fmt.Printf("server on CPUs %s, generator on %s; warm-up %v, window %v; counters include the warm-up\n", o.serverCPUs, o.loadCPUs, o.warmup, o.duration)
	fmt.Printf("%-8s %-9s %3s %9s %9s %8s %8s %8s %7s %7s %s\n", "workload", "order", "run", "p50 µs", "p99 µs", "busiest%", "promo%", "longest%", "rewaits", "ctxsw", "verdict")
	all := map[string]map[string][]point{}
	for r := range *runs {
		for _, w := range workloads {
			for _, c := range orders {
				p := measure(o, c.Flags, w, rates[w.Label], filepath.Join(o.out, fmt.Sprintf("%s-%s-%d.json", w.Label, c.Label, r)))
				if all[w.Label] == nil {
					all[w.Label] = map[string][]point{}
				}
				all[w.Label][c.Label] = append(all[w.Label][c.Label], p)
				if p.failed != "" {
					fmt.Printf("%-8s %-9s %3d failed: %s\n", w.Label, c.Label, r, p.failed)
					continue
				}
				v := "valid"
				if !p.valid {
					codes := make([]string, len(p.checks))
					for i, c := range p.checks {
						codes[i] = string(c)
					}
					v = "INVALID " + strings.Join(codes, ",") + " (left out of the summary)"
				}
				fmt.Printf("%-8s %-9s %3d %9.0f %9.0f %8.1f %8.1f %8.1f %7d %7.2f %s\n", w.Label, c.Label, r, p.p50, p.p99, p.busiest, p.promote, p.longest, p.rewaits, p.ctxsw, v)
			}
		}
	}
	fmt.Printf("\nmedian [min, max] over the valid runs:\n%-8s %-9s %3s %22s %22s %22s %22s %22s %22s\n", "workload", "order", "n", "p50 µs", "p99 µs", "busiest thread %", "promotions/event %", "longest-waiting %", "ctxsw/req")
	for _, w := range workloads {
		for _, c := range orders {
			var cols [6][]float64
			for _, p := range all[w.Label][c.Label] {
				if p.failed == "" && p.valid {
					for i, v := range []float64{p.p50, p.p99, p.busiest, p.promote, p.longest, p.ctxsw} {
						if !math.IsNaN(v) {
							cols[i] = append(cols[i], v)
						}
					}
				}
			}
			fmt.Printf("%-8s %-9s %3d", w.Label, c.Label, len(cols[0]))
			for i, xs := range cols {
				if len(xs) == 0 {
					fmt.Printf(" %22s", "no valid run")
					continue
				}
				f := "%.1f [%.1f, %.1f]" // shares
				switch i {
				case 0, 1:
					f = "%.0f [%.0f, %.0f]" // µs
				case 5:
					f = "%.2f [%.2f, %.2f]" // ctxsw/req
				}
				fmt.Printf(" %22s", fmt.Sprintf(f, serveproc.Median(xs), slices.Min(xs), slices.Max(xs)))
			}
			fmt.Println()
		}
	}
	fmt.Println("\nuniform share with 4 threads: 25%. longest-waiting: the share of promotions made with two or more followers waiting that promoted the one waiting longest (fifo 100% and lifo 0% by construction; os: the kernel's wake order); rewaits: os followers back from the futex wait with no grant, which wait again at the queue's tail.")
	fmt.Println("For the tests (Welch on logs, Holm) run the orders under bench and read report.md's \"Promotion orders\".")
}

// capacity runs a closed loop under workload w against a fresh server
// with flags and returns its achieved rate.
func capacity(o opts, flags []string, w serveproc.Config) (float64, error) {
	srv, err := serveproc.Start(o.bin, o.serverCPUs, flags)
	if err != nil {
		return 0, err
	}
	defer srv.Stop()
	res := filepath.Join(o.out, w.Label+"-capacity.json")
	argv := append([]string{"load", "--addr", srv.Addr, "--cpus", o.loadCPUs, "--closed", "--conns", strconv.Itoa(o.conns),
		"--warmup", o.warmup.String(), "--duration", o.duration.String(), "--json", res, "--allow-invalid"}, w.Flags...)
	if out, err := exec.Command(o.bin, argv...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("load: %v: %s", err, serveproc.FirstLine(string(out)))
	}
	r, err := serveproc.ReadResult(res)
	if err != nil {
		return 0, err
	}
	if r.AchievedRatePerS <= 0 {
		return 0, fmt.Errorf("no request answered")
	}
	return r.AchievedRatePerS, nil
}

// measure runs one point: a fresh server, the open-loop load at rate, and
// the server's counters between snapshots around it.
func measure(o opts, flags []string, w serveproc.Config, rate float64, res string) point {
	srv, err := serveproc.Start(o.bin, o.serverCPUs, flags)
	if err != nil {
		return point{failed: err.Error()}
	}
	defer srv.Stop()
	before, err := srv.Snap()
	if err != nil {
		return point{failed: "snapshot: " + err.Error()}
	}
	argv := append([]string{"load", "--addr", srv.Addr, "--cpus", o.loadCPUs, "--conns", strconv.Itoa(o.conns),
		"--rate", strconv.FormatFloat(rate, 'f', 0, 64), "--warmup", o.warmup.String(), "--duration", o.duration.String(),
		"--json", res, "--allow-invalid"}, w.Flags...)
	if out, err := exec.Command(o.bin, argv...).CombinedOutput(); err != nil {
		return point{failed: fmt.Sprintf("load: %v: %s", err, serveproc.FirstLine(string(out)))}
	}
	after, err := srv.Snap()
	if err != nil {
		return point{failed: "snapshot: " + err.Error()}
	}
	r, err := serveproc.ReadResult(res)
	if err != nil {
		return point{failed: err.Error()}
	}
	p := point{valid: r.Valid, checks: r.Checks, p50: float64(r.Latency.P50Ns) / 1e3, p99: float64(r.Latency.P99Ns) / 1e3}
	costs, err := serveproc.CostsBetween(before, after)
	if err != nil {
		return point{failed: err.Error()}
	}
	p.ctxsw = costs.Ctxsw
	p.busiest, p.promote, err = shares(before.Stats.PerThread, after.Stats.PerThread)
	if err != nil {
		return point{failed: err.Error()}
	}
	delta := func(k string) uint64 { return after.Stats.Counters[k] - before.Stats.Counters[k] }
	p.longest = math.NaN()
	if c := delta("promotions_with_choice"); c > 0 {
		p.longest = 100 * float64(delta("promoted_longest_waiting")) / float64(c)
	}
	p.rewaits = delta("os_rewaits")
	return p
}

// shares returns the busiest thread's share of the events and the
// promotions per event (both in %) between two snapshots' per-thread
// counters.
func shares(a, z []models.ThreadStats) (busiest, promote float64, err error) {
	if len(a) != len(z) || len(z) == 0 {
		return 0, 0, fmt.Errorf("per-thread counters: %d threads before, %d after", len(a), len(z))
	}
	var total, most, prom uint64
	for i := range z {
		ev := z[i].Events - a[i].Events
		total += ev
		most = max(most, ev)
		prom += z[i].Promotions - a[i].Promotions
	}
	if total == 0 {
		return 0, 0, fmt.Errorf("no handle-set event between the snapshots")
	}
	return 100 * float64(most) / float64(total), 100 * float64(prom) / float64(total), nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "orders: "+format+"\n", args...)
	os.Exit(1)
}
