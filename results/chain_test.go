package results

import (
	"slices"
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

// TestJoinThreads decomposes a two-thread trace: request 2 arrives while
// thread 7 serves request 1, and thread 8 is idle and takes it at once —
// it waited behind nobody, whatever thread 7 was doing; request 3 waits
// for thread 8, which served 2. SplitOf gives the threads in send order.
func TestJoinThreads(t *testing.T) {
	gen := []loadgen.TraceRecord{
		{ID: 1, IntendedNs: 1000, SentNs: 1000, RecvNs: 1200},
		{ID: 3, IntendedNs: 1060, SentNs: 1060, RecvNs: 1300},
		{ID: 2, IntendedNs: 1050, SentNs: 1050, RecvNs: 1250},
	}
	srv := []ServiceRecord{
		{ID: 1, StartNs: 1010, EndNs: 1190, Thread: 7},
		{ID: 2, StartNs: 1070, EndNs: 1240, Thread: 8},
		{ID: 3, StartNs: 1250, EndNs: 1290, Thread: 8},
	}
	want := []Parts{
		{Dispatch: 10, Service: 180, Return: 10, Idle: true},
		{Queue: 180, Dispatch: 10, Service: 40, Return: 10},
		{Dispatch: 20, Service: 170, Return: 10, Idle: true},
	}
	parts, unmatched := Join(gen, srv)
	if unmatched != 0 || len(parts) != len(want) {
		t.Fatalf("%d parts, %d unmatched", len(parts), unmatched)
	}
	for i := range want {
		if parts[i] != want[i] {
			t.Errorf("request %d: parts %+v, want %+v", gen[i].ID, parts[i], want[i])
		}
	}
	if got := SplitOf(gen, srv); !slices.Equal(got, []int{0, 1, 1}) {
		t.Errorf("split %v, want [0 1 1] (thread 7, then 8 twice, in send order)", got)
	}
}
