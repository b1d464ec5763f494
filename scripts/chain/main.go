// Command chain measures the two-process chain client → front end → back
// end (models/frontend) for each hand-off mode and number of multiplexed
// upstream connections: for every point it starts a fresh back end
// (concbench serve, -backend flags, --protocol binary) and a fresh front
// end (--model frontend --handoff MODE --upstream-conns M), both pinned,
// and drives the front end with "concbench load" pinned to its own CPUs:
//
//  1. open loop at -rate: end-to-end latency (p50, p99, p99.9, from the
//     load generator) and, from two snapshots of the front end inside the
//     generator's measured window, the front end's context switches and
//     CPU time per request and its hand-offs and own responses per
//     request;
//  2. closed loop (-conns connections, one request outstanding each):
//     the chain's capacity, end-to-end requests/s.
//
// The front end runs with one Go P per thread (--gomaxprocs: -conns +
// M + 1), as bench runs the locked-thread models. On a 2-CPU machine both
// servers share CPU 0 and the generator has CPU
// 1 (the defaults): the front end and the back end then compete for one
// CPU, which is part of what is measured — say so when quoting numbers.
//
//	make build
//	go run ./scripts/chain -runs 3
//	go run ./scripts/chain -handoffs bound,queue -upstream 1,2,4,8 -backend '--model leaderfollowers --threads 4'
//
// The front end's "perthread" mode has no multiplexed connections (one
// per client connection): it is measured once, with M shown as "-".
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/models"
	"concbench/scripts/internal/serveproc"
)

// point is one measured configuration.
type point struct {
	failed         string
	valid          bool
	reasons        []string
	p50, p99, p999 time.Duration
	cpuNs, ctxsw   float64 // front end, per request, between the snapshots
	handoffs, own  float64 // front end, per request, between the snapshots
	capacity       float64 // closed loop, requests/s
	capValid       bool
}

type flags struct {
	bin, backend, cpu                  string
	backendCPUs, frontendCPUs, loadCPU string
	rate                               float64
	conns                              int
	warmup, duration                   time.Duration
	out                                string
}

