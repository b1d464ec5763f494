// Package override applies a command line's choices over an experiment
// that a profile or a file gave: a field changes only if its flag was
// given, configurations are chosen by name or model. It is shared by the
// programs that start from a harness profile (bench, gate).
package override
