// Package models is the contract between the concurrency models and
// everything that drives them: a Server a model starts from a Config, and
// the Stats it reports.
//
// Each model lives in its own package under models/ and exports
//
//	func Start(cfg models.Config, opts Options) (*Server, error)
//
// where Options are the model's own settings (for example the promotion
// order of Leader/Followers). Start binds the listening socket, starts the
// model's threads and returns once the server accepts connections; Close
// stops it and returns when every thread it started has exited and every
// descriptor it opened is closed. The command cmd/concbench chooses models
// from an explicit table, not by registration.
//
// Every model must pass the conformance suite in models/modeltest under the
// race detector, for both wire protocols.
//
// Counting is shared: Counters holds one Shard per thread (or per
// connection, for models without a fixed thread pool), each written by one
// owner without locked instructions and summed only when Stats is called.
package models
