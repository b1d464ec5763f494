package results

import (
	"testing"

	"concbench/loadgen"
)

// TestJoin decomposes a synthetic single-server trace whose parts are
// known: request 1 finds the server idle, request 2 arrives during 1's
// service, request 3 after 2's, and request 9 has no server record; the
// server also served a warm-up request (5) the generator did not measure,
// which request 1 queues behind.
func TestJoin(t *testing.T) {
	gen := []loadgen.TraceRecord{
		{ID: 1, IntendedNs: 1000, SentNs: 1002, RecvNs: 1130},
		{ID: 2, IntendedNs: 1050, SentNs: 1050, RecvNs: 1230},
		{ID: 3, IntendedNs: 2000, SentNs: 2001, RecvNs: 2140},
		{ID: 9, IntendedNs: 3000, SentNs: 3000, RecvNs: 3100},
	}
	srv := []ServiceRecord{
		{ID: 3, StartNs: 2030, EndNs: 2120},
		{ID: 2, StartNs: 1115, EndNs: 1210},
		{ID: 1, StartNs: 1020, EndNs: 1110},
		{ID: 5, StartNs: 900, EndNs: 1010},
	}
	want := []struct {
		name string
		p    Parts
	}{
		{name: "behind warm-up", p: Parts{GenLag: 2, Queue: 8, Dispatch: 10, Service: 90, Return: 20}},
		{name: "queued", p: Parts{GenLag: 0, Queue: 60, Dispatch: 5, Service: 95, Return: 20}},
		{name: "idle", p: Parts{GenLag: 1, Dispatch: 29, Service: 90, Return: 20, Idle: true}},
	}
	parts, unmatched := Join(gen, srv)
	if unmatched != 1 || len(parts) != len(want) {
		t.Fatalf("%d parts, %d unmatched; want %d and 1", len(parts), unmatched, len(want))
	}
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			if parts[i] != w.p {
				t.Errorf("parts %+v, want %+v", parts[i], w.p)
			}
			if got, total := parts[i].Sum(), gen[i].RecvNs-gen[i].IntendedNs; got != total {
				t.Errorf("sum %d, want R − I = %d", got, total)
			}
		})
	}
	d := Decompose(parts, unmatched)
	if d.Requests != 3 || d.Unmatched != 1 || d.Negative != 0 || d.IdleShare != 1.0/3 || d.IdleDispatch != 29 || d.BusyDispatch != 7.5 {
		t.Errorf("decomposition %+v", d)
	}
	if sum := d.GenLag + d.Queue + d.Dispatch + d.Service + d.Return; !near(sum, d.Total, 1e-12) {
		t.Errorf("means sum to %v, total %v", sum, d.Total)
	}
}
