package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"concbench/internal/cli"
	"concbench/internal/cpuset"
	"concbench/internal/sysstat"
	"concbench/models"
	"concbench/models/registry"
	"concbench/service"
	"concbench/wire"
)

const serveUsage = `usage: concbench serve --model M [flags]

Runs one concurrency model as a TCP server until SIGINT, SIGTERM, or "quit"
on standard input.

The first line on standard output is the bound address (host:port). After
it, standard input is a control channel: each line is a command, answered
by one line of JSON on standard output:

  snapshot        counters now: rusage over all threads, Go heap allocations,
                  RSS, the model's stats (models.Snapshot)
  snapshot tasks  the same plus per-thread sums from /proc/self/task
                  (context switches, run-queue wait); costs ~50 µs a thread
  info            what runs, with which settings (models.Info)
  trace           with --trace: the requests served since the last reset,
                  {"records":[[id,start_ns,end_ns,tid],…],"dropped":n,…}
                  (CLOCK_MONOTONIC ns of each request's service, from
                  the server's own clock, and the thread that served
                  it; see concbench validate)
  trace reset     with --trace: empty the trace (call it between loads)
  quit            close the server and exit

SIGUSR1 also prints a snapshot. End of input stops the control channel but
not the server.

Models (--model):
`

// serveFlags are the serve command's settings.
type serveFlags struct {
	model, protocol, addr, cpus  string
	threads, backlog, gomaxprocs int
	maxPending, maxPayload       int
	maxHeader, maxConns          int
	maxWork                      time.Duration
	headerTimeout                time.Duration
	accounts                     int
	initialBalance               int64
	nsPerIter                    float64
	trace                        int
}

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var f serveFlags
	fs.StringVar(&f.model, "model", "", "the model to run (required; see below)")
	fs.StringVar(&f.protocol, "protocol", "http", "wire protocol: "+strings.Join(wire.Protocols, " or "))
	fs.StringVar(&f.addr, "addr", "127.0.0.1:0", "listen address; port 0 picks a free port")
	fs.IntVar(&f.threads, "threads", 0, fmt.Sprintf("OS threads of the model (meaning per model); 0 for the model's default, max %d", models.MaxThreads))
	fs.IntVar(&f.backlog, "backlog", 0, "listen backlog; 0 for the default (4096, capped by net.core.somaxconn)")
	fs.IntVar(&f.gomaxprocs, "gomaxprocs", 0, "set GOMAXPROCS; 0 for the CPUs in the affinity mask, or, for a model of a --threads pool of locked threads, a P per thread and a spare if that is more")
	fs.StringVar(&f.cpus, "cpus", "", "pin the server to these CPUs (cpulist, e.g. 0 or 0-1); empty: no pinning")
	fs.IntVar(&f.maxPending, "max-pending-output", 0, fmt.Sprintf("response bytes a connection may have unread before the server stops reading it; 0 for %d", models.DefaultMaxPendingOutput))
	fs.IntVar(&f.maxPayload, "max-payload", 0, fmt.Sprintf("largest request payload and response size in bytes; 0 for %d", wire.DefaultMaxPayload))
	fs.IntVar(&f.maxHeader, "max-header", 0, fmt.Sprintf("largest HTTP header section in bytes; 0 for %d", wire.DefaultMaxHeader))
	fs.IntVar(&f.maxConns, "max-conns", 0, "connections the server holds open at once; past it a new client is refused (status unavailable, HTTP 503, with the reason) and counted as refused; 0 for no cap")
	fs.DurationVar(&f.headerTimeout, "header-timeout", models.DefaultHeaderTimeout, "close a connection whose request stays incomplete this long (a slow or stalled client), counted as header_timeout; 0 disables")
	fs.DurationVar(&f.maxWork, "max-work", 0, fmt.Sprintf("largest CPU, blocking or timeout value a request may ask for; 0 for %v", wire.DefaultMaxWork))
	fs.IntVar(&f.accounts, "accounts", 0, fmt.Sprintf("ledger accounts; 0 for %d", service.DefaultAccounts))
	fs.Int64Var(&f.initialBalance, "initial-balance", 0, fmt.Sprintf("initial balance of each account; 0 for %d", service.DefaultInitialBalance))
	fs.Float64Var(&f.nsPerIter, "ns-per-iter", 0, "CPU-work calibration to use instead of measuring one (ns per iteration); 0 measures")
	fs.IntVar(&f.trace, "trace", 0, fmt.Sprintf("record each request's service start and end (CLOCK_MONOTONIC) for up to N requests, read with the control command trace; 0 (default) off, max %d; not the Active Object model", service.MaxTrace))

	starts := map[string]registry.Start{}
	owner := map[string]string{} // model-specific flag → its model
	for _, m := range registry.Models {
		own := flag.NewFlagSet(m.Name, flag.ContinueOnError)
		starts[m.Name] = m.Flags(own)
		own.VisitAll(func(fl *flag.Flag) {
			if fs.Lookup(fl.Name) != nil {
				panic("concbench: model " + m.Name + " redefines flag --" + fl.Name)
			}
			owner[fl.Name] = m.Name
			fs.Var(fl.Value, fl.Name, fl.Usage+" (model "+m.Name+")")
		})
	}
	header := serveUsage
	for _, m := range registry.Models {
		header += fmt.Sprintf("  %-22s %s\n", m.Name, m.Summary)
	}
	if err := cli.Parse(fs, args, stdout, header+"\nFlags:\n"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q (flags only)", fs.Arg(0))
	}
	start, ok := starts[f.model]
	if !ok {
		if f.model == "" {
			return fmt.Errorf("serve: --model is required (accepted: %s)", strings.Join(registry.Names(), ", "))
		}
		return fmt.Errorf("serve: unknown model %q (accepted: %s)", f.model, strings.Join(registry.Names(), ", "))
	}
	var misplaced error
	fs.Visit(func(fl *flag.Flag) {
		if m, ok := owner[fl.Name]; ok && m != f.model && misplaced == nil {
			misplaced = fmt.Errorf("serve: flag --%s applies to model %s, not %s", fl.Name, m, f.model)
		}
	})
	if misplaced != nil {
		return misplaced
	}
	if f.gomaxprocs < 0 || f.gomaxprocs > 4096 {
		return fmt.Errorf("serve: --gomaxprocs %d out of range (accepted: 0 for the default, or 1..4096)", f.gomaxprocs)
	}
	if f.trace < 0 || f.trace > service.MaxTrace {
		return fmt.Errorf("serve: --trace %d out of range (accepted: 0 for off, or 1..%d)", f.trace, service.MaxTrace)
	}
	if f.headerTimeout < 0 {
		return fmt.Errorf("serve: --header-timeout %v is negative (accepted: 0 to disable, or a positive duration)", f.headerTimeout)
	}

	// Pin first: calibration and GOMAXPROCS must see the final CPUs.
	if err := cli.PinCPUs("serve", f.cpus, f.gomaxprocs); err != nil {
		return err
	}
	// As many descriptors as the system allows this process: one per
	// connection. The Go runtime raises the soft limit at start-up too,
	// but silently; a server that cannot is told so here.
	maxFDs, hardFDs, err := sysstat.RaiseNoFile()
	if err != nil {
		fmt.Fprintf(stderr, "concbench serve: warning: could not raise the descriptor limit (RLIMIT_NOFILE soft limit %d) to its hard limit %d: %v; connections past about %d will be refused (EMFILE)\n", maxFDs, hardFDs, err, maxFDs)
	}
	codec, err := wire.New(f.protocol, wire.Limits{MaxPayload: f.maxPayload, MaxHeader: f.maxHeader, MaxWork: f.maxWork})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	var trace *service.Trace
	if f.trace > 0 {
		trace = service.NewTrace(f.trace)
	}
	svc, err := service.New(service.Config{Accounts: f.accounts, InitialBalance: f.initialBalance, NsPerIter: f.nsPerIter, Trace: trace})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	cfg := models.Config{Addr: f.addr, Threads: f.threads, Backlog: f.backlog, Codec: codec, Service: svc, MaxPendingOutput: f.maxPending,
		HeaderTimeout: f.headerTimeout, MaxConns: f.maxConns}
	if f.headerTimeout == 0 {
		cfg.HeaderTimeout = -1 // disabled (the Config's 0 means the default)
	}
	srv, err := start(cfg)
	if err != nil {
		return fmt.Errorf("serve: model %s: %w", f.model, err)
	}
	defer srv.Close()
	if m, ok := registry.Lookup(f.model); ok && f.gomaxprocs == 0 {
		// The sizing rule's Ps where the runtime's default has fewer: a
		// P per locked thread and a spare (registry.SpareProcs).
		if n := m.Sizing.Procs(srv.Stats().Threads); n > runtime.GOMAXPROCS(0) {
			runtime.GOMAXPROCS(n)
		}
	}

	out := &lineWriter{w: stdout}
	out.line(srv.Addr().String())
	if srv.Addr().Addr().IsUnspecified() {
		fmt.Fprintf(stderr, "concbench serve: warning: listening on every interface (%s): any host that can reach this one can load it; use 127.0.0.1 for a benchmark on this machine\n", srv.Addr())
	}
	info := serveInfo(&f, srv, codec, svc, cfg)
	info.MaxFDs = maxFDs
	fmt.Fprintf(stderr, "concbench serve: model %s%s, %s on %s, threads %d, GOMAXPROCS %d, CPUs %s, calibration %.3f ns/iter\n",
		info.Model, variantSuffix(info.Variant), info.Protocol, info.Addr, info.Threads, info.GOMAXPROCS, info.CPUs, info.NsPerIter)

	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	quit := make(chan struct{})
	go control(stdin, out, srv, info, trace, quit)
	for {
		select {
		case <-ctx.Done():
			return closeServer(srv)
		case <-quit:
			return closeServer(srv)
		case <-usr1:
			out.json(models.TakeSnapshot(srv, false))
		}
	}
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

