package queueing

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"concbench/results"
)

// TheoryConfig is a comparison's settings ("concbench theory"'s flags).
type TheoryConfig struct {
	// Servers is c, the servers (1..256).
	Servers int
	// Rhos are the utilizations λE[S]/c, each in (0, 1).
	Rhos []float64
	// Dists are the service-time distributions (results.ParseServiceDist),
	// each of mean Mean.
	Dists []string
	Mean  time.Duration
	// Overhead is a fixed per-request cost the shared queue pays on top of
	// the service, the partitioned ones not.
	Overhead time.Duration
	// Requests is the requests simulated per queue and cell, after as many
	// of warm-up (1000..10000000).
	Requests int
	Seed     uint64
}

// DefaultTheory returns the defaults of every setting.
func DefaultTheory() TheoryConfig {
	return TheoryConfig{Servers: 4, Rhos: []float64{0.3, 0.5, 0.7, 0.9}, Dists: []string{"const", "exp", "lognormal:1", "bimodal:0.99:200"},
		Mean: 100 * time.Microsecond, Requests: 500_000, Seed: 1}
}

// Theory compares, for each distribution and utilization of c, c servers
// sharing one queue (M/G/c) with c partitioned ones split at random and
// round-robin, simulated beside the closed forms, and prints the tables
// and the crossover lines to stdout.
func Theory(c TheoryConfig, stdout io.Writer) error {
	switch {
	case c.Servers < 1 || c.Servers > 256:
		return fmt.Errorf("theory: --servers %d out of range (accepted: 1..256)", c.Servers)
	case c.Requests < 1000 || c.Requests > 10_000_000:
		return fmt.Errorf("theory: --requests %d out of range (accepted: 1000..10000000)", c.Requests)
	case c.Mean <= 0 || c.Overhead < 0:
		return fmt.Errorf("theory: --mean %v or --overhead %v out of range (accepted: mean > 0, overhead ≥ 0)", c.Mean, c.Overhead)
	}
	for _, r := range c.Rhos {
		if !(r > 0 && r < 1) {
			return fmt.Errorf("theory: --rho %g out of range (accepted: each in (0, 1))", r)
		}
	}
	var ds []results.ServiceDist
	for _, spec := range c.Dists {
		d, err := results.ParseServiceDist(strings.TrimSpace(spec), float64(c.Mean))
		if err != nil {
			return fmt.Errorf("theory: --dist: %w", err)
		}
		ds = append(ds, d)
	}
	servers := c.Servers
	fmt.Fprintf(stdout, "theory: c = %d servers, mean service %v for every distribution; %d requests simulated per queue (seed %d); µs\n", servers, c.Mean, c.Requests, c.Seed)
	fmt.Fprintf(stdout, "shared: M/G/%d, one FCFS queue; random: %d × M/G/1 at λ/%d; round-robin: %d × E_%d/G/1; (closed form) where one exists, — where none does\n", servers, servers, servers, servers, servers)
	if c.Overhead > 0 {
		fmt.Fprintf(stdout, "the shared queue pays %v per request on top of the service (--overhead); the partitioned ones do not\n", c.Overhead)
	}
	for i, d := range ds {
		qs := make([]QueueComparison, len(c.Rhos))
		for j, r := range c.Rhos {
			qs[j] = CompareQueues(d, servers, r, float64(c.Overhead), c.Requests, c.Seed+uint64(1000*i+10*j))
		}
		printComparison(stdout, d, qs)
	}
	return nil
}

