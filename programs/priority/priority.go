package priority

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"concbench/internal/cpuset"
	"concbench/loadgen"
	"concbench/plots"
	"concbench/programs/serverconf"
	"concbench/results"
)

// DefaultConfigs are measured when none is given: each model without
// priority beside its priority configuration(s). GOMAXPROCS is one P per
// model thread plus one, as bench gives locked-thread models.
var DefaultConfigs = []string{
	"lf=--model leaderfollowers --threads 4 --gomaxprocs 5",
	"lf-lanes=--model leaderfollowers --lanes 0:2,128:2 --gomaxprocs 5",
	"lf-lanes-nice=--model leaderfollowers --lanes 0:2,128:2 --lane-sched nice --gomaxprocs 5",
	"hshr=--model halfsynchalfreactive --threads 4 --gomaxprocs 6",
	"hshr-prio=--model halfsynchalfreactive --threads 4 --hshr-priority --gomaxprocs 6",
}

// Config is a priority measurement's settings ("concbench priority"'s
// flags).
type Config struct {
	// ServerBinary is the concbench that serves; "": this executable.
	ServerBinary string
	// ServerCPUs is where the server is pinned, LoadCPUs where both
	// generators run.
	ServerCPUs, LoadCPUs string
	// CPU is both streams' CPU work per request (a distribution).
	CPU string
	// HighRate, HighConns and HighPrio are the high stream's rate
	// (requests/s), connections and priority (1..255); HighNice its
	// generator's nice value (-20..19). The flood has priority 0.
	HighRate                      float64
	HighConns, HighPrio, LowConns int
	HighNice                      int
	// Lows are the flood's rates as fractions of Capacity; Capacity 0
	// measures it first (closed loop, the flood's connections, the first
	// configuration).
	Lows     []float64
	Capacity float64
	// Warmup and Duration are each generator's warm-up and window.
	Warmup, Duration time.Duration
	// Reps is the repetitions of every point.
	Reps int
	// Out is the folder for the results and the figure.
	Out string
	// Configs are the server configurations; nil: DefaultConfigs.
	Configs []serverconf.Config
}

// Default returns the defaults of every setting; the CPUs are this
// process's, split in half (serverconf.SplitCPUs).
func Default() Config {
	srv, load := serverconf.SplitCPUs()
	return Config{ServerCPUs: srv, LoadCPUs: load, CPU: "exp:10us", HighRate: 200, HighConns: 4, HighPrio: 200,
		LowConns: 64, HighNice: -10, Lows: []float64{0.3, 0.7, 1.0, 1.3}, Warmup: time.Second, Duration: 5 * time.Second,
		Reps: 3, Out: "out/priority"}
}

// Check checks c's settings and returns c with its defaults filled in
// (the configurations, the binary).
func (c Config) Check() (Config, error) {
	switch {
	case c.HighPrio < 1 || c.HighPrio > 255:
		return c, fmt.Errorf("priority: --high-prio %d: want 1..255", c.HighPrio)
	case !(c.HighRate > 0):
		return c, fmt.Errorf("priority: --high-rate %g: want a positive rate", c.HighRate)
	case c.HighConns < 1 || c.LowConns < 1:
		return c, fmt.Errorf("priority: --high-conns %d, --low-conns %d: want 1 or more each", c.HighConns, c.LowConns)
	case c.Reps < 1:
		return c, fmt.Errorf("priority: --reps %d: want 1 or more", c.Reps)
	case c.Capacity < 0:
		return c, fmt.Errorf("priority: --capacity %g: want 0 (measure it) or a positive rate", c.Capacity)
	case c.HighNice < -20 || c.HighNice > 19:
		return c, fmt.Errorf("priority: --high-nice %d: want -20..19", c.HighNice)
	}
	for _, v := range c.Lows {
		if !(v > 0) {
			return c, fmt.Errorf("priority: --low: %g is not a positive fraction", v)
		}
	}
	if _, err := loadgen.ParseDurationDist(c.CPU); err != nil {
		return c, fmt.Errorf("priority: --cpu: %w", err)
	}
	if _, err := cpuset.Parse(c.LoadCPUs); err != nil {
		return c, fmt.Errorf("priority: --load-cpus: %w", err)
	}
	var err error
	if c.Configs == nil {
		if c.Configs, err = serverconf.Parse(DefaultConfigs); err != nil {
			return c, fmt.Errorf("priority: %w", err)
		}
	}
	if c.ServerBinary, err = serverconf.Executable(c.ServerBinary); err != nil {
		return c, fmt.Errorf("priority: %w", err)
	}
	return c, nil
}

