// Package serve runs one concurrency model as a TCP server (concbench
// serve): it pins and sizes the process, starts the model from the model
// table (models/registry) and answers the control channel on stdin and
// stdout until told to stop. The harness drives every server through it.
package serve
