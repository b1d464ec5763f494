package activeobject

import (
	"os"
	"strings"
	"testing"

	"concbench/models"
	"concbench/service"
	"concbench/wire"
)

func TestStartRejectsBadSettings(t *testing.T) {
	tests := []struct {
		name string
		addr string
		opts Options
		want string
	}{
		{name: "objects-negative", opts: Options{Objects: -1}, want: "objects -1 out of range"},
		{name: "objects-too-many", opts: Options{Objects: MaxObjects + 1}, want: "out of range"},
		{name: "objects-over-accounts", opts: Options{Objects: 9}, want: "exceed the 8 ledger accounts"},
		{name: "queue", opts: Options{QueueCapacity: MaxQueueCapacity + 1}, want: "queue capacity"},
		{name: "in-flight", opts: Options{MaxInFlight: -2}, want: "max in flight"},
		{name: "listen", addr: "256.0.0.1:0", want: "listen"},
	}
	svc, err := service.New(service.Config{Accounts: 8, NsPerIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := wire.New("http", wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := tc.addr
			if addr == "" {
				addr = "127.0.0.1:0"
			}
			before := fds()
			srv, err := Start(models.Config{Addr: addr, Codec: codec, Service: svc}, tc.opts)
			if err == nil {
				srv.Close()
				t.Fatalf("Start accepted %+v on %s", tc.opts, addr)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if after := fds(); after != before {
				t.Errorf("a failed Start left %d descriptors open (%d before, %d after)", after-before, before, after)
			}
		})
	}
}
