package concbenchtest

import (
	"testing"

	"concbench/models"
	"concbench/models/netpoll"
	"concbench/service"
	"concbench/wire"
)

// Netpoll starts the netpoll model in-process, speaking protocol, as a
// load test's target, closed when the test ends; it returns its address.
func Netpoll(t testing.TB, protocol string) string {
	t.Helper()
	codec, err := wire.New(protocol, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{NsPerIter: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := netpoll.Start(models.Config{Addr: "127.0.0.1:0", Codec: codec, Service: svc}, netpoll.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr().String()
}
