// Package serverconf starts the servers that the measuring programs
// which compare server configurations (soak, priority, hostile) run:
// a configuration given as "label=serve flags", started as "concbench
// serve" pinned to CPUs through the harness's driver (harness.StartServer),
// and the few helpers those programs share around it. It measures
// nothing itself; docs/usage.md describes the commands that use it.
package serverconf
