// Package bench runs an experiment (concbench bench): a harness profile or
// an experiment file with the command line's fields over it, or the
// thesis profile's parts in turn, or an interrupted run resumed; then the
// measurement chain's short validation, the figures and the report.
package bench
