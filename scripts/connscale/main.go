// Command connscale measures how each server configuration's costs change
// with the number of connections at one fixed absolute rate: for every
// connection count and configuration it starts a fresh server (pinned to
// -server-cpus), runs "concbench load" against it (pinned to -load-cpus,
// open loop at -rate, the connections opened and primed before the
// warm-up), and reads the server's snapshot at two instants inside the
// load generator's measured window — nothing else is read from the server
// meanwhile, since a probe whose cost grows with connections (listing
// /proc/PID/fd, per-thread sums) would be measured as the server's tail
// latency. It prints, per point, the generator's verdict and latency and
// the server's CPU and context switches per request, RSS, OS threads and
// open connections; then per configuration the medians and the ratio of
// CPU per request at the largest connection count to the smallest.
//
//	make build
//	go run ./scripts/connscale -conns 100,1000,4000,10000 -runs 3 \
//	    'lf=--model leaderfollowers --threads 4 --gomaxprocs 4' \
//	    'tpc=--model threadperconn --threads {threads} --gomaxprocs {procs}' \
//	    'netpoll=--model netpoll'
//
// -idle N holds N more connections open and idle (opened by connscale,
// never used) through every point: to the measured server (-idle-to same),
// or to a second server started with the same flags on the same CPUs
// (-idle-to other). It separates what the number of connections costs
// the machine from what the measured server does with them:
//
//	go run ./scripts/connscale -conns 100 -idle 9900 -idle-to other 'lf=…'
//
// In a configuration's flags {threads} becomes the connection count capped
// at models.MaxThreads, and {procs} the connection count + 1 capped at
// serve's 4096 (thread per connection: a thread and a P per connection,
// as bench gives it). A point the load generator could not run (a server
// at its thread cap refusing connections) is printed with the reason.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
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

// maxGOMAXPROCS is serve's --gomaxprocs limit.
const maxGOMAXPROCS = 4096

type point struct {
	valid          bool
	reasons        []string
	p50, p99, p999 time.Duration
	cpuNs, ctxsw   float64 // per request, over the two snapshots
	rssMiB         float64
	threads, open  int
	failed         string
}

