// Command wrkcompare drives concbench servers with wrk, an outside HTTP
// client, and reports each server's throughput next to its own cost per
// request, read from its control channel. It is how the figures quoted in
// issue closing notes are measured, so that anyone can repeat them:
//
//	go build -o bin/concbench ./cmd/concbench
//	go run ./scripts/wrkcompare -runs 3 -d 10s -c 64 \
//	    'lf-lifo=--model leaderfollowers --promotion lifo' \
//	    'netpoll=--model netpoll'
//
// Each configuration is "label=serve flags". Runs alternate across the
// configurations (run 1 of each, then run 2 of each, …) so that machine drift
// hits all alike. Each run starts a fresh server pinned to -server-cpus,
// takes a snapshot, runs wrk pinned to -wrk-cpus (taskset), takes a second
// snapshot, and stops the server. It prints one line per run and then, per
// configuration, the median and the range of every column.
//
// It needs wrk and taskset on the PATH (Debian: apt-get install wrk).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"concbench/models"
	"concbench/scripts/internal/serveproc"
)

type sample struct {
	reqPerS, ctxsw, vol, invol, cpuUs, allocs float64
	errors, non2xx                            int64
	stats                                     models.Stats // delta of the per-thread counters
}

func main() {
	runs := flag.Int("runs", 3, "runs per configuration (alternated)")
	dur := flag.Duration("d", 10*time.Second, "wrk duration")
	conns := flag.Int("c", 64, "wrk connections")
	threads := flag.Int("t", 1, "wrk threads")
	path := flag.String("path", "/work?cpu=10us", "request path and query")
	bin := flag.String("bin", "bin/concbench", "the concbench binary")
	serverCPUs := flag.String("server-cpus", "0", "server CPU list (serve --cpus)")
	wrkCPUs := flag.String("wrk-cpus", "1", "wrk CPU list (taskset -c)")
	perThread := flag.Bool("per-thread", false, "also print each run's per-thread share of events")
	flag.Parse()
	cfgs, err := serveproc.ParseConfigs(flag.Args())
	if err != nil {
		fatalf("%v", err)
	}
	samples := make([][]sample, len(cfgs))
	fmt.Printf("# wrk -t%d -c%d -d%v 'http://ADDR%s'; server on CPUs %s, wrk on CPUs %s\n",
		*threads, *conns, *dur, *path, *serverCPUs, *wrkCPUs)
	fmt.Printf("%-22s %4s %10s %9s %9s %9s %9s %9s %6s %6s\n",
		"config", "run", "req/s", "ctxsw/req", "vol/req", "invol/req", "cpu-us/req", "allocs/req", "errs", "non2xx")
	for r := range *runs {
		for i, c := range cfgs {
			s, err := measure(*bin, c, *serverCPUs, *wrkCPUs, *threads, *conns, *dur, *path)
			if err != nil {
				fatalf("%s run %d: %v", c.Label, r+1, err)
			}
			samples[i] = append(samples[i], s)
			fmt.Printf("%-22s %4d %10.0f %9.3f %9.3f %9.3f %9.2f %9.3f %6d %6d\n",
				c.Label, r+1, s.reqPerS, s.ctxsw, s.vol, s.invol, s.cpuUs, s.allocs, s.errors, s.non2xx)
			if *perThread {
				fmt.Printf("%-22s      events per thread: %s\n", "", shares(s.stats))
			}
		}
	}
	fmt.Printf("\n# median [min, max] over %d runs\n", *runs)
	fmt.Printf("%-22s %26s %26s %26s %22s\n", "config", "req/s", "ctxsw/req", "cpu-us/req", "allocs/req")
	for i, c := range cfgs {
		col := func(f func(sample) float64) []float64 {
			var xs []float64
			for _, s := range samples[i] {
				xs = append(xs, f(s))
			}
			return xs
		}
		fmt.Printf("%-22s %26s %26s %26s %22s\n", c.Label,
			mmm(col(func(s sample) float64 { return s.reqPerS }), "%.0f"),
			mmm(col(func(s sample) float64 { return s.ctxsw }), "%.3f"),
			mmm(col(func(s sample) float64 { return s.cpuUs }), "%.2f"),
			mmm(col(func(s sample) float64 { return s.allocs }), "%.3f"))
	}
}

