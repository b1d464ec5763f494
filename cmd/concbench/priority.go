package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"concbench/internal/cli"
	"concbench/loadgen"
	"concbench/plots"
	"concbench/results"
)

const priorityUsage = `usage: concbench priority [flags] [label='serve flags' ...]

Measures whether priority protects high-priority requests: a stream of
high-priority requests at a fixed rate (--high-rate, --high-conns,
priority --high-prio), on connections of its own, under a growing flood of
low-priority ones (priority 0, --low-conns), for each server
configuration. Per point it starts a fresh server pinned to --server-cpus
and runs two "concbench load" processes at once on --load-cpus, both
sleep-polling so that they share the CPU: the high stream, its generator
at nice --high-nice so that the flood's generator on the same CPU does
not delay its sends, and the flood at a fraction (--low) of --capacity.
Each connection carries one priority from its first (priming) request on,
as Leader/Followers lanes, which map connections, need. The floods go up
to and beyond saturation; the question is what the high stream's p99
does meanwhile.

Without configurations it measures Leader/Followers without priority,
with lanes (SCHED_FIFO where permitted, as the server reports) and with
lanes on nice values, and Half-Sync/Half-Reactive with and without its
priority queue. Others are given as label='serve flags', e.g.

  concbench priority 'lf=--model leaderfollowers --threads 4 --gomaxprocs 5' \
      'lanes=--model leaderfollowers --lanes 0:2,128:2 --gomaxprocs 5'

--capacity 0 (the default) measures the capacity first: closed loop, the
flood's connections, against the first configuration; the floods are
--low fractions of it, the same absolute rates for every configuration.

It prints a row per point (the high stream's latency and verdict, the
flood's achieved rate and verdict, the server's requests per lane), each
configuration's variant as the server reported it (how its lanes got
priority: SCHED_FIFO or nice, and the RT throttling budget), then the
high stream's median p99 per configuration and flood over the runs whose
high stream is valid; and it writes the figure — high-priority p99
against low-priority load, invalid points as grey crosses — as
priority.png and priority.svg with its data as priority.csv under --out,
beside every point's load results (JSON). A negative --high-nice needs
root or CAP_SYS_NICE: a point whose nice value was refused fails, saying
so (--high-nice 0 runs both generators alike).

Flags:
`

// defaultPriorityConfigs are measured when none is given: each model
// without priority beside its priority configuration(s). GOMAXPROCS is one
// P per model thread plus one, as bench gives locked-thread models.
var defaultPriorityConfigs = []string{
	"lf=--model leaderfollowers --threads 4 --gomaxprocs 5",
	"lf-lanes=--model leaderfollowers --lanes 0:2,128:2 --gomaxprocs 5",
	"lf-lanes-nice=--model leaderfollowers --lanes 0:2,128:2 --lane-sched nice --gomaxprocs 5",
	"hshr=--model halfsynchalfreactive --threads 4 --gomaxprocs 6",
	"hshr-prio=--model halfsynchalfreactive --threads 4 --hshr-priority --gomaxprocs 6",
}

// priorityFlags are the priority command's settings.
type priorityFlags struct {
	bin, serverCPUs, loadCPUs, cpu, out string
	highRate, capacity                  float64
	highConns, highPrio, lowConns       int
	highNice, runs                      int
	warmup, duration                    time.Duration
	lows                                []float64 // fractions of capacity
	cfgs                                []serveConfig
}

// priorityStream is one load generator's part of a point.
type priorityStream struct {
	valid          bool
	checks         []loadgen.Check
	p50, p99, p999 time.Duration
	achieved       float64
}

// priorityPoint is one measured point: both streams, and the server's
// variant and counters after them.
type priorityPoint struct {
	high, low priorityStream
	variant   string
	counters  map[string]uint64
	failed    string
}

func runPriority(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	f, err := parsePriorityFlags(args, stdout)
	if err != nil {
		return err
	}
	if len(f.lows) < 3 {
		fmt.Fprintln(stderr, "priority: fewer than three low-priority loads: the figure shows little")
	}
	return f.measure(ctx, stdout)
}