func main() {
	var f flags
	flag.StringVar(&f.bin, "bin", "bin/concbench", "the concbench binary")
	flag.StringVar(&f.backend, "backend", "--model netpoll", "the back end's serve flags (--protocol binary is added)")
	handoffs := flag.String("handoffs", "bound,perthread,queue", "front-end hand-off modes, comma-separated")
	upstream := flag.String("upstream", "1,2,4", "multiplexed upstream connections (bound, queue), comma-separated")
	flag.Float64Var(&f.rate, "rate", 5000, "open-loop rate for the latency and cost measurement, requests/s")
	flag.IntVar(&f.conns, "conns", 64, "client connections (both runs)")
	flag.StringVar(&f.cpu, "cpu", "exp:10us", "CPU work per request, done by the back end (load --cpu)")
	flag.DurationVar(&f.warmup, "warmup", time.Second, "load --warmup")
	flag.DurationVar(&f.duration, "duration", 5*time.Second, "load --duration of each run (the measured window)")
	runs := flag.Int("runs", 1, "repetitions of every point")
	flag.StringVar(&f.backendCPUs, "backend-cpus", "0", "CPUs the back end is pinned to")
	flag.StringVar(&f.frontendCPUs, "frontend-cpus", "0", "CPUs the front end is pinned to")
	flag.StringVar(&f.loadCPU, "load-cpus", "1", "CPUs the load generator is pinned to")
	flag.StringVar(&f.out, "out", "out/chain", "folder for the load generator's JSON results")
	flag.Parse()
	if flag.NArg() > 0 {
		fatalf("unexpected argument %q (flags only)", flag.Arg(0))
	}
	if f.duration < 2*time.Second {
		fatalf("-duration %v: at least 2s (the snapshots are taken 0.6 s inside each edge)", f.duration)
	}
	var ms []int
	for _, s := range strings.Split(*upstream, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || m < 1 {
			fatalf("-upstream: %q is not a positive count", s)
		}
		ms = append(ms, m)
	}
	type config struct {
		handoff string
		m       int // 0: not applicable (perthread)
	}
	var cfgs []config
	for _, h := range strings.Split(*handoffs, ",") {
		switch h = strings.TrimSpace(h); h {
		case "perthread":
			cfgs = append(cfgs, config{handoff: h})
		case "bound", "queue":
			for _, m := range ms {
				cfgs = append(cfgs, config{handoff: h, m: m})
			}
		default:
			fatalf("-handoffs: unknown mode %q (accepted: bound, perthread, queue)", h)
		}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		fatalf("%v", err)
	}
	fmt.Printf("chain: load (CPUs %s) → front end (CPUs %s) → back end %q (CPUs %s); %d connections, CPU work %s, warm-up %v, window %v\n",
		f.loadCPU, f.frontendCPUs, f.backend, f.backendCPUs, f.conns, f.cpu, f.warmup, f.duration)
	fmt.Printf("latency and front-end costs open loop at %g req/s; capacity closed loop, one request outstanding per connection\n", f.rate)
	fmt.Printf("%-9s %3s %3s %-7s %9s %9s %9s %11s %9s %9s %9s %11s\n",
		"handoff", "M", "run", "verdict", "p50", "p99", "p99.9", "CPU µs/req", "ctxsw/req", "handoff/r", "own/req", "cap req/s")
	results := map[config][]point{}
	starred := false
	for r := range *runs {
		for _, c := range cfgs {
			m := "-"
			if c.m > 0 {
				m = strconv.Itoa(c.m)
			}
			p := measure(&f, c.handoff, c.m, filepath.Join(f.out, fmt.Sprintf("%s-%s-%d", c.handoff, m, r)))
			results[c] = append(results[c], p)
			if p.failed != "" {
				fmt.Printf("%-9s %3s %3d failed: %s\n", c.handoff, m, r, p.failed)
				continue
			}
			verdict := "valid"
			if !p.valid {
				verdict = "INVALID " + strings.Join(p.reasons, ",")
			}
			capacity := fmt.Sprintf("%.0f", p.capacity)
			if !p.capValid {
				capacity += "*"
				starred = true
			}
			fmt.Printf("%-9s %3s %3d %-7s %9v %9v %9v %11.1f %9.2f %9.2f %9.2f %11s\n", c.handoff, m, r, verdict,
				p.p50.Round(time.Microsecond), p.p99.Round(time.Microsecond), p.p999.Round(time.Microsecond),
				p.cpuNs/1e3, p.ctxsw, p.handoffs, p.own, capacity)
		}
	}
	if *runs > 1 {
		fmt.Println("\nmedians over runs with a valid open-loop run (capacity: over all runs)")
		for _, c := range cfgs {
			var ctx, cpu, p99, capa []float64
			for _, p := range results[c] {
				if p.failed != "" {
					continue
				}
				capa = append(capa, p.capacity)
				if p.valid {
					ctx = append(ctx, p.ctxsw)
					cpu = append(cpu, p.cpuNs/1e3)
					p99 = append(p99, float64(p.p99.Microseconds()))
				}
			}
			m := "-"
			if c.m > 0 {
				m = strconv.Itoa(c.m)
			}
			fmt.Printf("%-9s %3s  valid %d/%d  ctxsw/req %.2f  CPU µs/req %.1f  p99 %.0f µs  capacity %.0f req/s\n",
				c.handoff, m, len(ctx), *runs, serveproc.Median(ctx), serveproc.Median(cpu), serveproc.Median(p99), serveproc.Median(capa))
		}
	}
	if starred {
		fmt.Println("\n* capacity run marked invalid by the load generator (see its JSON; a closed loop at capacity often is: over-capacity)")
	}
}

