package activeobject

import (
	"fmt"
	"runtime"
	"testing"

	"concbench/internal/sysstat"
	"concbench/models/modeltest"
	"concbench/service"
)

// BenchmarkProxy measures the active object's own round trip, without the
// network: the benchmark goroutine, locked to its OS thread like an I/O
// thread, invokes the proxy (enqueue, waking the scheduler thread if it
// sleeps), the scheduler dispatches the method request to the servant and
// completes the future, and the client wakes from the future. depth is how
// many invocations are in flight before the client waits (1: one hand-off
// each way per request; more: the scheduler takes batches). ctxsw/op counts
// the whole process's context switches (getrusage) per request.
//
// op=work is the OpWork method with no work: the pure cost of the
// hand-offs. op=transfer moves money between accounts of different objects:
// two method requests and a hand-off between schedulers per transfer.
func BenchmarkProxy(b *testing.B) {
	for _, op := range []string{"work", "transfer"} {
		for _, depth := range []int{1, 16} {
			b.Run(fmt.Sprintf("op=%s/depth=%d", op, depth), func(b *testing.B) {
				benchProxy(b, op, depth)
			})
		}
	}
}

func benchProxy(b *testing.B, op string, depth int) {
	const accounts = 64
	cfg := modeltest.Config(b, "binary", 0, service.Config{Accounts: accounts, NsPerIter: 1})
	p := modeltest.Start(b, func() (*Server, error) { return Start(cfg, Options{Objects: 2}) }).Proxy()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	fs := make([]*Future, depth)
	invoke := func(i int) *Future {
		if op == "work" {
			return p.Work(0, 0)
		}
		// Account i%32 of object 0 and its partner of object 1, back and
		// forth so that no balance runs out.
		a, c := uint32(i%(accounts/2)), uint32(accounts/2+i%(accounts/2))
		if i/(accounts/2)%2 == 1 {
			a, c = c, a
		}
		return p.Transfer(a, c, 1)
	}
	b.ReportAllocs()
	r0, err := sysstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += depth {
		n := min(depth, b.N-i)
		for k := range n {
			fs[k] = invoke(i + k)
		}
		for k := range n {
			fs[k].Wait()
			if fs[k].Err() != nil {
				b.Fatal(fs[k].Err())
			}
		}
	}
	b.StopTimer()
	r1, err := sysstat.Self()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(r1.Voluntary+r1.Involuntary-r0.Voluntary-r0.Involuntary)/float64(b.N), "ctxsw/op")
}
