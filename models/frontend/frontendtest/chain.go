// Package frontendtest starts a front end with a back end of its own for
// tests: the front end's package and the model table's conformance test
// (models/registry) both run the conformance suite on the pair.
package frontendtest

import (
	"concbench/models"
	"concbench/models/netpoll"
	"concbench/wire"
)

// Chain is a front end with the back end it forwards to, as one
// models.Server (the front end's): Close closes both, so that the suite's
// leak checks cover the pair.
type Chain struct {
	models.Server
	Backend models.Server
}

// Close closes the front end, then the back end.
func (c *Chain) Close() error {
	err := c.Server.Close()
	if berr := c.Backend.Close(); err == nil {
		err = berr
	}
	return err
}

// StartChain starts a netpoll back end serving the binary protocol with
// cfg's service and limits, then the front end that front starts given
// the back end's address; if the front end fails, the back end is closed.
func StartChain(cfg models.Config, front func(backend string) (models.Server, error)) (*Chain, error) {
	codec, err := wire.New("binary", cfg.Codec.Limits())
	if err != nil {
		return nil, err
	}
	back, err := netpoll.Start(models.Config{Addr: "127.0.0.1:0", Codec: codec, Service: cfg.Service}, netpoll.Options{})
	if err != nil {
		return nil, err
	}
	f, err := front(back.Addr().String())
	if err != nil {
		back.Close()
		return nil, err
	}
	return &Chain{Server: f, Backend: back}, nil
}
