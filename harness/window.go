package harness

import (
	"errors"

	"concbench/internal/cpuset"
	"concbench/internal/ktrace"
	"concbench/loadgen"
	"concbench/results"
)

// windowEdges is what a point reads of the server at the edges of its
// measured window (loadgen.Config.OnWindow): at each edge the run-queue
// waits, the perf counters and the server's snapshot, in mirrored
// order, so that the snapshots' interval lies within the others'; after
// the end, the server's threads and descriptors (readProc).
type windowEdges struct {
	w               window
	ps              *ktrace.PerfSet // nil when perf is unavailable (perfUnavailable says why)
	perfUnavailable string
	perf0, perf1    results.PerfCounters
	ctlErr, perfErr error
	// ms are a mechanisms point's counters (nil for the other kinds, and
	// when the kernel refused them: mechUnavailable says why).
	ms              *ktrace.MechSet
	mechUnavailable string
	mech0, mech1    ktrace.MechSample
	mechErr         error
}

// watchWindow opens the perf counters on srv — and, for a mechanisms
// point, its tracepoint counters —, reads it before the load connects
// (the begin of the connections it accepts), and sets lc.OnWindow to
// read the edges of point p's window.
func (r *runner) watchWindow(lc *loadgen.Config, p *results.Point, srv target) *windowEdges {
	r.waitMechanisms() // the last mechanisms point's counters are closed before any point's load
	e := &windowEdges{}
	pids := srv.pids()
	e.ps, e.perfUnavailable = ktrace.OpenPerf(pids...)
	if p.Kind == results.KindMechanisms {
		e.ms, e.mechUnavailable = ktrace.OpenMechanisms(pids, srv.describe().CPUs)
	}
	e.w.begin, e.ctlErr = srv.read(edgeBegin)
	cpus, _ := cpuset.Parse(srv.describe().CPUs) // empty (every CPU) if unknown
	lc.OnWindow = func(start bool) {
		var err, perr, merr error
		if start {
			e.w.readSteal(cpus, true)
			e.w.startRunQueue(pids...)
			if e.ps != nil {
				e.perf0, perr = e.ps.Read()
			}
			if e.ms != nil {
				e.mech0, merr = e.ms.Read(true)
			}
			e.w.before, err = srv.read(edgeStart)
			if r.opt.onWindow != nil {
				r.opt.onWindow(p, pids[0])
			}
		} else {
			e.w.after, err = srv.read(edgeEnd)
			if e.ms != nil {
				e.mech1, merr = e.ms.Read(false)
			}
			if e.ps != nil {
				e.perf1, perr = e.ps.Read()
			}
			e.w.endRunQueue(pids...)
			e.w.readSteal(cpus, false)
			e.w.readProc(pids...)
		}
		e.ctlErr = errors.Join(e.ctlErr, err)
		e.perfErr = errors.Join(e.perfErr, perr)
		e.mechErr = errors.Join(e.mechErr, merr)
	}
	return e
}

// finish closes the perf counters and returns the window read, with the
// counters' differences or why there are none; a mechanisms point's
// counters are the caller's to close (runner.closeMechanisms).
func (e *windowEdges) finish() *window {
	var read bool
	if e.w.perfUnavailable, read = countersUnavailable(e.ps != nil, e.perfUnavailable, e.perfErr); read {
		e.w.perf = &results.PerfCounters{
			ContextSwitches: e.perf1.ContextSwitches - min(e.perf0.ContextSwitches, e.perf1.ContextSwitches),
			CPUMigrations:   e.perf1.CPUMigrations - min(e.perf0.CPUMigrations, e.perf1.CPUMigrations),
			TaskClockNs:     e.perf1.TaskClockNs - min(e.perf0.TaskClockNs, e.perf1.TaskClockNs),
		}
	}
	if e.ps != nil {
		e.ps.Close()
	}
	if e.w.mechUnavailable, read = countersUnavailable(e.ms != nil, e.mechUnavailable, e.mechErr); read {
		e.w.mechanisms = e.ms.Counts(e.mech0, e.mech1)
	}
	return &e.w
}

// countersUnavailable says why a window has no counters of one kind:
// why, when they were not opened, or the error in reading them at an
// edge; read is true when they were opened and read at both edges. The
// perf counters and a mechanisms point's tracepoint counters end by
// this one rule.
func countersUnavailable(opened bool, why string, err error) (_ string, read bool) {
	switch {
	case !opened:
		return why, false
	case err != nil:
		return err.Error(), false
	}
	return "", true
}

// closeMechanisms closes a mechanisms point's counters on a goroutine of
// its own, so that the kernel's waits in closing them (mechPlan's note:
// an RCU grace period per tracepoint) overlap the server's stop and the
// next one's start, which no window measures; waitMechanisms waits for
// it before any point's load starts, and at the run's end.
func (r *runner) closeMechanisms(ms *ktrace.MechSet) {
	r.waitMechanisms()
	done := make(chan struct{})
	r.closing = done
	go func() {
		defer close(done)
		ms.Close()
	}()
}

// waitMechanisms waits until the last mechanisms point's counters are
// closed: until then every system call of the machine is slowed.
func (r *runner) waitMechanisms() {
	if r.closing != nil {
		<-r.closing
		r.closing = nil
	}
}