// stream is one load generator's part of a point.
type stream struct {
	valid          bool
	checks         []loadgen.Check
	p50, p99, p999 time.Duration
	achieved       float64
}

// point is one measured point: both streams, and the server's variant
// and counters after them.
type point struct {
	high, low stream
	variant   string
	counters  map[string]uint64
	failed    string
}

// Run measures every point of c, printing the table to stdout, and
// writes the figure and every point's load results under c.Out; stderr
// gets a warning when the figure would show little.
func Run(ctx context.Context, c Config, stdout, stderr io.Writer) error {
	c, err := c.Check()
	if err != nil {
		return err
	}
	if len(c.Lows) < 3 {
		fmt.Fprintln(stderr, "priority: fewer than three low-priority loads: the figure shows little")
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("priority: %w", err)
	}
	// Both generators run here, on the load CPUs, as the "concbench
	// load" processes they replace ran pinned there (load --cpus), with
	// the Ps their workers need (loadgen.Procs) beside the runtime's.
	restore, err := serverconf.PinLoad(c.LoadCPUs)
	if err != nil {
		return fmt.Errorf("priority: --load-cpus %s: %w", c.LoadCPUs, err)
	}
	defer restore()
	hw, _ := c.placement(c.HighConns)
	lw, _ := c.placement(c.LowConns)
	if p := loadgen.Procs(hw + lw); runtime.GOMAXPROCS(0) < p {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(p))
	}
	return c.measure(ctx, stdout)
}

