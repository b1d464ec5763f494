// Package gaterate measures the CI gate's error rates (concbench
// gaterate): it runs the gate (package programs/gate) until a campaign's
// folder holds the runs asked for, with or without an injected
// regression, and summarises their verdicts with Clopper–Pearson
// intervals; with no runs to add it recounts the stored ones.
package gaterate