// parsePriorityFlags reads and checks the command line.
func parsePriorityFlags(args []string, stdout io.Writer) (*priorityFlags, error) {
	fs := flag.NewFlagSet("priority", flag.ContinueOnError)
	f := &priorityFlags{}
	var lows string
	fs.StringVar(&f.bin, "binary", "", "the concbench executable that serves and generates the load; default: this one")
	fs.StringVar(&f.serverCPUs, "server-cpus", "0", "CPUs the server is pinned to")
	fs.StringVar(&f.loadCPUs, "load-cpus", "1", "CPUs both load generators are pinned to")
	fs.StringVar(&f.cpu, "cpu", "exp:10us", "CPU work per request, both streams (load --cpu)")
	fs.Float64Var(&f.highRate, "high-rate", 200, "the high-priority stream's rate, requests/s (the same at every point)")
	fs.IntVar(&f.highConns, "high-conns", 4, "the high-priority stream's connections")
	fs.IntVar(&f.highPrio, "high-prio", 200, "the high-priority stream's priority, 1..255 (the flood's is 0)")
	fs.IntVar(&f.lowConns, "low-conns", 64, "the flood's connections")
	fs.IntVar(&f.highNice, "high-nice", -10, "nice value of the high stream's generator (via nice(1); negative needs root or CAP_SYS_NICE; 0: as the flood's)")
	fs.StringVar(&lows, "low", "0.3,0.7,1.0,1.3", "the flood's rates as fractions of --capacity, comma-separated")
	fs.Float64Var(&f.capacity, "capacity", 0, "the capacity the fractions refer to, requests/s; 0: measure it (closed loop, first configuration)")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "load --warmup")
	fs.DurationVar(&f.duration, "duration", 5*time.Second, "load --duration (the measured window)")
	fs.IntVar(&f.runs, "runs", 3, "repetitions of every point")
	fs.StringVar(&f.out, "out", "out/priority", "folder for the results and the figure")
	if err := cli.Parse(fs, args, stdout, priorityUsage); err != nil {
		return nil, err
	}
	switch {
	case f.highPrio < 1 || f.highPrio > 255:
		return nil, fmt.Errorf("priority: --high-prio %d: want 1..255", f.highPrio)
	case !(f.highRate > 0):
		return nil, fmt.Errorf("priority: --high-rate %g: want a positive rate", f.highRate)
	case f.highConns < 1 || f.lowConns < 1:
		return nil, fmt.Errorf("priority: --high-conns %d, --low-conns %d: want 1 or more each", f.highConns, f.lowConns)
	case f.runs < 1:
		return nil, fmt.Errorf("priority: --runs %d: want 1 or more", f.runs)
	case f.capacity < 0:
		return nil, fmt.Errorf("priority: --capacity %g: want 0 (measure it) or a positive rate", f.capacity)
	case f.highNice < -20 || f.highNice > 19:
		return nil, fmt.Errorf("priority: --high-nice %d: want -20..19", f.highNice)
	}
	for part := range strings.SplitSeq(lows, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("priority: --low: %q is not a positive fraction", part)
		}
		f.lows = append(f.lows, v)
	}
	cfgArgs := fs.Args()
	if len(cfgArgs) == 0 {
		cfgArgs = defaultPriorityConfigs
	}
	var err error
	if f.cfgs, err = parseServeConfigs(cfgArgs); err != nil {
		return nil, fmt.Errorf("priority: %w", err)
	}
	if f.bin, err = executable(f.bin); err != nil {
		return nil, fmt.Errorf("priority: %w", err)
	}
	return f, nil
}