// mmm formats the median and range of xs.
func mmm(xs []float64, f string) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(f+" ["+f+", "+f+"]", med, s[0], s[len(s)-1])
}

// shares lists each pool thread's share of the events, in percent.
func shares(st models.Stats) string {
	var total uint64
	for _, t := range st.PerThread {
		total += t.Events
	}
	if total == 0 {
		return "-"
	}
	var parts []string
	for _, t := range st.PerThread {
		parts = append(parts, fmt.Sprintf("%s:%.1f%%", t.Role, 100*float64(t.Events)/float64(total)))
	}
	return strings.Join(parts, " ")
}

var (
	reqRe    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	sockRe   = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	non2xxRe = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

func measure(bin string, c serveproc.Config, serverCPUs, wrkCPUs string, threads, conns int, dur time.Duration, path string) (sample, error) {
	args := append([]string{"serve", "--cpus", serverCPUs}, c.Flags...)
	srv := exec.Command(bin, args...)
	ctl, err := srv.StdinPipe()
	if err != nil {
		return sample{}, err
	}
	out, err := srv.StdoutPipe()
	if err != nil {
		return sample{}, err
	}
	var stderr strings.Builder
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		return sample{}, err
	}
	defer func() {
		io.WriteString(ctl, "quit\n")
		ctl.Close()
		srv.Wait()
	}()
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	if !lines.Scan() {
		srv.Wait()
		return sample{}, fmt.Errorf("server printed no address: %s", stderr.String())
	}
	addr := lines.Text()
	snap := func() (models.Snapshot, error) {
		var s models.Snapshot
		if _, err := io.WriteString(ctl, "snapshot\n"); err != nil {
			return s, err
		}
		if !lines.Scan() {
			return s, fmt.Errorf("no snapshot: %s", stderr.String())
		}
		return s, json.Unmarshal(lines.Bytes(), &s)
	}
	before, err := snap()
	if err != nil {
		return sample{}, err
	}
	w := exec.Command("taskset", "-c", wrkCPUs, "wrk", "-t"+strconv.Itoa(threads), "-c"+strconv.Itoa(conns),
		"-d"+dur.String(), "http://"+addr+path)
	wout, err := w.CombinedOutput()
	if err != nil {
		return sample{}, fmt.Errorf("wrk: %v: %s", err, wout)
	}
	after, err := snap()
	if err != nil {
		return sample{}, err
	}
	var s sample
	if m := reqRe.FindSubmatch(wout); m != nil {
		s.reqPerS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := sockRe.FindSubmatch(wout); m != nil {
		for _, g := range m[1:] {
			n, _ := strconv.ParseInt(string(g), 10, 64)
			s.errors += n
		}
	}
	if m := non2xxRe.FindSubmatch(wout); m != nil {
		s.non2xx, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	n := float64(after.Stats.Requests - before.Stats.Requests)
	if n == 0 {
		return s, fmt.Errorf("server served no requests; wrk said:\n%s", wout)
	}
	s.vol = float64(after.Rusage.Voluntary-before.Rusage.Voluntary) / n
	s.invol = float64(after.Rusage.Involuntary-before.Rusage.Involuntary) / n
	s.ctxsw = s.vol + s.invol
	s.cpuUs = float64(after.Rusage.UserNs+after.Rusage.SystemNs-before.Rusage.UserNs-before.Rusage.SystemNs) / n / 1e3
	s.allocs = float64(after.Alloc.Objects-before.Alloc.Objects) / n
	s.stats = after.Stats
	for i := range s.stats.PerThread {
		if i < len(before.Stats.PerThread) {
			s.stats.PerThread[i].Events -= before.Stats.PerThread[i].Events
		}
	}
	return s, nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "wrkcompare: "+format+"\n", args...)
	os.Exit(1)
}
