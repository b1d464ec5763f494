package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
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

// The values serve's zero settings stand for, and its bounds, as its
// usage quotes them.
const (
	MaxThreads              = models.MaxThreads
	DefaultHeaderTimeout    = models.DefaultHeaderTimeout
	DefaultMaxPendingOutput = models.DefaultMaxPendingOutput
	DefaultMaxPayload       = wire.DefaultMaxPayload
	DefaultMaxHeader        = wire.DefaultMaxHeader
	DefaultMaxWork          = wire.DefaultMaxWork
	DefaultAccounts         = service.DefaultAccounts
	DefaultInitialBalance   = service.DefaultInitialBalance
	MaxTrace                = service.MaxTrace
)

// Protocols are the wire protocols a server speaks.
var Protocols = wire.Protocols

// Config is a server's settings; 0 in a field is its default.
type Config struct {
	Model, Protocol, Addr, CPUs  string
	Threads, Backlog, GOMAXPROCS int
	MaxPending, MaxPayload       int
	MaxHeader, MaxConns          int
	MaxWork                      time.Duration
	HeaderTimeout                time.Duration // 0 disables it
	Accounts                     int
	InitialBalance               int64
	NsPerIter                    float64
	Trace                        int
	Models                       *ModelFlags     // every model's own flags (RegisterModels)
	Given                        map[string]bool // the flags given on the command line
}

// ModelFlags are the models' own flags, registered on a flag set beside
// serve's, and the start function of each model with its flags' values.
type ModelFlags struct {
	starts map[string]registry.Start
	owner  map[string]string // model-specific flag → its model
}

// RegisterModels registers every model's own flags on fs, each usage
// naming its model. It panics if a model redefines a flag of fs: the
// model table's mistake.
func RegisterModels(fs *flag.FlagSet) *ModelFlags {
	mf := &ModelFlags{starts: map[string]registry.Start{}, owner: map[string]string{}}
	for _, m := range registry.Models {
		own := flag.NewFlagSet(m.Name, flag.ContinueOnError)
		mf.starts[m.Name] = m.Flags(own)
		own.VisitAll(func(fl *flag.Flag) {
			if fs.Lookup(fl.Name) != nil {
				panic("concbench: model " + m.Name + " redefines flag --" + fl.Name)
			}
			mf.owner[fl.Name] = m.Name
			fs.Var(fl.Value, fl.Name, fl.Usage+" (model "+m.Name+")")
		})
	}
	return mf
}

// ModelList lists the models, a line each, for the usage.
func ModelList() string {
	var b strings.Builder
	for _, m := range registry.Models {
		fmt.Fprintf(&b, "  %-22s %s\n", m.Name, m.Summary)
	}
	return b.String()
}

// Run serves until ctx ends, "quit" on stdin, or an error: the bound
// address first on stdout, then a JSON line per control command.
func Run(ctx context.Context, f Config, stdin io.Reader, stdout, stderr io.Writer) error {
	start, ok := f.Models.starts[f.Model]
	if !ok {
		if f.Model == "" {
			return fmt.Errorf("serve: --model is required (accepted: %s)", strings.Join(registry.Names(), ", "))
		}
		return fmt.Errorf("serve: unknown model %q (accepted: %s)", f.Model, strings.Join(registry.Names(), ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(f.Given)) { // in fs.Visit's order
		if m, ok := f.Models.owner[name]; ok && m != f.Model {
			return fmt.Errorf("serve: flag --%s applies to model %s, not %s", name, m, f.Model)
		}
	}
	if f.GOMAXPROCS < 0 || f.GOMAXPROCS > 4096 {
		return fmt.Errorf("serve: --gomaxprocs %d out of range (accepted: 0 for the default, or 1..4096)", f.GOMAXPROCS)
	}
	if f.Trace < 0 || f.Trace > service.MaxTrace {
		return fmt.Errorf("serve: --trace %d out of range (accepted: 0 for off, or 1..%d)", f.Trace, service.MaxTrace)
	}
	if f.HeaderTimeout < 0 {
		return fmt.Errorf("serve: --header-timeout %v is negative (accepted: 0 to disable, or a positive duration)", f.HeaderTimeout)
	}

	// Pin first: calibration and GOMAXPROCS must see the final CPUs.
	if err := cli.PinCPUs("serve", f.CPUs, f.GOMAXPROCS); err != nil {
		return err
	}
	// As many descriptors as the system allows this process: one per
	// connection. The Go runtime raises the soft limit at start-up too,
	// but silently; a server that cannot is told so here.
	maxFDs, hardFDs, err := sysstat.RaiseNoFile()
	if err != nil {
		fmt.Fprintf(stderr, "concbench serve: warning: could not raise the descriptor limit (RLIMIT_NOFILE soft limit %d) to its hard limit %d: %v; connections past about %d will be refused (EMFILE)\n", maxFDs, hardFDs, err, maxFDs)
	}
	codec, err := wire.New(f.Protocol, wire.Limits{MaxPayload: f.MaxPayload, MaxHeader: f.MaxHeader, MaxWork: f.MaxWork})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	var trace *service.Trace
	if f.Trace > 0 {
		trace = service.NewTrace(f.Trace)
	}
	svc, err := service.New(service.Config{Accounts: f.Accounts, InitialBalance: f.InitialBalance, NsPerIter: f.NsPerIter, Trace: trace})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	cfg := models.Config{Addr: f.Addr, Threads: f.Threads, Backlog: f.Backlog, Codec: codec, Service: svc, MaxPendingOutput: f.MaxPending,
		HeaderTimeout: f.HeaderTimeout, MaxConns: f.MaxConns}
	if f.HeaderTimeout == 0 {
		cfg.HeaderTimeout = -1 // disabled (the Config's 0 means the default)
	}
	srv, err := start(cfg)
	if err != nil {
		return fmt.Errorf("serve: model %s: %w", f.Model, err)
	}
	defer srv.Close()
	if m, ok := registry.Lookup(f.Model); ok && f.GOMAXPROCS == 0 {
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
func serveInfo(f *Config, srv models.Server, codec wire.Codec, svc *service.Service, cfg models.Config) models.Info {
	st := srv.Stats()
	cal := svc.Calibration()
	cpus := "unknown"
	if set, err := cpuset.Current(); err == nil {
		cpus = set.String()
	}
	scfg := svc.Config()
	return models.Info{
		Model:            f.Model,
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