func main() {
	bin := flag.String("bin", "bin/concbench", "the concbench binary")
	connList := flag.String("conns", "100,1000,4000,10000", "connection counts, comma-separated")
	rate := flag.Float64("rate", 5000, "open-loop rate, requests/s, the same for every point")
	cpu := flag.String("cpu", "exp:10us", "CPU work per request (load --cpu)")
	warmup := flag.Duration("warmup", 2*time.Second, "load --warmup")
	duration := flag.Duration("duration", 5*time.Second, "load --duration (the measured window)")
	runs := flag.Int("runs", 3, "repetitions of every point")
	serverCPUs := flag.String("server-cpus", "0", "CPUs the server is pinned to")
	loadCPUs := flag.String("load-cpus", "1", "CPUs the load generator is pinned to")
	out := flag.String("out", "out/connscale", "folder for the load generator's JSON results")
	idle := flag.Int("idle", 0, "connections held open and idle through every point, besides the load's")
	idleTo := flag.String("idle-to", "same", "where the idle connections go: same (the measured server) or other (a second server)")
	flag.Parse()
	if *idleTo != "same" && *idleTo != "other" {
		fatalf("-idle-to %q: want same or other", *idleTo)
	}
	var conns []int
	for _, f := range strings.Split(*connList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatalf("-conns: %q is not a positive count", f)
		}
		conns = append(conns, n)
	}
	if *duration < 2*time.Second {
		fatalf("-duration %v: at least 2s (the snapshots are taken 0.6 s inside each edge)", *duration)
	}
	cfgs, err := serveproc.ParseConfigs(flag.Args())
	if err != nil {
		fatalf("%v", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatalf("%v", err)
	}
	fmt.Printf("open loop at %g req/s, CPU work %s, warm-up %v, window %v; server on CPUs %s, generator on %s",
		*rate, *cpu, *warmup, *duration, *serverCPUs, *loadCPUs)
	if *idle > 0 {
		fmt.Printf("; %d idle connections to the %s server", *idle, map[string]string{"same": "measured", "other": "other"}[*idleTo])
	}
	fmt.Println()
	fmt.Printf("%-10s %6s %3s %-7s %9s %9s %9s %11s %9s %9s %8s %7s\n", "config", "conns", "run", "verdict", "p50", "p99", "p99.9", "CPU µs/req", "ctxsw/req", "RSS MiB", "threads", "open")
	all := map[string]map[int][]point{}
	for r := range *runs {
		for _, n := range conns {
			for _, c := range cfgs {
				sizes := strings.NewReplacer(
					"{threads}", strconv.Itoa(min(n, models.MaxThreads)),
					"{procs}", strconv.Itoa(min(n+1, maxGOMAXPROCS)))
				flags := make([]string, len(c.Flags))
				for i, f := range c.Flags {
					flags[i] = sizes.Replace(f)
				}
				res := filepath.Join(*out, fmt.Sprintf("%s-%d-%d.json", c.Label, n, r))
				p := measure(*bin, *serverCPUs, *loadCPUs, flags, n, *rate, *cpu, *warmup, *duration, res, *idle, *idleTo == "other")
				if all[c.Label] == nil {
					all[c.Label] = map[int][]point{}
				}
				all[c.Label][n] = append(all[c.Label][n], p)
				if p.failed != "" {
					fmt.Printf("%-10s %6d %3d failed: %s\n", c.Label, n, r, p.failed)
					continue
				}
				verdict := "valid"
				if !p.valid {
					verdict = "INVALID " + strings.Join(p.reasons, ",")
				}
				fmt.Printf("%-10s %6d %3d %-7s %9v %9v %9v %11.1f %9.2f %9.0f %8d %7d\n", c.Label, n, r, verdict,
					p.p50.Round(time.Microsecond), p.p99.Round(time.Microsecond), p.p999.Round(time.Microsecond), p.cpuNs/1e3, p.ctxsw, p.rssMiB, p.threads, p.open)
			}
		}
	}
	fmt.Printf("\nmedians over valid runs [min, max]; CPU ratio = CPU µs/req at the largest count with a valid run ÷ at %d\n", conns[0])
	for _, c := range cfgs {
		var first, last float64
		lastN := 0
		for _, n := range conns {
			var cpus, p99s, p999s []float64
			for _, p := range all[c.Label][n] {
				if p.failed == "" && p.valid {
					cpus = append(cpus, p.cpuNs/1e3)
					p99s = append(p99s, float64(p.p99.Microseconds()))
					p999s = append(p999s, float64(p.p999.Microseconds()))
				}
			}
			if len(cpus) == 0 {
				fmt.Printf("%-10s %6d no valid run\n", c.Label, n)
				continue
			}
			m := serveproc.Median(cpus)
			if n == conns[0] {
				first = m
			}
			last, lastN = m, n
			fmt.Printf("%-10s %6d CPU µs/req %.1f [%.1f, %.1f], p99 µs %.0f [%.0f, %.0f], p99.9 µs %.0f [%.0f, %.0f], %d valid\n", c.Label, n,
				m, slices.Min(cpus), slices.Max(cpus), serveproc.Median(p99s), slices.Min(p99s), slices.Max(p99s),
				serveproc.Median(p999s), slices.Min(p999s), slices.Max(p999s), len(cpus))
		}
		if first > 0 && lastN != conns[0] {
			fmt.Printf("%-10s CPU ratio %d ÷ %d connections: %.2f\n", c.Label, lastN, conns[0], last/first)
		}
	}
}