// measure runs every point and writes the table and the figure.
func (c *Config) measure(ctx context.Context, stdout io.Writer) error {
	if c.Capacity == 0 {
		capacity, err := c.measureCapacity(ctx, c.Configs[0].Flags)
		if err != nil {
			return fmt.Errorf("priority: capacity of %s: %w", c.Configs[0].Label, err)
		}
		c.Capacity = capacity
		fmt.Fprintf(stdout, "capacity of %s (closed loop, %d connections): %.0f req/s\n", c.Configs[0].Label, c.LowConns, capacity)
	}
	lows := make([]float64, len(c.Lows))
	for i, fr := range c.Lows {
		lows[i] = fr * c.Capacity
	}
	fmt.Fprintf(stdout, "high stream: %g req/s, priority %d, %d connections, generator at nice %d; flood: priority 0, %d connections; CPU work %s; warm-up %v, window %v; server on CPUs %s, generators on %s\n",
		c.HighRate, c.HighPrio, c.HighConns, c.HighNice, c.LowConns, c.CPU, c.Warmup, c.Duration, c.ServerCPUs, c.LoadCPUs)
	fmt.Fprintf(stdout, "%-14s %8s %3s %9s %9s %9s %-22s %9s %-22s %s\n", "config", "low/s", "run", "high p50", "high p99", "p99.9", "high verdict", "low got/s", "low verdict", "lanes")
	all := map[string]map[int][]point{}
	variants := map[string]string{}
	for r := range c.Reps {
		for li, low := range lows {
			for _, sc := range c.Configs {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("priority: %w", err)
				}
				p := c.measurePoint(ctx, sc.Flags, low, filepath.Join(c.Out, fmt.Sprintf("%s-%d-%d", sc.Label, li, r)))
				if all[sc.Label] == nil {
					all[sc.Label] = map[int][]point{}
				}
				all[sc.Label][li] = append(all[sc.Label][li], p)
				if p.failed != "" {
					fmt.Fprintf(stdout, "%-14s %8.0f %3d failed: %s\n", sc.Label, low, r, p.failed)
					continue
				}
				if p.variant != "" {
					variants[sc.Label] = p.variant
				}
				fmt.Fprintf(stdout, "%-14s %8.0f %3d %9v %9v %9v %-22s %9.0f %-22s %s\n", sc.Label, low, r,
					p.high.p50.Round(time.Microsecond), p.high.p99.Round(time.Microsecond), p.high.p999.Round(time.Microsecond),
					streamVerdict(p.high), p.low.achieved, streamVerdict(p.low), laneCounts(p.counters))
			}
		}
	}
	fmt.Fprintln(stdout, "\nconfigurations as the servers reported them:")
	for _, sc := range c.Configs {
		fmt.Fprintf(stdout, "  %-14s %s\n", sc.Label, variants[sc.Label])
	}
	fmt.Fprintf(stdout, "\nhigh-priority p99, median over runs whose high stream is valid [min, max]:\n%-14s", "config")
	for _, low := range lows {
		fmt.Fprintf(stdout, " %26s", fmt.Sprintf("low %.0f/s", low))
	}
	fmt.Fprintln(stdout)
	var series []plots.Series
	for _, sc := range c.Configs {
		s := plots.Series{Label: sc.Label}
		fmt.Fprintf(stdout, "%-14s", sc.Label)
		for li, low := range lows {
			var p99s []float64
			for _, p := range all[sc.Label][li] {
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
		fmt.Sprintf("High-priority p99 (%g req/s, priority %d) under a low-priority flood", c.HighRate, c.HighPrio),
		"low-priority offered load (req/s)", "high-priority p99 (µs)", series)
	for _, format := range []string{"png", "svg"} {
		if err := results.WriteWith(filepath.Join(c.Out, "priority."+format), func(w io.Writer) error { return fig.Render(w, format) }); err != nil {
			return fmt.Errorf("priority: %w", err)
		}
	}
	if err := results.WriteWith(filepath.Join(c.Out, "priority.csv"), fig.WriteCSV); err != nil {
		return fmt.Errorf("priority: %w", err)
	}
	for _, n := range fig.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	fmt.Fprintf(stdout, "figure: %s (.png, .svg, .csv)\n", filepath.Join(c.Out, "priority"))
	return nil
}

// placement is a generator's workers and their CPUs on the load CPUs for
// conns connections, as "concbench load --cpus" places them
// (loadgen.Placement).
func (c *Config) placement(conns int) (workers int, cpus []int) {
	set, _ := cpuset.Parse(c.LoadCPUs) // checked
	if len(set) == 0 {
		return 1, nil
	}
	n, pinned := loadgen.Placement(set, max(conns, 1))
	if n <= len(pinned) {
		return n, pinned
	}
	return n, nil
}

// load returns the configuration of a generator against addr with conns
// connections, as the "concbench load" command line the points used to
// run had it: load's defaults, the settings every run shares, and the
// given priority, rate (0: a closed loop) and polling.
func (c *Config) load(addr string, conns, prio int, rate float64, poll loadgen.Poll) (loadgen.Config, error) {
	lc := loadgen.Config{Addr: addr, Protocol: "http", Conns: conns, Depth: 1, Rate: rate, Closed: rate == 0, Arrival: loadgen.Poisson,
		MaxInFlight: loadgen.DefaultMaxInFlight, Duration: c.Duration, Warmup: c.Warmup, Timeout: loadgen.DefaultTimeout,
		Amount: 1, Verify: loadgen.VerifyFull, Seed: 1, HistLowest: loadgen.DefaultHistLowest, HistHighest: loadgen.DefaultHistHighest,
		HistDigits: loadgen.DefaultHistDigits, HlogInterval: loadgen.DefaultHlogInterval, Poll: poll,
		Limits: loadgen.Limits{MaxLagShare: loadgen.DefaultLimits.MaxLagShare}}
	lc.Workers, lc.WorkerCPUs = c.placement(conns)
	var err error
	for _, d := range []struct {
		val   string
		dst   *loadgen.Dist
		parse func(string) (loadgen.Dist, error)
	}{
		{c.CPU, &lc.CPU, loadgen.ParseDurationDist},
		{"0", &lc.Block, loadgen.ParseDurationDist},
		{"0", &lc.Size, loadgen.ParseIntDist},
		{strconv.Itoa(prio), &lc.Priority, loadgen.ParseIntDist},
	} {
		if *d.dst, err = d.parse(d.val); err != nil {
			return lc, err
		}
	}
	if lc.Ops, err = loadgen.ParseOpMix("work=1"); err != nil {
		return lc, err
	}
	return lc, lc.Validate()
}

// measureCapacity runs a closed loop with the flood's connections against
// a fresh server with flags and returns its achieved rate.
func (c *Config) measureCapacity(ctx context.Context, flags []string) (capacity float64, err error) {
	srv, err := serverconf.Start(c.ServerBinary, c.ServerCPUs, flags)
	if err != nil {
		return 0, err
	}
	defer func() {
		if serr := srv.Stop(); err == nil && serr != nil {
			err = serr
		}
	}()
	// A generator with CPUs of its own busy-polls, as load does.
	poll := loadgen.PollSleep
	if c.LoadCPUs != "" {
		poll = loadgen.PollBusy
	}
	lc, err := c.load(srv.Addr(), c.LowConns, 0, 0, poll)
	if err != nil {
		return 0, fmt.Errorf("load: %w", err)
	}
	r, err := runLoad(ctx, lc, filepath.Join(c.Out, "capacity.json"))
	if err != nil {
		return 0, err
	}
	if r.AchievedRatePerS <= 0 {
		return 0, errors.New("no request answered")
	}
	return r.AchievedRatePerS, nil
}

// runLoad runs lc and writes its result to path, as "concbench load
// --json path --allow-invalid" did: an invalid verdict is a result.
func runLoad(ctx context.Context, lc loadgen.Config, path string) (*loadgen.Result, error) {
	r, err := loadgen.Run(ctx, lc)
	if r == nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if werr := results.WriteJSON(path, nil, r); werr != nil {
		return nil, fmt.Errorf("load: --json: %w", werr)
	}
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return r, nil
}

// measurePoint runs one point: a fresh server, both streams at once, and
// a snapshot of the server's counters after them; their results are
// res-high.json and res-low.json.
func (c *Config) measurePoint(ctx context.Context, flags []string, low float64, res string) (p point) {
	srv, err := serverconf.Start(c.ServerBinary, c.ServerCPUs, flags)
	if err != nil {
		return point{failed: err.Error()}
	}
	defer func() {
		if err := srv.Stop(); err != nil && p.failed == "" {
			p.failed = err.Error()
		}
	}()
	streams := []struct {
		name        string
		conns, prio int
		rate        float64
		nice        int
		dst         *stream
		err         error
	}{
		{name: "high", conns: c.HighConns, prio: c.HighPrio, rate: c.HighRate, nice: c.HighNice, dst: &p.high},
		{name: "low", conns: c.LowConns, prio: 0, rate: low, dst: &p.low},
	}
	var wg sync.WaitGroup
	for i := range streams {
		s := &streams[i]
		path := res + "-" + s.name + ".json"
		os.Remove(path)
		lc, err := c.load(srv.Addr(), s.conns, s.prio, s.rate, loadgen.PollSleep)
		lc.Nice = s.nice
		if err == nil {
			err = lc.Validate()
		}
		if err != nil {
			s.err = fmt.Errorf("load: %w", err)
			continue
		}
		wg.Go(func() {
			r, err := runLoad(ctx, lc, path)
			if err != nil {
				s.err = err
				return
			}
			*s.dst = stream{valid: r.Valid, checks: r.Checks, p50: time.Duration(r.Latency.P50Ns), p99: time.Duration(r.Latency.P99Ns),
				p999: time.Duration(r.Latency.P999Ns), achieved: r.AchievedRatePerS}
		})
	}
	wg.Wait()
	for _, s := range streams {
		var se *os.SyscallError
		switch {
		case errors.As(s.err, &se) && se.Syscall == "setpriority":
			// The stream could not be measured as configured.
			p.failed = fmt.Sprintf("%s stream: --high-nice %d refused: %s", s.name, c.HighNice, serverconf.FirstLine(s.err.Error()))
		case s.err != nil:
			p.failed = fmt.Sprintf("%s stream: %s", s.name, serverconf.FirstLine(s.err.Error()))
		}
	}
	if sn, err := srv.Snapshot(); err == nil {
		p.variant = sn.Stats.Model + " " + sn.Stats.Variant
		p.counters = sn.Stats.Counters
	}
	return p
}

// streamVerdict is "valid", or INVALID with the failed checks' codes.
func streamVerdict(s stream) string {
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