// measure runs one point with fresh servers.
func measure(f *flags, handoff string, m int, prefix string) point {
	back, err := serveproc.Start(f.bin, f.backendCPUs, append(strings.Fields(f.backend), "--protocol", "binary"))
	if err != nil {
		return point{failed: "back end: " + err.Error()}
	}
	defer back.Stop()
	// A P per locked thread (client connection threads, readers, the
	// acceptor), as bench gives the locked-thread models: see
	// docs/design.md, "GOMAXPROCS".
	procs := f.conns + max(m, 1) + 1
	front, err := serveproc.Start(f.bin, f.frontendCPUs, []string{"--model", "frontend", "--backend", back.Addr,
		"--handoff", handoff, "--upstream-conns", strconv.Itoa(max(m, 1)), "--gomaxprocs", strconv.Itoa(min(procs, 4096))})
	if err != nil {
		return point{failed: "front end: " + err.Error()}
	}
	defer front.Stop()

	// 1. Open loop: latency, and the front end's costs between two
	// snapshots inside the measured window.
	var p point
	var snaps []models.Snapshot
	res, err := runLoad(f, front.Addr, prefix+"-open.json", []string{"--rate", strconv.FormatFloat(f.rate, 'f', -1, 64)}, func() {
		// The warm-up starts once the connections are open (and primed).
		if _, err := front.WaitFor(time.Minute, "every connection to be accepted", func(s models.Snapshot) bool {
			return s.Stats.ConnsAccepted >= uint64(f.conns)
		}); err != nil {
			return
		}
		open := time.Now()
		for _, at := range []time.Duration{f.warmup + 600*time.Millisecond, f.warmup + f.duration - 600*time.Millisecond} {
			time.Sleep(time.Until(open.Add(at)))
			s, err := front.Snap()
			if err != nil {
				return
			}
			snaps = append(snaps, s)
		}
	})
	if err != nil {
		return point{failed: err.Error()}
	}
	start, end := res.StartTime.UnixNano(), res.StartTime.UnixNano()+res.WindowNs
	if len(snaps) != 2 || snaps[0].TimeUnixNs < start || snaps[1].TimeUnixNs > end {
		return point{failed: "the snapshots do not both fall inside the load generator's window"}
	}
	a, z := snaps[0], snaps[1]
	costs, err := serveproc.CostsBetween(a, z)
	if err != nil {
		return point{failed: "front end: " + err.Error()}
	}
	n := float64(costs.Requests)
	p.valid, p.reasons = res.Valid, res.Reasons
	p.p50, p.p99, p.p999 = time.Duration(res.Latency.P50Ns), time.Duration(res.Latency.P99Ns), time.Duration(res.Latency.P999Ns)
	p.cpuNs, p.ctxsw = costs.CPUNs, costs.Ctxsw
	p.handoffs = float64(z.Stats.Counters["handoffs"]-a.Stats.Counters["handoffs"]) / n
	p.own = float64(z.Stats.Counters["own_responses"]-a.Stats.Counters["own_responses"]) / n

	// 2. Closed loop: capacity.
	capRes, err := runLoad(f, front.Addr, prefix+"-closed.json", []string{"--closed"}, nil)
	if err != nil {
		return point{failed: "closed loop: " + err.Error()}
	}
	p.capacity, p.capValid = capRes.AchievedRatePerS, capRes.Valid
	return p
}

// runLoad runs concbench load against addr with the common flags and
// extra, calls during (if set) while it runs, and returns its result.
func runLoad(f *flags, addr, res string, extra []string, during func()) (*loadgen.Result, error) {
	args := append([]string{"load", "--addr", addr, "--cpus", f.loadCPU, "--conns", strconv.Itoa(f.conns),
		"--cpu", f.cpu, "--warmup", f.warmup.String(), "--duration", f.duration.String(), "--json", res, "--allow-invalid"}, extra...)
	ld := exec.Command(f.bin, args...)
	var stderr strings.Builder
	ld.Stderr = &stderr
	os.Remove(res)
	if err := ld.Start(); err != nil {
		return nil, err
	}
	if during != nil {
		during()
	}
	if err := ld.Wait(); err != nil {
		return nil, fmt.Errorf("load: %v: %s", err, serveproc.FirstLine(stderr.String()))
	}
	return serveproc.ReadResult(res)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chain: "+format+"\n", args...)
	os.Exit(1)
}
