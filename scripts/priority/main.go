// Command priority measures whether priority protects high-priority
// requests: a stream of high-priority requests at a fixed rate, on
// connections of their own, under a growing flood of low-priority ones, for
// each server configuration. Per point it starts a fresh server (pinned to
// -server-cpus) and runs two "concbench load" processes at once on
// -load-cpus (both sleep-polling, so they share the CPU): the high stream
// (-high-rate, -high-conns, priority -high-prio; its generator at nice
// -high-nice, so that the flood's generator on the same CPU does not delay
// its sends) and the flood (a fraction of -capacity, -low-conns, priority
// 0). Each connection carries one priority from its first (priming)
// request on, as Leader/Followers lanes, which map connections, need. The low loads go up to and beyond
// saturation; the question is what the high stream's p99 does meanwhile.
//
//	make build
//	go run ./scripts/priority -runs 3
//
// runs the default configurations: Leader/Followers without priority, with
// lanes (SCHED_FIFO where permitted, as the server reports) and with lanes
// on nice values, Half-Sync/Half-Reactive with and without its priority
// queue. Others are given as "label=serve flags", e.g.
//
//	go run ./scripts/priority 'lf=--model leaderfollowers --threads 4 --gomaxprocs 5' \
//	    'lanes=--model leaderfollowers --lanes 0:2,128:2 --gomaxprocs 5'
//
// -capacity 0 (the default) measures the capacity first: closed loop, the
// flood's connections, against the first configuration; the low loads are
// -low fractions of it, the same absolute rates for every configuration.
//
// It prints a row per point (the high stream's latency and verdict, the
// flood's achieved rate and verdict, the server's lane counters), then the
// high stream's median p99 per configuration and load over the runs whose
// high stream is valid, and writes the figure — high-priority p99 against
// low-priority load, one colour per configuration, invalid points as grey
// crosses — as PNG and SVG with its data as CSV under -out, beside every
// point's JSON results. Each configuration's Variant (how the server gave
// its lanes priority: SCHED_FIFO or nice, and the RT throttling budget) is
// printed once.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/loadgen"
	"concbench/plots"
	"concbench/scripts/internal/serveproc"
)

// defaultConfigs are measured when none is given: each model without
// priority beside its priority configuration(s). GOMAXPROCS is one P per
// model thread plus one, as bench gives locked-thread models.
var defaultConfigs = []string{
	"lf=--model leaderfollowers --threads 4 --gomaxprocs 5",
	"lf-lanes=--model leaderfollowers --lanes 0:2,128:2 --gomaxprocs 5",
	"lf-lanes-nice=--model leaderfollowers --lanes 0:2,128:2 --lane-sched nice --gomaxprocs 5",
	"hshr=--model halfsynchalfreactive --threads 4 --gomaxprocs 6",
	"hshr-prio=--model halfsynchalfreactive --threads 4 --hshr-priority --gomaxprocs 6",
}

// stream is one load generator's part of a point.
type stream struct {
	valid    bool
	checks   []loadgen.Check
	p50, p99 time.Duration
	p999     time.Duration
	achieved float64
}

type point struct {
	high, low stream
	variant   string
	counters  map[string]uint64
	failed    string
}

type opts struct {
	bin, serverCPUs, loadCPUs, cpu, out string
	highRate                            float64
	highConns, highPrio, lowConns       int
	highNice                            int
	warmup, duration                    time.Duration
}

