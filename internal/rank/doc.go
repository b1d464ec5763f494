// Package rank ranks samples for the rank statistics the project uses:
// the load generator's Spearman correlation of its send gaps
// (loadgen/selfcheck.go) and the gate's one-sided Mann–Whitney test
// (results.Greater).
package rank