func closeServer(srv models.Server) error {
	if err := srv.Close(); err != nil {
		return fmt.Errorf("serve: close: %w", err)
	}
	return nil
}

// serveInfo describes the running server.
func serveInfo(f *serveFlags, srv models.Server, codec wire.Codec, svc *service.Service, cfg models.Config) models.Info {
	st := srv.Stats()
	cal := svc.Calibration()
	cpus := "unknown"
	if set, err := cpuset.Current(); err == nil {
		cpus = set.String()
	}
	scfg := svc.Config()
	return models.Info{
		Model:            f.model,
		Variant:          st.Variant,
		Protocol:         codec.Protocol(),
		Addr:             srv.Addr().String(),
		Threads:          st.Threads,
		GOMAXPROCS:       runtime.GOMAXPROCS(0),
		NumCPU:           runtime.NumCPU(),
		CPUs:             cpus,
		PID:              os.Getpid(),
		GoVersion:        runtime.Version(),
		NsPerIter:        cal.NsPerIter,
		CalibrationMin:   cal.Min,
		CalibrationMax:   cal.Max,
		MaxPendingOutput: cfg.WithDefaults(0).MaxPendingOutput,
		HeaderTimeoutNs:  max(int64(cfg.WithDefaults(0).HeaderTimeout), 0),
		MaxConns:         cfg.MaxConns,
		MaxPayload:       codec.Limits().MaxPayload,
		Accounts:         scfg.Accounts,
		InitialBalance:   scfg.InitialBalance,
	}
}