// measure runs every point and writes the table and the figure.
func (f *priorityFlags) measure(ctx context.Context, stdout io.Writer) error {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("priority: %w", err)
	}
	if f.capacity == 0 {
		c, err := f.measureCapacity(ctx, f.cfgs[0].flags)
		if err != nil {
			return fmt.Errorf("priority: capacity of %s: %w", f.cfgs[0].label, err)
		}
		f.capacity = c
		fmt.Fprintf(stdout, "capacity of %s (closed loop, %d connections): %.0f req/s\n", f.cfgs[0].label, f.lowConns, c)
	}
	lows := make([]float64, len(f.lows))
	for i, fr := range f.lows {
		lows[i] = fr * f.capacity
	}
	fmt.Fprintf(stdout, "high stream: %g req/s, priority %d, %d connections, generator at nice %d; flood: priority 0, %d connections; CPU work %s; warm-up %v, window %v; server on CPUs %s, generators on %s\n",
		f.highRate, f.highPrio, f.highConns, f.highNice, f.lowConns, f.cpu, f.warmup, f.duration, f.serverCPUs, f.loadCPUs)
	fmt.Fprintf(stdout, "%-14s %8s %3s %9s %9s %9s %-22s %9s %-22s %s\n", "config", "low/s", "run", "high p50", "high p99", "p99.9", "high verdict", "low got/s", "low verdict", "lanes")
	all := map[string]map[int][]priorityPoint{}
	variants := map[string]string{}
	for r := range f.runs {
		for li, low := range lows {
			for _, c := range f.cfgs {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("priority: %w", err)
				}
				p := f.measurePoint(ctx, c.flags, low, filepath.Join(f.out, fmt.Sprintf("%s-%d-%d", c.label, li, r)))
				if all[c.label] == nil {
					all[c.label] = map[int][]priorityPoint{}
				}
				all[c.label][li] = append(all[c.label][li], p)
				if p.failed != "" {
					fmt.Fprintf(stdout, "%-14s %8.0f %3d failed: %s\n", c.label, low, r, p.failed)
					continue
				}
				if p.variant != "" {
					variants[c.label] = p.variant
				}
				fmt.Fprintf(stdout, "%-14s %8.0f %3d %9v %9v %9v %-22s %9.0f %-22s %s\n", c.label, low, r,
					p.high.p50.Round(time.Microsecond), p.high.p99.Round(time.Microsecond), p.high.p999.Round(time.Microsecond),
					streamVerdict(p.high), p.low.achieved, streamVerdict(p.low), laneCounts(p.counters))
			}
		}
	}
	fmt.Fprintln(stdout, "\nconfigurations as the servers reported them:")
	for _, c := range f.cfgs {
		fmt.Fprintf(stdout, "  %-14s %s\n", c.label, variants[c.label])
	}
	fmt.Fprintf(stdout, "\nhigh-priority p99, median over runs whose high stream is valid [min, max]:\n%-14s", "config")
	for _, low := range lows {
		fmt.Fprintf(stdout, " %26s", fmt.Sprintf("low %.0f/s", low))
	}
	fmt.Fprintln(stdout)
	var series []plots.Series
	for _, c := range f.cfgs {
		s := plots.Series{Label: c.label}
		fmt.Fprintf(stdout, "%-14s", c.label)
		for li, low := range lows {
			var p99s []float64
			for _, p := range all[c.label][li] {
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
				fmt.Fprintf(stdout, " %26s", "no valid run")
				continue
			}
			st := results.Summarize(p99s)
			s.X, s.Y = append(s.X, low), append(s.Y, st.Median)
			fmt.Fprintf(stdout, " %26s", fmt.Sprintf("%.0fµs [%.0f, %.0f]", st.Median, st.Min, st.Max))
		}
		fmt.Fprintln(stdout)
		series = append(series, s)
	}
	fig := plots.LineFigure("priority",
		fmt.Sprintf("High-priority p99 (%g req/s, priority %d) under a low-priority flood", f.highRate, f.highPrio),
		"low-priority offered load (req/s)", "high-priority p99 (µs)", series)
	for _, format := range []string{"png", "svg"} {
		if err := results.WriteWith(filepath.Join(f.out, "priority."+format), func(w io.Writer) error { return fig.Render(w, format) }); err != nil {
			return fmt.Errorf("priority: %w", err)
		}
	}
	if err := results.WriteWith(filepath.Join(f.out, "priority.csv"), fig.WriteCSV); err != nil {
		return fmt.Errorf("priority: %w", err)
	}
	for _, n := range fig.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	fmt.Fprintf(stdout, "figure: %s (.png, .svg, .csv)\n", filepath.Join(f.out, "priority"))
	return nil
}

