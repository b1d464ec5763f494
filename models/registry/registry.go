// Package registry is the one table of the suite's models (Models): for
// each, its name on the command line, what it is, its family and colour
// in every figure, how the one sizing rule gives it threads, its
// configurations in the profiles, its own serve flags and how to start
// it. cmd/concbench serves from it, the harness sizes and names
// configurations from it, and plots colours and groups figures by it.
//
// Adding a model is one package under models/ (its doc.go mapping the
// pattern's participants) and one row here (and its rows in the README's
// and docs/design.md's model tables, which TestModelsDocumented checks);
// TestConformance runs models/modeltest under -race on every row in
// every configuration, and TestOneRow shows that a row is all the rest of
// the suite needs.
package registry

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"concbench/models"
	"concbench/models/acceptlock"
	"concbench/models/acceptmutex"
	"concbench/models/activeobject"
	"concbench/models/frontend"
	"concbench/models/halfsynchalfreactive"
	"concbench/models/internal/connio"
	"concbench/models/leaderfollowers"
	"concbench/models/netpoll"
	"concbench/models/partitioned"
	"concbench/models/proactor"
	"concbench/models/sharedqueue"
	"concbench/models/threadperconn"
	"concbench/wire"
)

// Start starts a model with the common configuration.
type Start func(cfg models.Config) (models.Server, error)

// Model is one row of the table.
type Model struct {
	Name    string // the package name, used on the command line (serve --model)
	Summary string // one line for serve's usage
	// Family is the column of the figures the model is drawn in
	// (FamilyLF, FamilyHandOff, FamilyOther): models that dispatch alike.
	Family string
	// Color is the model's slot in the figures' palette (package plots:
	// slots 0..10 are its fixed colours, later ones generated, so a new
	// row takes the next free slot), the same in every run and every
	// figure; each model its own, never negative.
	Color int
	// Sizing is how the sizing rule's thread count reaches the model
	// (harness: "CPUs, sizing and GOMAXPROCS").
	Sizing Sizing
	// Configs are the model's configurations in the profiles: the first
	// is the model's in the comparison (harness.Families), the others its
	// variants (harness.Variants); a model of FamilyPractised has all of
	// them in the practised profile instead (harness.Practised). None:
	// the model is in no profile but its own (the front end: the chain
	// profile).
	Configs []Config
	// VariantFloor is the fewest pool threads the variants profile gives
	// the model's configurations (0: the rule's).
	VariantFloor int
	// Flags registers the model's own serve flags on fs and returns the
	// function that starts the model with their values (read when it is
	// called).
	Flags func(fs *flag.FlagSet) Start
	// FrontEnd marks a model that forwards to a back-end server, whose
	// address its --backend flag must give.
	FrontEnd bool
	// ThreadSweep is the model's part in the thread sweep (the threads
	// profile, harness.ThreadsConfigs): its first configuration at each
	// pool size, as a reference sized by the rule, or none.
	ThreadSweep SweepRole
}

// SweepRole is a model's part in the thread sweep.
type SweepRole int

// The sweep roles.
const (
	// NotSwept: the model is not in the thread sweep.
	NotSwept SweepRole = iota
	// SweepPool: its first configuration at every pool size T of the
	// sweep, each mapped onto threads and GOMAXPROCS as the sizing rule
	// maps its own T (Sizing.Kind PoolThreads or PoolObjects).
	SweepPool
	// SweepReference: its first configuration once, sized by the rule,
	// beside the swept pools.
	SweepReference
)

// Config is one configuration of a model: its name in results and
// figures, and its own serve flags.
type Config struct {
	Name string
	Args []string
}

// The families of the figures' columns, in order.
const (
	FamilyLF        = "Leader/Followers"
	FamilyPractised = "LF as practised"      // nginx, Cherokee, boost.asio, the partitioned server
	FamilyHandOff   = "HS/HR, Active Object" // a hand-off per request to another thread
	FamilyOther     = "other models"
)