// measure runs one point: a fresh server, the load, two snapshots inside
// the window.
func measure(bin, serverCPUs, loadCPUs string, flags []string, conns int, rate float64, cpu string, warmup, duration time.Duration, res string, idle int, idleElsewhere bool) point {
	srv, err := serveproc.Start(bin, serverCPUs, flags)
	if err != nil {
		return point{failed: err.Error()}
	}
	defer srv.Stop()
	accepted := uint64(conns) // what the server has accepted once the load's connections are open
	if idle > 0 {
		target := srv
		if idleElsewhere {
			if target, err = serveproc.Start(bin, serverCPUs, flags); err != nil {
				return point{failed: "the server for idle connections: " + err.Error()}
			}
			defer target.Stop()
		} else {
			accepted += uint64(idle)
		}
		held, err := holdIdle(target.Addr, idle)
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		if err != nil {
			return point{failed: fmt.Sprintf("idle connection %d of %d: %v", len(held)+1, idle, err)}
		}
	}
	ld := exec.Command(bin, "load", "--addr", srv.Addr, "--cpus", loadCPUs, "--conns", strconv.Itoa(conns),
		"--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--cpu", cpu, "--warmup", warmup.String(),
		"--duration", duration.String(), "--json", res, "--allow-invalid")
	var stderr strings.Builder
	ld.Stderr = &stderr
	os.Remove(res)
	if err := ld.Start(); err != nil {
		return point{failed: err.Error()}
	}
	exited := make(chan error, 1)
	go func() { exited <- ld.Wait() }()
	// The connections are open once the server has accepted them all;
	// priming and the warm-up follow, then the window.
	var snaps []models.Snapshot
	var threads []int
	if _, err := srv.WaitFor(time.Minute, "every connection to be accepted", func(s models.Snapshot) bool {
		return s.Stats.ConnsAccepted >= accepted || len(exited) > 0
	}); err == nil && len(exited) == 0 {
		open := time.Now()
		for _, at := range []time.Duration{warmup + 600*time.Millisecond, warmup + duration - 600*time.Millisecond} {
			time.Sleep(time.Until(open.Add(at)))
			s, err := srv.Snap()
			if err != nil {
				break
			}
			snaps = append(snaps, s)
			threads = append(threads, osThreads(srv.PID()))
		}
	}
	if err := <-exited; err != nil {
		return point{failed: fmt.Sprintf("load: %v: %s", err, serveproc.FirstLine(stderr.String()))}
	}
	b, err := os.ReadFile(res)
	if err != nil {
		return point{failed: err.Error()}
	}
	var r loadgen.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return point{failed: fmt.Sprintf("%s: %v", res, err)}
	}
	start, end := r.StartTime.UnixNano(), r.StartTime.UnixNano()+r.WindowNs
	if len(snaps) != 2 || snaps[0].TimeUnixNs < start || snaps[1].TimeUnixNs > end {
		return point{failed: "the snapshots do not both fall inside the load generator's window (connection set-up slower than the wait for it?)"}
	}
	z := snaps[1]
	costs, err := serveproc.CostsBetween(snaps[0], z)
	if err != nil {
		return point{failed: err.Error()}
	}
	return point{
		valid: r.Valid, reasons: r.Reasons,
		p50: time.Duration(r.Latency.P50Ns), p99: time.Duration(r.Latency.P99Ns), p999: time.Duration(r.Latency.P999Ns),
		cpuNs: costs.CPUNs, ctxsw: costs.Ctxsw,
		rssMiB: float64(z.RSSBytes) / (1 << 20), threads: threads[1],
		open: int(z.Stats.ConnsAccepted - z.Stats.ConnsClosed),
	}
}

// holdIdle opens n connections to addr that send nothing.
func holdIdle(addr string, n int) ([]net.Conn, error) {
	held := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return held, err
		}
		held = append(held, c)
	}
	return held, nil
}

// osThreads is the process's thread count (/proc/PID/status: one small
// file, unlike the per-thread directories).
func osThreads(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "connscale: "+format+"\n", args...)
	os.Exit(1)
}
