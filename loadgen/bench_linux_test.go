package loadgen

import (
	"fmt"
	"testing"
)

// BenchmarkRoundTrip drives the in-process test server in closed loop
// through a worker's own event loop: with conns=1 an op is one full round
// trip (mix, encode, write, epoll, read, decode, verify, record); with
// more connections the ops overlap and ns/op is the inverse throughput.
// The test server does not allocate, so allocs/op is the generator's; it
// must be 0 (steady state: setup and warm-up run before the timer).
func BenchmarkRoundTrip(b *testing.B) {
	for _, proto := range protocols {
		for _, conns := range []int{1, 16} {
			b.Run(fmt.Sprintf("protocol=%s/conns=%d", proto, conns), func(b *testing.B) {
				s := startServer(b, proto, nil)
				w := newTestWorker(b, Config{Addr: s.addr(), Protocol: proto, Conns: conns, Closed: true, Requests: 1, Size: Fixed(64)})
				run := func(n int) {
					w.quota = w.issued + int64(n)
					w.sending = true
					for _, c := range w.conns {
						w.fill(c, w.clock())
					}
					w.loop(true)
				}
				run(1000) // warm
				w.corrected.h.Reset()
				b.ReportAllocs()
				b.ResetTimer()
				run(b.N)
				b.StopTimer()
				b.ReportMetric(float64(w.corrected.h.ValueAtQuantile(99)), "p99-ns")
			})
		}
	}
}
