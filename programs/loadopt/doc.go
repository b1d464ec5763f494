// Package loadopt says how bench and the gate generate their load: in
// this process, or through "concbench agent"s on other hosts, and where
// the server listens. Agents.Options turns the settings into the
// harness.Options a run takes.
package loadopt
