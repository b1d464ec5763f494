// Package gate runs the CI performance-regression gate (concbench gate):
// it builds the base and the current tree (package gate/build), measures
// both in one job with the harness's gate profile, or takes a run folder
// measured before, and has package gate judge them; the report and the
// exit status (0 pass, 1 regression, 2 undecided) follow the judgement.
package gate
