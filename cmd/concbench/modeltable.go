package main

import (
	"flag"

	"concbench/models"
	"concbench/models/netpoll"
	"concbench/models/threadperconn"
)

// startFunc starts a model with a common configuration.
type startFunc func(cfg models.Config) (models.Server, error)

// modelSpec is one row of the model table.
type modelSpec struct {
	name    string // the package name, used on the command line
	summary string
	// flags registers the model's own flags on fs and returns the function
	// that starts the model with their values (read when it is called).
	flags func(fs *flag.FlagSet) startFunc
}

// modelTable is every model the command can run, in the order reports list
// them. A model's name is its package name.
var modelTable = []modelSpec{
	{
		name:    "threadperconn",
		summary: "one locked OS thread per connection, blocking I/O on raw sockets (--threads caps connection threads; default 1024)",
		flags: func(*flag.FlagSet) startFunc {
			return func(cfg models.Config) (models.Server, error) {
				return threadperconn.Start(cfg, threadperconn.Options{})
			}
		},
	},
	{
		name:    "netpoll",
		summary: "goroutine per connection over Go's net package and its netpoller (--threads ignored)",
		flags: func(*flag.FlagSet) startFunc {
			return func(cfg models.Config) (models.Server, error) { return netpoll.Start(cfg, netpoll.Options{}) }
		},
	},
}

func modelNames() []string {
	names := make([]string, len(modelTable))
	for i, m := range modelTable {
		names[i] = m.name
	}
	return names
}
