// Package serveproc runs "concbench serve" as a child process for the
// measurement scripts, with its control channel: the address it printed,
// snapshots, and waiting for a condition on them; and reads the scripts'
// configurations ("label=serve flags").
package serveproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"concbench/models"
)

// Server is a running concbench serve.
type Server struct {
	Addr   string // the address it listens on
	cmd    *exec.Cmd
	ctl    io.WriteCloser
	lines  *bufio.Scanner
	stderr *strings.Builder
}

// Start runs bin serve pinned to cpus, speaking HTTP, with flags, and
// waits for the address it prints first.
func Start(bin, cpus string, flags []string) (*Server, error) {
	s := &Server{cmd: exec.Command(bin, append([]string{"serve", "--cpus", cpus, "--protocol", "http"}, flags...)...), stderr: new(strings.Builder)}
	var err error
	if s.ctl, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.lines = bufio.NewScanner(out)
	s.lines.Buffer(make([]byte, 1<<20), 16<<20)
	if !s.lines.Scan() {
		s.Stop()
		return nil, fmt.Errorf("server printed no address: %s", strings.TrimSpace(s.stderr.String()))
	}
	s.Addr = s.lines.Text()
	return s, nil
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop asks the server to quit and waits for it.
func (s *Server) Stop() {
	io.WriteString(s.ctl, "quit\n")
	s.ctl.Close()
	s.cmd.Wait()
}

// Snap takes a snapshot through the control channel (without per-task
// sums: they cost the server about 50 µs per thread).
func (s *Server) Snap() (models.Snapshot, error) {
	var sn models.Snapshot
	if _, err := io.WriteString(s.ctl, "snapshot\n"); err != nil {
		return sn, err
	}
	if !s.lines.Scan() {
		return sn, fmt.Errorf("no snapshot: %s", strings.TrimSpace(s.stderr.String()))
	}
	return sn, json.Unmarshal(s.lines.Bytes(), &sn)
}

// WaitFor polls the server's snapshot every 100 ms until cond holds, or
// fails after limit, naming what it waited for.
func (s *Server) WaitFor(limit time.Duration, what string, cond func(models.Snapshot) bool) (models.Snapshot, error) {
	deadline := time.Now().Add(limit)
	for {
		sn, err := s.Snap()
		if err != nil || cond(sn) {
			return sn, err
		}
		if time.Now().After(deadline) {
			return sn, fmt.Errorf("waited %v for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Config is one server configuration a script measures: a label and the
// serve flags, as given on its command line ("label=serve flags").
type Config struct {
	Label string
	Flags []string
}

// ParseConfigs reads configurations given as "label=serve flags"; at
// least one is required.
func ParseConfigs(args []string) ([]Config, error) {
	var cfgs []Config
	for _, a := range args {
		label, flags, ok := strings.Cut(a, "=")
		if !ok || label == "" {
			return nil, fmt.Errorf("configuration %q: want label=serve flags", a)
		}
		cfgs = append(cfgs, Config{Label: label, Flags: strings.Fields(flags)})
	}
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("name at least one configuration (label=serve flags)")
	}
	return cfgs, nil
}

// Costs is what a server spent per request between two of its
// snapshots.
type Costs struct {
	Requests uint64  // requests completed between the snapshots
	CPUNs    float64 // CPU time (user + system), ns per request
	Ctxsw    float64 // context switches (voluntary + involuntary) per request
}

// CostsBetween returns the costs per request from snapshot a to the later
// snapshot z; it fails if the server completed no request in between.
func CostsBetween(a, z models.Snapshot) (Costs, error) {
	n := z.Stats.Requests - a.Stats.Requests
	if n == 0 {
		return Costs{}, fmt.Errorf("the server completed no request between the snapshots")
	}
	return Costs{
		Requests: n,
		CPUNs:    float64(z.Rusage.UserNs+z.Rusage.SystemNs-a.Rusage.UserNs-a.Rusage.SystemNs) / float64(n),
		Ctxsw:    float64(z.Rusage.Voluntary+z.Rusage.Involuntary-a.Rusage.Voluntary-a.Rusage.Involuntary) / float64(n),
	}, nil
}
