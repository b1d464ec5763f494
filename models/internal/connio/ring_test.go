package connio

import (
	"math"
	"strconv"
	"testing"

	"concbench/models"
	"concbench/models/modeltest"
	"concbench/wire"
)

// TestRingAdmission drives the one admission rule: the bound on requests
// in flight, the output bound counting reservations and pending output,
// and the response that may overshoot it.
func TestRingAdmission(t *testing.T) {
	const limit, maxOut = 4, 1000
	tests := []struct {
		name     string
		push     []int // reservations put in flight, in order
		pops     int   // then the oldest this many are popped
		drops    int   // and this many of the rest dropped
		pending  int64 // output pending
		want     bool
		inflight int64
	}{
		{name: "idle", want: true},
		{name: "idle-output-at-bound", pending: maxOut, want: false},
		{name: "one-oversized", push: []int{5000}, want: false, inflight: 1},
		{name: "reserved-below-bound", push: []int{300, 300}, pending: 399, want: true, inflight: 2},
		{name: "reserved-reaches-bound", push: []int{300, 300}, pending: 400, want: false, inflight: 2},
		{name: "count-bound", push: []int{1, 1, 1, 1}, want: false, inflight: limit},
		{name: "popped-frees", push: []int{1, 1, 1, 1}, pops: 1, want: true, inflight: limit - 1},
		{name: "dropped-frees", push: []int{600, 600}, drops: 1, want: true, inflight: 1},
		{name: "drained", push: []int{5000, 1, 1}, pops: 3, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Ring[*int]
			r.Init(limit, maxOut)
			for i, res := range tc.push {
				seq, n := r.Push(res)
				if seq != uint64(i) || n != int64(i+1) {
					t.Fatalf("push %d: seq %d, %d in flight", i, seq, n)
				}
			}
			for i := range tc.pops {
				if r.Next() != uint64(i) {
					t.Fatalf("pop %d: next due %d", i, r.Next())
				}
				r.Pop(tc.push[i])
			}
			for i := range tc.drops {
				r.Drop(tc.push[tc.pops+i])
			}
			if got := r.Admits(tc.pending); got != tc.want || r.InFlight() != tc.inflight {
				t.Fatalf("admits %v with %d in flight; want %v with %d", got, r.InFlight(), tc.want, tc.inflight)
			}
		})
	}
}

// TestRingSlotsBySequence: a sequence number's slot is its own while it is
// in flight, and the slots wrap around.
func TestRingSlotsBySequence(t *testing.T) {
	var r Ring[int]
	r.Init(3, 1<<20)
	for i := range 10 {
		seq, _ := r.Push(1)
		*r.Slot(seq) = i
		if i >= 2 {
			due := r.Next()
			if *r.Slot(due) != int(due) {
				t.Fatalf("slot of %d holds %d", due, *r.Slot(due))
			}
			r.Pop(1)
		}
	}
	n := 0
	r.Each(func(*int) { n++ })
	if n != 3 || r.InFlight() != 2 || r.Next() != 8 {
		t.Fatalf("%d slots, %d in flight, next due %d; want 3, 2, 8", n, r.InFlight(), r.Next())
	}
}

// TestReserve: a request reserves the body it asks for and the response
// overhead; other operations the overhead alone.
func TestReserve(t *testing.T) {
	tests := []struct {
		name string
		req  wire.Request
		want int
	}{
		{name: "work", req: wire.Request{Op: wire.OpWork, Size: 1000}, want: 1000 + models.ResponseOverhead},
		{name: "work-empty", req: wire.Request{Op: wire.OpWork}, want: models.ResponseOverhead},
		{name: "ledger", req: wire.Request{Op: wire.OpBalance, Size: 1000}, want: models.ResponseOverhead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reserve(&tc.req); got != tc.want {
				t.Fatalf("Reserve = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestResponseOverheadCoversHeads: every response besides an OpWork body
// fits models.ResponseOverhead in both protocols — at every status (a
// ledger error's body is empty), with the largest id and Connection:
// close, the longest ledger result, and the head of an inline or
// streamed body — so the reservations of requests in flight are never
// short. (The error response to a request that failed to decode carries
// a line of text and may exceed it; it is the connection's last.)
func TestResponseOverheadCoversHeads(t *testing.T) {
	result := strconv.AppendInt(nil, math.MinInt64, 10)
	for _, proto := range wire.Protocols {
		codec := modeltest.Codec(t, proto, wire.Limits{})
		longest := 0
		for st := range wire.Status(32) {
			for _, resp := range []wire.Response{
				{ID: math.MaxUint64, Status: st, Close: true, Payload: result},
				{ID: math.MaxUint64, Status: st, Close: true},
				{ID: math.MaxUint64, Status: st, Close: true, Pattern: wire.DefaultMaxPayload},
			} {
				n := len(codec.AppendResponseHead(nil, &resp))
				if resp.Pattern == 0 {
					n = len(codec.AppendResponse(nil, &resp))
				}
				longest = max(longest, n)
			}
			body := make([]byte, wire.MaxInlineBody)
			if n := len(codec.AppendResponse(nil, &wire.Response{ID: math.MaxUint64, Status: st, Close: true, Payload: body})) - len(body); n > models.ResponseOverhead {
				t.Errorf("%s, status %v: an inline body's response adds %d bytes, over the %d reserved", proto, st, n, models.ResponseOverhead)
			}
		}
		if longest > models.ResponseOverhead {
			t.Errorf("%s: a response of %d bytes besides its body, over the %d reserved", proto, longest, models.ResponseOverhead)
		}
		t.Logf("%s: longest response besides its body %d bytes (reserved %d)", proto, longest, models.ResponseOverhead)
	}
}