// Families are the figure columns in order.
var Families = []string{FamilyLF, FamilyPractised, FamilyHandOff, FamilyOther}

// PoolKind is how the sizing rule's thread count T reaches a model.
type PoolKind int

// The pool kinds.
const (
	// PoolThreads: --threads T threads serve (a Leader/Followers pool,
	// Half-Sync/Half-Reactive's workers, the Proactor's dispatchers),
	// beside Extra threads of fixed roles (the reactor).
	PoolThreads PoolKind = iota
	// PoolObjects: --ao-objects T active objects (a scheduler thread
	// each) and --threads n I/O threads, one per CPU.
	PoolObjects
	// PoolPerConn: a thread per connection: the rule has nothing to
	// choose.
	PoolPerConn
	// PoolRuntime: goroutines over Go's scheduler, GOMAXPROCS n; the
	// runtime adds threads for blocking system calls by itself.
	PoolRuntime
)

// SpareProcs is the Ps a server of locked threads gets beyond one per
// thread (the sizing rule's GOMAXPROCS, and serve's default): with every
// P held by a thread blocked in a system call, the Go runtime's monitor
// takes the P of each thread that blocks longer than 20 µs and hands it
// off, and the thread's return wakes the monitor again — on the server's
// CPUs, several context switches per wait. With one P idle it leaves a
// blocked thread's P alone (docs/findings.md, "Lean").
const SpareProcs = 1

// Procs returns the GOMAXPROCS of a PoolThreads model running t pool
// threads: a P for each of them and for the Extra threads, and
// SpareProcs. Other kinds return 0: their threads are not --threads'
// alone (PoolObjects, PoolPerConn) or not locked (PoolRuntime).
func (s Sizing) Procs(t int) int {
	if s.Kind != PoolThreads {
		return 0
	}
	return t + s.Extra + SpareProcs
}

// Sizing is how a model's threads follow the sizing rule.
type Sizing struct {
	Kind      PoolKind
	One, Many string // a pool thread and the pool's threads, in words ("worker", "workers")
	Extra     int    // threads of fixed roles beside the pool
	Role      string // what they are called ("reactor")
	Max       int    // the most the model accepts (0: models.MaxThreads)
	// Args, if set, returns serve flags that depend on the pool's T for
	// a configuration with args.
	Args func(args []string, t int) []string
}

