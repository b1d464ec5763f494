package main

import (
	"flag"
	"fmt"

	"concbench/models"
	"concbench/models/activeobject"
	"concbench/models/frontend"
	"concbench/models/halfsynchalfreactive"
	"concbench/models/leaderfollowers"
	"concbench/models/netpoll"
	"concbench/models/proactor"
	"concbench/models/threadperconn"
)

// startFunc starts a model with a common configuration.
type startFunc func(cfg models.Config) (models.Server, error)

// modelSpec is one row of the model table.
type modelSpec struct {
	name    string // the package name, used on the command line
	summary string
	// flags registers the model's own flags on fs and returns the function
	// that starts the model with their values (read when it is called).
	flags func(fs *flag.FlagSet) startFunc
	// frontEnd marks a model that forwards to a back-end server, whose
	// address its --backend flag must give.
	frontEnd bool
}

// modelTable is every model the command can run, in the order reports list
// them. A model's name is its package name.
var modelTable = []modelSpec{
	{
		name:    "leaderfollowers",
		summary: "Leader/Followers: a pool of locked OS threads (--threads, default 4) taking turns as leader on the shared epoll handle set; --promotion lifo|fifo|priority|os, --nice for priority; --lanes for priority lanes (TAO-style, SCHED_FIFO or nice per lane)",
		flags: func(fs *flag.FlagSet) startFunc {
			promotion := leaderfollowers.LIFO
			fs.TextVar(&promotion, "promotion", leaderfollowers.LIFO, "promotion order: lifo, fifo, priority or os")
			nice := fs.String("nice", "", "with --promotion priority: one nice value per thread, comma-separated, e.g. 0,-5,5,10 (lower is more urgent; negative values need root or CAP_SYS_NICE)")
			lanes := fs.String("lanes", "", "priority lanes MINPRIO:THREADS,…, e.g. 0:2,128:2: each lane its own pool and handle set, a connection served by the lane of its first request's priority (leave --threads unset)")
			laneSched := leaderfollowers.SchedAuto
			fs.TextVar(&laneSched, "lane-sched", leaderfollowers.SchedAuto, "with --lanes, how the higher lanes' threads get their priority: auto (SCHED_FIFO where permitted and bounded by RT throttling, else nice), fifo or nice")
			return func(cfg models.Config) (models.Server, error) {
				prios, err := leaderfollowers.ParsePriorities(*nice)
				if err != nil {
					return nil, err
				}
				ls, err := leaderfollowers.ParseLanes(*lanes)
				if err != nil {
					return nil, err
				}
				return leaderfollowers.Start(cfg, leaderfollowers.Options{Promotion: promotion, Priorities: prios, Lanes: ls, LaneSched: laneSched})
			}
		},
	},
	{
		name:    "halfsynchalfreactive",
		summary: "Half-Sync/Half-Reactive: one reactor thread on the handle set, a bounded monitor-object queue, --threads worker threads (default 4)",
		flags: func(fs *flag.FlagSet) startFunc {
			queue := fs.Int("hshr-queue-size", 0, fmt.Sprintf("capacity of the request queue between the reactor and the workers; 0 for %d, max %d",
				halfsynchalfreactive.DefaultQueueSize, halfsynchalfreactive.MaxQueueSize))
			pooled := fs.Bool("hshr-pooled", false, `recycle request objects through a free list (variant "pooled") instead of allocating one per request`)
			prio := fs.Bool("hshr-priority", false, `a priority request queue (variant "priority"): workers take the queued request with the highest priority first, the oldest among equals`)
			return func(cfg models.Config) (models.Server, error) {
				return halfsynchalfreactive.Start(cfg, halfsynchalfreactive.Options{QueueSize: *queue, Pooled: *pooled, Priority: *prio})
			}
		},
	},
	{
		name:    "activeobject",
		summary: "Active Object: I/O threads (--threads, default 1) decode requests and invoke a proxy; --ao-objects active objects (a scheduler thread, an activation queue and a ledger shard each; default 2) execute them; futures complete back to the I/O threads",
		flags: func(fs *flag.FlagSet) startFunc {
			objects := fs.Int("ao-objects", 0, fmt.Sprintf("active objects: scheduler threads, each with an activation queue and a shard of the ledger; 0 for %d", activeobject.DefaultObjects))
			queue := fs.Int("ao-queue-capacity", 0, fmt.Sprintf("method requests each activation queue holds before enqueuing blocks; 0 for %d", activeobject.DefaultQueueCapacity))
			inFlight := fs.Int("ao-max-in-flight", 0, fmt.Sprintf("requests one connection may have in flight; 0 for %d", activeobject.DefaultMaxInFlight))
			return func(cfg models.Config) (models.Server, error) {
				return activeobject.Start(cfg, activeobject.Options{Objects: *objects, QueueCapacity: *queue, MaxInFlight: *inFlight})
			}
		},
	},
	{
		name:    "proactor",
		summary: "Proactor on io_uring: a ring per dispatcher thread (SO_REUSEPORT listener, multishot accept, provided-buffer receives); --threads dispatchers (default: CPUs in the affinity mask)",
		flags: func(fs *flag.FlagSet) startFunc {
			recv := fs.String("proactor-recv", "", "receive mode: multishot, single, or empty for multishot where the kernel supports it")
			buffers := fs.Int("proactor-buffers", 0, "provided receive buffers per ring, a power of two (0: 1024)")
			bufSize := fs.Int("proactor-buffer-size", 0, "bytes per provided buffer (0: 4096)")
			entries := fs.Int("proactor-entries", 0, "submission queue entries per ring, a power of two (0: 512; the completion queue is 8x)")
			return func(cfg models.Config) (models.Server, error) {
				return proactor.Start(cfg, proactor.Options{Recv: *recv, Buffers: *buffers, BufferSize: *bufSize, Entries: *entries})
			}
		},
	},
	{
		name:    "threadperconn",
		summary: "one locked OS thread per connection, blocking I/O on raw sockets (--threads caps connection threads; default 1024)",
		flags: func(*flag.FlagSet) startFunc {
			return func(cfg models.Config) (models.Server, error) {
				return threadperconn.Start(cfg, threadperconn.Options{})
			}
		},
	},
	{
		name:    "netpoll",
		summary: "goroutine per connection over Go's net package and its netpoller (--threads ignored)",
		flags: func(*flag.FlagSet) startFunc {
			return func(cfg models.Config) (models.Server, error) { return netpoll.Start(cfg, netpoll.Options{}) }
		},
	},
	{
		name:     "frontend",
		summary:  "a front end forwarding to a back-end concbench server (--backend ADDR, serving --protocol binary) over --upstream-conns multiplexed connections; --handoff bound (the paper's bound Leader/Followers) | perthread (a connection per client thread) | queue (a reader thread per connection); a thread per client connection (--threads caps them, default 1024)",
		frontEnd: true,
		flags: func(fs *flag.FlagSet) startFunc {
			backend := fs.String("backend", "", "front end: the back end's address host:port (a concbench serve --protocol binary)")
			conns := fs.Int("upstream-conns", 0, fmt.Sprintf("front end: multiplexed connections to the back end (handoff bound, queue); 0 for %d", frontend.DefaultUpstreamConns))
			handoff := frontend.Bound
			fs.TextVar(&handoff, "handoff", frontend.Bound, "front end: how a response reaches its thread: bound, perthread or queue")
			return func(cfg models.Config) (models.Server, error) {
				return frontend.Start(cfg, frontend.Options{Backend: *backend, UpstreamConns: *conns, Handoff: handoff})
			}
		},
	},
}

func modelNames() []string {
	names := make([]string, len(modelTable))
	for i, m := range modelTable {
		names[i] = m.name
	}
	return names
}
