package activeobject

import (
	"os"
	"strings"
	"testing"

	"concbench/models/modeltest"
	"concbench/service"
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
	cfg := modeltest.Config(t, "http", 0, service.Config{Accounts: 8, NsPerIter: 1})
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			if tc.addr != "" {
				cfg.Addr = tc.addr
			}
			before := fds()
			srv, err := Start(cfg, tc.opts)
			if err == nil {
				srv.Close()
				t.Fatalf("Start accepted %+v on %s", tc.opts, cfg.Addr)
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