// printComparison prints one distribution's table and its crossover lines.
func printComparison(w io.Writer, d results.ServiceDist, qs []QueueComparison) {
	fmt.Fprintf(w, "\n%s (SCV %.2f)\n", d, d.Moments().SCV())
	fmt.Fprintf(w, "%5s | %-32s | %-32s | %-32s | %-13s | %s\n", "ρ", "shared p50 / p99", "random p50 / p99", "round-robin p50 / p99", "random÷shared", "round-robin÷shared")
	for _, q := range qs {
		fmt.Fprintf(w, "%5.2f | %-32s | %-32s | %-32s | %-13s | %s\n", q.Rho,
			percentiles(q.Shared, q.SharedForm), percentiles(q.Random, q.RandomForm), percentiles(q.RoundRobin, q.RoundRobinForm),
			ratios(q.Random, q.Shared), ratios(q.RoundRobin, q.Shared))
	}
	for _, split := range []struct {
		name string
		of   func(QueueComparison) results.Theory
	}{
		{"random", func(q QueueComparison) results.Theory { return q.Random }},
		{"round-robin", func(q QueueComparison) results.Theory { return q.RoundRobin }},
	} {
		var line []string
		for _, stat := range []struct {
			name string
			of   func(results.Theory) float64
		}{{"p50", func(t results.Theory) float64 { return t.P50Ns }}, {"p99", func(t results.Theory) float64 { return t.P99Ns }}} {
			var rho, ratio []float64
			for _, q := range qs {
				if p, s := split.of(q), q.Shared; p.Stable && s.Stable && stat.of(s) > 0 {
					rho, ratio = append(rho, q.Rho), append(ratio, stat.of(p)/stat.of(s))
				}
			}
			line = append(line, stat.name+": "+crossover(rho, ratio))
		}
		fmt.Fprintf(w, "  %s ÷ shared: %s\n", split.name, strings.Join(line, "; "))
	}
}

// percentiles formats a simulated queue's p50 and p99 with the closed
// form's in parentheses ("—" where there is none).
func percentiles(sim, form results.Theory) string {
	if !sim.Stable {
		return "unstable"
	}
	us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }
	f := func(ns float64) string {
		if !form.Stable || ns == 0 {
			return "—"
		}
		return us(ns)
	}
	return fmt.Sprintf("%s (%s) / %s (%s)", us(sim.P50Ns), f(form.P50Ns), us(sim.P99Ns), f(form.P99Ns))
}

// ratios formats p ÷ s at p50 and p99.
func ratios(p, s results.Theory) string {
	if !p.Stable || !s.Stable || s.P50Ns == 0 || s.P99Ns == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f / %.2f", p.P50Ns/s.P50Ns, p.P99Ns/s.P99Ns)
}

// crossover says whether the ratios (partitioned ÷ shared, at increasing
// utilizations rho) cross 1: which side wins at every ρ, or between which
// utilizations the winner changes. A ratio within ±2% of 1 is a tie (the
// simulation's precision), neither side.
func crossover(rho, ratio []float64) string {
	const tie = 0.02
	side := func(r float64) int {
		switch {
		case r > 1+tie:
			return 1 // shared wins
		case r < 1-tie:
			return -1 // partitioned wins
		}
		return 0
	}
	if len(ratio) == 0 {
		return "no stable point"
	}
	var crossings []string
	last := -1 // the index of the last ratio on a side
	seen := map[int]bool{}
	for i, r := range ratio {
		s := side(r)
		seen[s] = true
		if s == 0 {
			continue
		}
		if last >= 0 && side(ratio[last]) != s {
			winner := map[int]string{1: "shared", -1: "partitioned"}[s]
			crossings = append(crossings, fmt.Sprintf("crossover between ρ %g and %g (%s wins above)", rho[last], rho[i], winner))
		}
		last = i
	}
	switch {
	case len(crossings) > 0:
		return strings.Join(crossings, ", ")
	case seen[1] && !seen[-1] && !seen[0]:
		return "shared wins at every ρ, no crossover"
	case seen[-1] && !seen[1] && !seen[0]:
		return "partitioned wins at every ρ, no crossover"
	case seen[1]:
		return "shared wins or ties at every ρ, no crossover"
	case seen[-1]:
		return "partitioned wins or ties at every ρ, no crossover"
	}
	return "within ±2% at every ρ, no crossover"
}