func main() {
	var o opts
	flag.StringVar(&o.bin, "bin", "bin/concbench", "the concbench binary")
	flag.StringVar(&o.serverCPUs, "server-cpus", "0", "CPUs the server is pinned to")
	flag.StringVar(&o.loadCPUs, "load-cpus", "1", "CPUs both load generators are pinned to")
	flag.StringVar(&o.cpu, "cpu", "exp:10us", "CPU work per request, both streams (load --cpu)")
	flag.Float64Var(&o.highRate, "high-rate", 200, "the high-priority stream's rate, requests/s (the same at every point)")
	flag.IntVar(&o.highConns, "high-conns", 4, "the high-priority stream's connections")
	flag.IntVar(&o.highPrio, "high-prio", 200, "the high-priority stream's priority, 1..255 (the flood's is 0)")
	flag.IntVar(&o.lowConns, "low-conns", 64, "the flood's connections")
	flag.IntVar(&o.highNice, "high-nice", -10, "nice value the high stream's generator runs at (via nice(1); negative needs root or CAP_SYS_NICE; 0: as the flood's)")
	lowList := flag.String("low", "0.3,0.7,1.0,1.3", "the flood's rates as fractions of -capacity, comma-separated")
	capacity := flag.Float64("capacity", 0, "the capacity the fractions refer to, requests/s; 0: measure it (closed loop, first configuration)")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "load --warmup")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "load --duration (the measured window)")
	runs := flag.Int("runs", 3, "repetitions of every point")
	flag.StringVar(&o.out, "out", "out/priority", "folder for the results and the figure")
	flag.Parse()
	if o.highPrio < 1 || o.highPrio > 255 {
		fatalf("-high-prio %d: want 1..255", o.highPrio)
	}
	var fracs []float64
	for f := range strings.SplitSeq(*lowList, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 {
			fatalf("-low: %q is not a positive fraction", f)
		}
		fracs = append(fracs, v)
	}
	if len(fracs) < 3 {
		fmt.Fprintln(os.Stderr, "priority: fewer than three low-priority loads: the figure shows little")
	}
	args := flag.Args()
	if len(args) == 0 {
		args = defaultConfigs
	}
	cfgs, err := serveproc.ParseConfigs(args)
	if err != nil {
		fatalf("%v", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fatalf("%v", err)
	}
	if *capacity == 0 {
		c, err := measureCapacity(o, cfgs[0].Flags)
		if err != nil {
			fatalf("capacity of %s: %v", cfgs[0].Label, err)
		}
		*capacity = c
		fmt.Printf("capacity of %s (closed loop, %d connections): %.0f req/s\n", cfgs[0].Label, o.lowConns, c)
	}
	lows := make([]float64, len(fracs))
	for i, f := range fracs {
		lows[i] = f * *capacity
	}
	fmt.Printf("high stream: %g req/s, priority %d, %d connections, generator at nice %d; flood: priority 0, %d connections; CPU work %s; warm-up %v, window %v; server on CPUs %s, generators on %s\n",
		o.highRate, o.highPrio, o.highConns, o.highNice, o.lowConns, o.cpu, o.warmup, o.duration, o.serverCPUs, o.loadCPUs)
	fmt.Printf("%-14s %8s %3s %9s %9s %9s %-22s %9s %-22s %s\n", "config", "low/s", "run", "high p50", "high p99", "p99.9", "high verdict", "low got/s", "low verdict", "lanes")
	all := map[string]map[int][]point{}
	variants := map[string]string{}
	for r := range *runs {
		for li, low := range lows {
			for _, c := range cfgs {
				res := filepath.Join(o.out, fmt.Sprintf("%s-%d-%d", c.Label, li, r))
				p := measure(o, c.Flags, low, res)
				if all[c.Label] == nil {
					all[c.Label] = map[int][]point{}
				}
				all[c.Label][li] = append(all[c.Label][li], p)
				if p.failed != "" {
					fmt.Printf("%-14s %8.0f %3d failed: %s\n", c.Label, low, r, p.failed)
					continue
				}
				if p.variant != "" {
					variants[c.Label] = p.variant
				}
				fmt.Printf("%-14s %8.0f %3d %9v %9v %9v %-22s %9.0f %-22s %s\n", c.Label, low, r,
					p.high.p50.Round(time.Microsecond), p.high.p99.Round(time.Microsecond), p.high.p999.Round(time.Microsecond),
					verdict(p.high), p.low.achieved, verdict(p.low), laneCounts(p.counters))
			}
		}
	}
	fmt.Println("\nconfigurations as the servers reported them:")
	for _, c := range cfgs {
		fmt.Printf("  %-14s %s\n", c.Label, variants[c.Label])
	}
	fmt.Printf("\nhigh-priority p99, median over runs whose high stream is valid [min, max]:\n%-14s", "config")
	for _, low := range lows {
		fmt.Printf(" %26s", fmt.Sprintf("low %.0f/s", low))
	}
	fmt.Println()
	var series []plots.Series
	for _, c := range cfgs {
		s := plots.Series{Label: c.Label}
		fmt.Printf("%-14s", c.Label)
		for li, low := range lows {
			var p99s []float64
			for _, p := range all[c.Label][li] {
				switch {
				case p.failed != "":
				case p.high.valid:
					p99s = append(p99s, float64(p.high.p99)/1e3)
				default:
					s.InvalidX = append(s.InvalidX, low)
					s.InvalidY = append(s.InvalidY, float64(p.high.p99)/1e3)
				}
			}
			if len(p99s) == 0 {
				fmt.Printf(" %26s", "no valid run")
				continue
			}
			m := serveproc.Median(p99s)
			s.X, s.Y = append(s.X, low), append(s.Y, m)
			fmt.Printf(" %26s", fmt.Sprintf("%.0fµs [%.0f, %.0f]", m, slices.Min(p99s), slices.Max(p99s)))
		}
		fmt.Println()
		series = append(series, s)
	}
	fig := plots.LineFigure("priority",
		fmt.Sprintf("High-priority p99 (%g req/s, priority %d) under a low-priority flood", o.highRate, o.highPrio),
		"low-priority offered load (req/s)", "high-priority p99 (µs)", series)
	for _, format := range []string{"png", "svg"} {
		if err := writeFile(filepath.Join(o.out, "priority."+format), func(f *os.File) error { return fig.Render(f, format) }); err != nil {
			fatalf("%v", err)
		}
	}
	if err := writeFile(filepath.Join(o.out, "priority.csv"), func(f *os.File) error { return fig.WriteCSV(f) }); err != nil {
		fatalf("%v", err)
	}
	for _, n := range fig.Notes {
		fmt.Println("note:", n)
	}
	fmt.Printf("figure: %s (.png, .svg, .csv)\n", filepath.Join(o.out, "priority"))
}

