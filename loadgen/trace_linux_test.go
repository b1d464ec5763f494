package loadgen

import (
	"testing"
	"time"

	"concbench/internal/testenv"
)

// TestTrace checks that a run with Config.Trace keeps one record per
// measured request answered ok (or counts it as dropped), with distinct
// ids and times in order: intended ≤ recv, sent ≤ recv.
func TestTrace(t *testing.T) {
	testenv.EndToEnd(t)
	for _, tc := range []struct {
		name     string
		capacity int
		requests int64
	}{
		{name: "room", capacity: 1000, requests: 300},
		{name: "full", capacity: 100, requests: 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, "http", nil)
			r := mustRun(t, Config{Addr: s.addr(), Conns: 2, Rate: 3000, Requests: tc.requests,
				Warmup: 100 * time.Millisecond, Seed: 1, Trace: tc.capacity, Limits: Limits{MaxLagShare: 1, MaxBusy: 1, MaxRunQueue: 1, MaxSteal: 1, SendProcessAlpha: 1e-300}})
			if r.Trace == nil {
				t.Fatal("no trace")
			}
			if got := int64(len(r.Trace.Records)) + r.Trace.Dropped; got != r.Requests.OK {
				t.Fatalf("%d records + %d dropped, want %d (ok requests)", len(r.Trace.Records), r.Trace.Dropped, r.Requests.OK)
			}
			if len(r.Trace.Records) > tc.capacity {
				t.Fatalf("%d records, capacity %d", len(r.Trace.Records), tc.capacity)
			}
			seen := map[uint64]bool{}
			for _, rec := range r.Trace.Records {
				if seen[rec.ID] {
					t.Fatalf("id %d twice", rec.ID)
				}
				seen[rec.ID] = true
				if rec.SentNs > rec.RecvNs || rec.IntendedNs > rec.RecvNs {
					t.Fatalf("record out of order: %+v", rec)
				}
			}
		})
	}
}