// loadArgs returns the "concbench load" command line against addr with
// the flags every run shares, writing its result to res.
func (f *priorityFlags) loadArgs(addr string, conns int, res string) []string {
	return []string{"load", "--addr", addr, "--cpus", f.loadCPUs, "--conns", strconv.Itoa(conns), "--cpu", f.cpu,
		"--warmup", f.warmup.String(), "--duration", f.duration.String(), "--json", res, "--allow-invalid"}
}

// measureCapacity runs a closed loop with the flood's connections against
// a fresh server with flags and returns its achieved rate.
func (f *priorityFlags) measureCapacity(ctx context.Context, flags []string) (capacity float64, err error) {
	srv, err := startConfigServer(f.bin, f.serverCPUs, flags)
	if err != nil {
		return 0, err
	}
	defer func() {
		if serr := srv.Stop(); err == nil && serr != nil {
			err = serr
		}
	}()
	res := filepath.Join(f.out, "capacity.json")
	ld := exec.CommandContext(ctx, f.bin, append(f.loadArgs(srv.Addr(), f.lowConns, res), "--closed")...)
	if out, err := ld.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("load: %v: %s", err, firstLine(string(out)))
	}
	r, err := results.ReadJSON[loadgen.Result](res)
	if err != nil {
		return 0, err
	}
	if r.AchievedRatePerS <= 0 {
		return 0, errors.New("no request answered")
	}
	return r.AchievedRatePerS, nil
}

// measurePoint runs one point: a fresh server, both streams at once, and
// a snapshot of the server's counters after them; their results are
// res-high.json and res-low.json.
func (f *priorityFlags) measurePoint(ctx context.Context, flags []string, low float64, res string) (p priorityPoint) {
	srv, err := startConfigServer(f.bin, f.serverCPUs, flags)
	if err != nil {
		return priorityPoint{failed: err.Error()}
	}
	defer func() {
		if err := srv.Stop(); err != nil && p.failed == "" {
			p.failed = err.Error()
		}
	}()
	type run struct {
		err    error
		stderr string
	}
	start := func(name string, conns int, rate float64, prio int) (string, chan run) {
		path := res + "-" + name + ".json"
		os.Remove(path)
		argv := append([]string{f.bin}, f.loadArgs(srv.Addr(), conns, path)...)
		argv = append(argv, "--poll", "sleep", "--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--prio", strconv.Itoa(prio))
		if name == "high" && f.highNice != 0 {
			// nice(1) sets it before exec, so every thread of the
			// generator inherits it.
			argv = append([]string{"nice", "-n", strconv.Itoa(f.highNice)}, argv...)
		}
		ld := exec.CommandContext(ctx, argv[0], argv[1:]...)
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
	hiPath, hiDone := start("high", f.highConns, f.highRate, f.highPrio)
	loPath, loDone := start("low", f.lowConns, low, 0)
	for _, s := range []struct {
		name string
		path string
		done chan run
		dst  *priorityStream
	}{{"high", hiPath, hiDone, &p.high}, {"low", loPath, loDone, &p.low}} {
		rn := <-s.done
		if strings.Contains(rn.stderr, "cannot set niceness") {
			// nice(1) runs the command anyway: the stream was measured,
			// but not as configured.
			p.failed = fmt.Sprintf("%s stream: --high-nice %d refused: %s", s.name, f.highNice, firstLine(rn.stderr))
			continue
		}
		if rn.err != nil {
			p.failed = fmt.Sprintf("%s stream: %v: %s", s.name, rn.err, firstLine(rn.stderr))
			continue
		}
		r, err := results.ReadJSON[loadgen.Result](s.path)
		if err != nil {
			p.failed = err.Error()
			continue
		}
		*s.dst = priorityStream{valid: r.Valid, checks: r.Checks, p50: time.Duration(r.Latency.P50Ns), p99: time.Duration(r.Latency.P99Ns),
			p999: time.Duration(r.Latency.P999Ns), achieved: r.AchievedRatePerS}
	}
	if sn, err := srv.Snapshot(); err == nil {
		p.variant = sn.Stats.Model + " " + sn.Stats.Variant
		p.counters = sn.Stats.Counters
	}
	return p
}

// streamVerdict is "valid", or INVALID with the failed checks' codes.
func streamVerdict(s priorityStream) string {
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
// lanes' counters, lane<i>_requests), or "" for other servers.
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