// measureCapacity runs a closed loop with the flood's connections against
// a fresh server with flags and returns its achieved rate.
func measureCapacity(o opts, flags []string) (float64, error) {
	srv, err := serveproc.Start(o.bin, o.serverCPUs, flags)
	if err != nil {
		return 0, err
	}
	defer srv.Stop()
	res := filepath.Join(o.out, "capacity.json")
	ld := exec.Command(o.bin, "load", "--addr", srv.Addr, "--cpus", o.loadCPUs, "--closed", "--conns", strconv.Itoa(o.lowConns),
		"--cpu", o.cpu, "--warmup", o.warmup.String(), "--duration", o.duration.String(), "--json", res, "--allow-invalid")
	if out, err := ld.CombinedOutput(); err != nil {
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

// measure runs one point: a fresh server, both streams at once, and a
// snapshot of the server's counters after them.
func measure(o opts, flags []string, low float64, res string) point {
	srv, err := serveproc.Start(o.bin, o.serverCPUs, flags)
	if err != nil {
		return point{failed: err.Error()}
	}
	defer srv.Stop()
	type run struct {
		err    error
		stderr string
	}
	start := func(name string, conns int, rate float64, prio int) (string, chan run) {
		path := res + "-" + name + ".json"
		os.Remove(path)
		argv := []string{o.bin, "load", "--addr", srv.Addr, "--cpus", o.loadCPUs, "--poll", "sleep",
			"--conns", strconv.Itoa(conns), "--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--prio", strconv.Itoa(prio),
			"--cpu", o.cpu, "--warmup", o.warmup.String(), "--duration", o.duration.String(), "--json", path, "--allow-invalid"}
		if name == "high" && o.highNice != 0 {
			// nice(1) sets it before exec, so every thread of the
			// generator inherits it.
			argv = append([]string{"nice", "-n", strconv.Itoa(o.highNice)}, argv...)
		}
		ld := exec.Command(argv[0], argv[1:]...)
		var stderr strings.Builder
		ld.Stderr = &stderr
		done := make(chan run, 1)
		if err := ld.Start(); err != nil {
			done <- run{err: err}
			return path, done
		}
		go func() { err := ld.Wait(); done <- run{err: err, stderr: stderr.String()} }()
		return path, done
	}
	hiPath, hiDone := start("high", o.highConns, o.highRate, o.highPrio)
	loPath, loDone := start("low", o.lowConns, low, 0)
	var p point
	for _, s := range []struct {
		name string
		path string
		done chan run
		dst  *stream
	}{{"high", hiPath, hiDone, &p.high}, {"low", loPath, loDone, &p.low}} {
		rn := <-s.done
		if strings.Contains(rn.stderr, "cannot set niceness") {
			// nice(1) runs the command anyway: the stream was measured,
			// but not as configured.
			p.failed = fmt.Sprintf("%s stream: -high-nice %d refused: %s", s.name, o.highNice, serveproc.FirstLine(rn.stderr))
			continue
		}
		if rn.err != nil {
			p.failed = fmt.Sprintf("%s stream: %v: %s", s.name, rn.err, serveproc.FirstLine(rn.stderr))
			continue
		}
		r, err := serveproc.ReadResult(s.path)
		if err != nil {
			p.failed = err.Error()
			continue
		}
		*s.dst = stream{valid: r.Valid, checks: r.Checks, p50: time.Duration(r.Latency.P50Ns), p99: time.Duration(r.Latency.P99Ns),
			p999: time.Duration(r.Latency.P999Ns), achieved: r.AchievedRatePerS}
	}
	if sn, err := srv.Snap(); err == nil {
		p.variant = sn.Stats.Model + " " + sn.Stats.Variant
		p.counters = sn.Stats.Counters
	}
	return p
}

// verdict is "valid" or INVALID with the failed checks' codes.
func verdict(s stream) string {
	if s.valid {
		return "valid"
	}
	codes := make([]string, len(s.checks))
	for i, c := range s.checks {
		codes[i] = string(c)
	}
	return "INVALID " + strings.Join(codes, ",")
}

// laneCounts lists a laned server's requests per lane (Leader/Followers
// lanes' counters), or "" for other servers.
func laneCounts(c map[string]uint64) string {
	var parts []string
	for i := 0; ; i++ {
		n, ok := c["lane"+strconv.Itoa(i)+"_requests"]
		if !ok {
			break
		}
		parts = append(parts, fmt.Sprintf("lane%d %d", i, n))
	}
	return strings.Join(parts, ", ")
}

func writeFile(path string, fn func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "priority: "+format+"\n", args...)
	os.Exit(1)
}
