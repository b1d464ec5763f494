package harness

import (
	"fmt"
	"strings"
	"time"

	"concbench/results"
)

// The mechanisms point's defaults (Experiment.Mechanisms,
// MechanismsWarmup, MechanismsDuration): the suite profiles measure one
// in the first repetition only — system calls per request are a
// mechanism of the model, nearly the same in every repetition —, after
// the shortest warm-up the load generator accepts (the server is warm
// from the equal-load point just before it on the same process) and a
// window of a few thousand requests at the suite's equal loads.
const (
	DefaultMechanisms         = 1
	DefaultMechanismsWarmup   = 100 * time.Millisecond
	DefaultMechanismsDuration = 300 * time.Millisecond
)

// mechanismsNote is a mechanisms point's progress note: its counts per
// request, or why it has none.
func mechanismsNote(p *results.Point) string {
	if p.Status != results.StatusOK {
		return ""
	}
	c := &p.Server
	m := c.Mechanisms
	if m == nil {
		return "not counted: " + c.MechanismsUnavailable
	}
	if c.Requests == 0 {
		return "no request completed in the window"
	}
	per := func(v uint64) float64 { return float64(v) / float64(c.Requests) }
	var kinds []string
	for _, k := range results.SyscallKindNames() {
		if v := m.Syscalls[k]; v > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %.2f", k, per(v)))
		}
	}
	ipis := fmt.Sprintf("%.2f wake IPIs/req", per(m.WakeIPIs))
	if m.WakeIPIsUnavailable != "" {
		ipis = "wake IPIs " + m.WakeIPIsUnavailable
	}
	return fmt.Sprintf("%.2f syscalls/req (%s), %.2f futex wakes/req, %s", per(m.Total), strings.Join(kinds, ", "), per(m.FutexWakes), ipis)
}