// control answers the control channel until end of input or "quit".
func control(in io.Reader, out *lineWriter, srv models.Server, info models.Info, trace *service.Trace, quit chan<- struct{}) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
			continue
		case fields[0] == "snapshot" && len(fields) == 1:
			out.json(models.TakeSnapshot(srv, false))
		case fields[0] == "snapshot" && slices.Equal(fields[1:], []string{"tasks"}):
			out.json(models.TakeSnapshot(srv, true))
		case fields[0] == "info" && len(fields) == 1:
			out.json(info)
		case fields[0] == "trace" && trace == nil:
			out.json(map[string]string{"error": "trace: the server runs without --trace"})
		case fields[0] == "trace" && len(fields) == 1:
			out.json(trace.Dump())
		case fields[0] == "trace" && slices.Equal(fields[1:], []string{"reset"}):
			trace.Reset()
			out.json(map[string]bool{"reset": true})
		case fields[0] == "quit" && len(fields) == 1:
			close(quit)
			return
		default:
			out.json(map[string]string{"error": fmt.Sprintf("unknown command %q (accepted: snapshot, snapshot tasks, info, trace, trace reset, quit)", sc.Text())})
		}
	}
}

// lineWriter writes whole lines to w, one writer at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, s+"\n")
}

func (l *lineWriter) json(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	l.line(string(b))
}