// Models is every model the suite has, in the order reports list them.
var Models = []Model{
	{
		Name:   "leaderfollowers",
		Family: FamilyLF, Color: 0,
		Sizing: Sizing{Kind: PoolThreads, One: "thread", Many: "threads", Args: NiceSpread},
		Configs: []Config{
			{Name: "leaderfollowers/lifo", Args: []string{"--promotion", "lifo"}},
			{Name: "leaderfollowers/fifo", Args: []string{"--promotion", "fifo"}},
			{Name: "leaderfollowers/priority", Args: []string{"--promotion", "priority"}},
			{Name: "leaderfollowers/os", Args: []string{"--promotion", "os"}},
			{Name: "leaderfollowers/os-vacant", Args: []string{"--promotion", "os-vacant"}},
		},
		// A promotion order chooses among the followers: with fewer than
		// three threads there is at most one to promote, and every order
		// promotes the same one.
		VariantFloor: 4,
		Summary:      "Leader/Followers: a pool of locked OS threads (--threads, default 4) taking turns as leader on the shared epoll handle set; --promotion lifo|fifo|priority|os|os-vacant, --nice for priority; --lanes for priority lanes (TAO-style, SCHED_FIFO or nice per lane); --events N, the ready set a leader's wait takes and passes on with the role (1: one event per wait); --deactivation user|kernel, an owner word or EPOLLONESHOT",
		Flags: func(fs *flag.FlagSet) Start {
			promotion := leaderfollowers.LIFO
			fs.TextVar(&promotion, "promotion", leaderfollowers.LIFO, "promotion order: lifo, fifo, priority, os or os-vacant")
			nice := fs.String("nice", "", "with --promotion priority: one nice value per thread, comma-separated, e.g. 0,-5,5,10 (lower is more urgent; negative values need root or CAP_SYS_NICE)")
			lanes := fs.String("lanes", "", "priority lanes MINPRIO:THREADS,…, e.g. 0:2,128:2: each lane its own pool and handle set, a connection served by the lane of its first request's priority (leave --threads unset)")
			laneSched := leaderfollowers.SchedAuto
			fs.TextVar(&laneSched, "lane-sched", leaderfollowers.SchedAuto, "with --lanes, how the higher lanes' threads get their priority: auto (SCHED_FIFO where permitted and bounded by RT throttling, else nice), fifo or nice")
			events := fs.Int("events", leaderfollowers.DefaultEvents, fmt.Sprintf("ready handles one leader's wait may take (1..%d): the rest stay with the leader role, the next leader taking the next without waiting (ACE_TP_Reactor's ready set); 1: every leader waits for one event, as ACE's epoll reactor", leaderfollowers.MaxEvents))
			deact := leaderfollowers.User
			fs.TextVar(&deact, "deactivation", leaderfollowers.User, "how a connection's handle is deactivated while a thread processes it: user (registered once edge-triggered, an owner word claimed by the leader, as the paper's select-based handle set and ACE_TP_Reactor; re-armed only when the kernel must report it again) or kernel (EPOLLONESHOT, re-armed with epoll_ctl after every event, as ACE's epoll reactor)")
			return func(cfg models.Config) (models.Server, error) {
				prios, err := leaderfollowers.ParsePriorities(*nice)
				if err != nil {
					return nil, err
				}
				ls, err := leaderfollowers.ParseLanes(*lanes)
				if err != nil {
					return nil, err
				}
				return leaderfollowers.Start(cfg, leaderfollowers.Options{Promotion: promotion, Priorities: prios, Lanes: ls, LaneSched: laneSched, Events: *events, Deactivation: deact})
			}
		},
		ThreadSweep: SweepPool,
	},
	{
		Name:   "halfsynchalfreactive",
		Family: FamilyHandOff, Color: 1,
		Sizing: Sizing{Kind: PoolThreads, One: "worker", Many: "workers", Extra: 1, Role: "reactor"},
		Configs: []Config{
			{Name: "halfsynchalfreactive"},
			{Name: "halfsynchalfreactive/pooled", Args: []string{"--hshr-pooled"}},
		},
		Summary: "Half-Sync/Half-Reactive: one reactor thread on the handle set, a bounded monitor-object queue, --threads worker threads (default 4)",
		Flags: func(fs *flag.FlagSet) Start {
			queue := fs.Int("hshr-queue-size", 0, fmt.Sprintf("capacity of the request queue between the reactor and the workers; 0 for %d, max %d",
				halfsynchalfreactive.DefaultQueueSize, halfsynchalfreactive.MaxQueueSize))
			pooled := fs.Bool("hshr-pooled", false, `recycle request objects through a free list (variant "pooled") instead of allocating one per request`)
			prio := fs.Bool("hshr-priority", false, `a priority request queue (variant "priority"): workers take the queued request with the highest priority first, the oldest among equals`)
			return func(cfg models.Config) (models.Server, error) {
				return halfsynchalfreactive.Start(cfg, halfsynchalfreactive.Options{QueueSize: *queue, Pooled: *pooled, Priority: *prio})
			}
		},
		ThreadSweep: SweepPool,
	},
	{
		Name:   "activeobject",
		Family: FamilyHandOff, Color: 3,
		Sizing:  Sizing{Kind: PoolObjects, One: "active object", Many: "active objects", Max: activeobject.MaxObjects},
		Configs: []Config{{Name: "activeobject"}},
		Summary: "Active Object: I/O threads (--threads, default 1) decode requests and invoke a proxy; --ao-objects active objects (a scheduler thread, an activation queue and a ledger shard each; default 2) execute them; futures complete back to the I/O threads",
		Flags: func(fs *flag.FlagSet) Start {
			objects := fs.Int("ao-objects", 0, fmt.Sprintf("active objects: scheduler threads, each with an activation queue and a shard of the ledger; 0 for %d", activeobject.DefaultObjects))
			queue := fs.Int("ao-queue-capacity", 0, fmt.Sprintf("method requests each activation queue holds before enqueuing blocks; 0 for %d", activeobject.DefaultQueueCapacity))
			inFlight := fs.Int("ao-max-in-flight", 0, fmt.Sprintf("requests one connection may have in flight; 0 for %d", activeobject.DefaultMaxInFlight))
			return func(cfg models.Config) (models.Server, error) {
				return activeobject.Start(cfg, activeobject.Options{Objects: *objects, QueueCapacity: *queue, MaxInFlight: *inFlight})
			}
		},
		ThreadSweep: SweepPool,
	},
	{
		Name:   "proactor",
		Family: FamilyOther, Color: 2,
		Sizing:  Sizing{Kind: PoolThreads, One: "dispatcher", Many: "dispatchers"},
		Configs: []Config{{Name: "proactor"}},
		Summary: "Proactor on io_uring: a ring per dispatcher thread (SO_REUSEPORT listener, multishot accept, provided-buffer receives); --threads dispatchers (default: CPUs in the affinity mask)",
		Flags: func(fs *flag.FlagSet) Start {
			recv := fs.String("proactor-recv", "", "receive mode: multishot, single, or empty for multishot where the kernel supports it")
			buffers := fs.Int("proactor-buffers", 0, "provided receive buffers per ring, a power of two (0: 1024)")
			bufSize := fs.Int("proactor-buffer-size", 0, "bytes per provided buffer (0: 4096)")
			entries := fs.Int("proactor-entries", 0, "submission queue entries per ring, a power of two (0: 512; the completion queue is 8x)")
			return func(cfg models.Config) (models.Server, error) {
				return proactor.Start(cfg, proactor.Options{Recv: *recv, Buffers: *buffers, BufferSize: *bufSize, Entries: *entries})
			}
		},
		ThreadSweep: SweepReference,
	},
	{
		Name:   "threadperconn",
		Family: FamilyOther, Color: 4,
		Sizing:  Sizing{Kind: PoolPerConn},
		Configs: []Config{{Name: "threadperconn"}},
		Summary: "one locked OS thread per connection, blocking I/O on raw sockets (--threads caps connection threads; default 1024)",
		Flags: func(*flag.FlagSet) Start {
			return func(cfg models.Config) (models.Server, error) {
				return threadperconn.Start(cfg, threadperconn.Options{})
			}
		},
	},
	{
		Name:   "netpoll",
		Family: FamilyOther, Color: 5,
		Sizing:  Sizing{Kind: PoolRuntime},
		Configs: []Config{{Name: "netpoll"}},
		Summary: "goroutine per connection over Go's net package and its netpoller (--threads ignored)",
		Flags: func(*flag.FlagSet) Start {
			return func(cfg models.Config) (models.Server, error) { return netpoll.Start(cfg, netpoll.Options{}) }
		},
		ThreadSweep: SweepReference,
	},
	{
		Name:   "frontend",
		Family: FamilyHandOff, Color: 6,
		Sizing:   Sizing{Kind: PoolPerConn},
		Summary:  "a front end forwarding to a back-end concbench server (--backend ADDR, serving --protocol binary) over --upstream-conns multiplexed connections; --handoff bound (the paper's bound Leader/Followers) | perthread (a connection per client thread) | queue (a reader thread per connection); a thread per client connection (--threads caps them, default 1024)",
		FrontEnd: true,
		Flags: func(fs *flag.FlagSet) Start {
			backend := fs.String("backend", "", "front end: the back end's address host:port (a concbench serve --protocol binary)")
			conns := fs.Int("upstream-conns", 0, fmt.Sprintf("front end: multiplexed connections to the back end (handoff bound, queue); 0 for %d", frontend.DefaultUpstreamConns))
			handoff := frontend.Bound
			fs.TextVar(&handoff, "handoff", frontend.Bound, "front end: how a response reaches its thread: bound, perthread or queue")
			timeout := fs.Duration("upstream-timeout", 0, fmt.Sprintf("front end: a back end that sends nothing this long while a response is due breaks its connection (its requests answered 503 with the reason; it is dialled again with back-off); 0 for twice the longest work a request may ask (CPU, blocking, a withdrawal's wait) + 10 s: %v with the default limits", frontend.DefaultUpstreamTimeout(wire.Limits{})))
			return func(cfg models.Config) (models.Server, error) {
				return frontend.Start(cfg, frontend.Options{Backend: *backend, UpstreamConns: *conns, Handoff: handoff, UpstreamTimeout: *timeout})
			}
		},
	},
	{
		Name:   "acceptmutex",
		Family: FamilyPractised,
		Color:  7,
		Sizing: Sizing{Kind: PoolThreads, One: "worker", Many: "workers"},
		Configs: []Config{
			{Name: "acceptmutex/exclusive", Args: []string{"--accept", "exclusive"}},
			{Name: "acceptmutex/mutex", Args: []string{"--accept", "mutex"}},
			{Name: "acceptmutex/reuseport", Args: []string{"--accept", "reuseport"}},
		},
		Summary: "nginx's workers as threads: --threads workers (default one per CPU), each with its own epoll set and the connections it accepted, edge-triggered; --accept exclusive (EPOLLEXCLUSIVE, nginx's default) | mutex (accept_mutex: try-lock, --accept-delay) | reuseport (a SO_REUSEPORT socket per worker); --multi-accept, --worker-conns",
		Flags: func(fs *flag.FlagSet) Start {
			mode := acceptmutex.Exclusive
			fs.TextVar(&mode, "accept", acceptmutex.Exclusive, "how workers come to accept: exclusive (the listener in every worker's set with EPOLLEXCLUSIVE, nginx's default), mutex (nginx's accept_mutex) or reuseport (a SO_REUSEPORT socket per worker)")
			multi := fs.Bool("multi-accept", false, fmt.Sprintf("on each listener event accept until the backlog is empty (at most %d), nginx's multi_accept; default one connection per event", connio.MaxAcceptsPerEvent))
			delay := fs.Duration("accept-delay", acceptmutex.DefaultAcceptDelay, "with --accept mutex: the longest a worker that lost the accept mutex waits before it tries again, nginx's accept_mutex_delay")
			conns := fs.Int("worker-conns", 0, fmt.Sprintf("connection slots per worker, nginx's worker_connections: past them a worker refuses a connection (status unavailable), and under an eighth free a mutex worker sits rounds out; 0 for %d", acceptmutex.DefaultWorkerConns))
			return func(cfg models.Config) (models.Server, error) {
				return acceptmutex.Start(cfg, acceptmutex.Options{Accept: mode, MultiAccept: *multi, AcceptDelay: *delay, WorkerConns: *conns})
			}
		},
	},
	{
		Name:    "partitioned",
		Family:  FamilyPractised,
		Color:   8,
		Sizing:  Sizing{Kind: PoolThreads, One: "thread", Many: "threads"},
		Configs: []Config{{Name: "partitioned"}},
		Summary: "the partitioned server (the ZygOS paper's Linux-partitioned baseline, d-FCFS): --threads threads (default one per CPU), each with its own SO_REUSEPORT socket, epoll set and connections, level-triggered, one event per wait",
		Flags: func(*flag.FlagSet) Start {
			return func(cfg models.Config) (models.Server, error) { return partitioned.Start(cfg, partitioned.Options{}) }
		},
	},
	{
		Name:   "acceptlock",
		Family: FamilyPractised, Color: 9,
		Sizing: Sizing{Kind: PoolThreads, One: "thread", Many: "threads"},
		Configs: []Config{
			{Name: "acceptlock"},
			// The fixed burst beside Cherokee's learned one: what the
			// learning does to the balance across threads.
			{Name: "acceptlock/burst", Args: []string{"--acceptlock-burst"}},
		},
		Summary: "Leader/Followers as Cherokee practises it: --threads locked OS threads (default one per CPU), each with its own epoll set and the connections it accepted; the leader holds the listeners' lock (idle threads block on it, busy ones try it) and waits on the listener with its own connections",
		Flags: func(fs *flag.FlagSet) Start {
			watch := fs.Duration("acceptlock-watch", 0, fmt.Sprintf("acceptlock: the longest a thread waits on its epoll set in one step (Cherokee's fdwatch_msecs); 0 for %v", acceptlock.DefaultWatch))
			burst := fs.Bool("acceptlock-burst", false, "acceptlock: every leader accepts up to 64 connections until the backlog is empty, instead of Cherokee's learned maximum (cherokee_bind_accept_more)")
			return func(cfg models.Config) (models.Server, error) {
				return acceptlock.Start(cfg, acceptlock.Options{Watch: *watch, FixedBurst: *burst})
			}
		},
	},
	{
		Name:   "sharedqueue",
		Family: FamilyPractised, Color: 10,
		Sizing: Sizing{Kind: PoolThreads, One: "thread", Many: "threads"},
		Configs: []Config{
			{Name: "sharedqueue"},
			{Name: "sharedqueue/inline", Args: []string{"--sq-completion", "inline"}},
		},
		Summary: "Leader/Followers as boost.asio practises it: one io_context run by --threads locked OS threads (default one per CPU): one operation queue, the reactor token in it (its holder runs epoll_wait), idle threads on a futex condition; the ledger served through a strand per shard; --sq-completion posted|inline",
		Flags: func(fs *flag.FlagSet) Start {
			shards := fs.Int("sq-shards", 0, fmt.Sprintf("sharedqueue: ledger shards, each served through its own strand; 0 for %d (at most the accounts)", sharedqueue.DefaultShards))
			completion := sharedqueue.Posted
			fs.TextVar(&completion, "sq-completion", sharedqueue.Posted, "sharedqueue: how a write that completes at once reaches the next read: posted (its completion through the shared queue, waking a thread, as asio delivers it) or inline (the read handler writes and reads on, as an application writing synchronously does)")
			return func(cfg models.Config) (models.Server, error) {
				return sharedqueue.Start(cfg, sharedqueue.Options{Shards: *shards, Completion: completion})
			}
		},
	},
}

// Lookup returns the model named name, or false.
func Lookup(name string) (Model, bool) {
	for _, m := range Models {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// Names returns the models' names, in order.
func Names() []string {
	names := make([]string, len(Models))
	for i, m := range Models {
		names[i] = m.Name
	}
	return names
}

// NiceSpread returns, for a Leader/Followers configuration with priority
// promotion and no --nice of its own, one nice value per thread of a
// pool of t, spread evenly over 0..15 (4 threads: 0,5,10,15): the
// priority order then has a distinct priority per thread at any size,
// none of which needs privileges.
func NiceSpread(args []string, t int) []string {
	priority := false
	for i, a := range args {
		switch {
		case a == "--nice" || strings.HasPrefix(a, "--nice="):
			return nil
		case a == "--promotion=priority", a == "--promotion" && i+1 < len(args) && args[i+1] == "priority":
			priority = true
		}
	}
	if !priority {
		return nil
	}
	vals := make([]string, t)
	for i := range vals {
		v := 0
		if t > 1 {
			v = int(math.Round(15 * float64(i) / float64(t-1)))
		}
		vals[i] = strconv.Itoa(v)
	}
	return []string{"--nice", strings.Join(vals, ",")}
}
