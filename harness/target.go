package harness

import (
	"concbench/models"
	"concbench/results"
)

// target is the server a point measures, as the runner drives it: a
// "concbench serve" process (server) or nginx (nginxServer). Both are a
// proc; they differ in how they are read at a window's edges.
type target interface {
	process() *proc
	// address is where the server listens; describe what it is, as a
	// concbench server answers "info".
	address() string
	describe() models.Info
	// pids are the processes whose costs are the server's (nginx: its
	// master and workers).
	pids() []int
	// read reads the server's counters in the form of a control-channel
	// snapshot, at a window's edge (e): its cumulative costs and the
	// per-thread stats.
	read(e edge) (*models.Snapshot, error)
	// amend finishes the cost over a window computed from the readings
	// (a foreign server's name, checks of what it reads itself) and
	// returns the point's warnings about it.
	amend(c *results.ServerCost) []string
	// stop ends the server (see server.stop); release frees what a
	// server that ended by itself still holds.
	stop() error
	release()
}

// edge is where a reading is taken: before the load connects (the
// connections accepted count from there), or at the measured window's
// start or end.
type edge int

const (
	edgeBegin edge = iota
	edgeStart
	edgeEnd
)

var _ target = (*server)(nil)

func (s *server) process() *proc        { return s.proc }
func (s *server) address() string       { return s.addr }
func (s *server) describe() models.Info { return s.info }
func (s *server) pids() []int           { return []int{s.pid} }
func (s *server) read(edge) (*models.Snapshot, error) {
	return s.snapshot()
}
func (s *server) amend(*results.ServerCost) []string { return nil }
func (s *server) release()                           { s.stdin.Close() }
