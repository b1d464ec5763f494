package activeobject

import (
	"concbench/models/modeltest"
	"testing"
	"time"
)

// nopRequest is a method request that does nothing, for queue tests.
type nopRequest struct{ n int }

func (*nopRequest) Guard() bool { return true }
func (*nopRequest) Call()       {}
func (*nopRequest) Cancel()     {}

func TestActivationQueueBounded(t *testing.T) {
	q := NewActivationQueue(2)
	for i := range 2 {
		if err := q.Enqueue(&nopRequest{n: i}); err != nil {
			t.Fatal(err)
		}
	}
	third := make(chan error, 1)
	go func() { third <- q.Enqueue(&nopRequest{n: 2}) }()
	if !modeltest.Settle(func() bool { return q.stats().enqWaiting == 1 }) {
		t.Fatal("the third Enqueue did not block on a full queue")
	}
	// Taking the requests does not free their slots: they are charged
	// until they finish.
	mrs, open := q.take(nil, 0, time.Time{})
	if !open || len(mrs) != 2 || mrs[0].(*nopRequest).n != 0 || mrs[1].(*nopRequest).n != 1 {
		t.Fatalf("take: %v, open %v; want the two requests in arrival order", mrs, open)
	}
	select {
	case err := <-third:
		t.Fatalf("Enqueue returned (%v) while every slot was charged", err)
	default:
	}
	if q.Len() != 2 {
		t.Fatalf("Len %d with two requests taken but not finished, want 2", q.Len())
	}
	// Finishing them releases the slots: the blocked Enqueue completes, and
	// take, which returns the releases, hands over the third request.
	mrs, open = q.take(mrs[:0], 2, time.Time{})
	if err := within(t, "third Enqueue", third); err != nil {
		t.Fatal(err)
	}
	if !open || len(mrs) != 1 || mrs[0].(*nopRequest).n != 2 {
		t.Fatalf("take after release: %v, open %v; want the third request", mrs, open)
	}
	if st := q.stats(); st.highWater != 2 || st.blocked != 1 || st.handoffs != 3 {
		t.Errorf("stats %+v: want high water 2, 1 blocked, 3 hand-offs", st)
	}
}

func TestActivationQueueCloseWakes(t *testing.T) {
	q := NewActivationQueue(1)
	if err := q.Enqueue(&nopRequest{}); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() { blocked <- q.Enqueue(&nopRequest{}) }()
	if !modeltest.Settle(func() bool { return q.stats().enqWaiting == 1 }) {
		t.Fatal("Enqueue did not block on a full queue")
	}
	// Empty the queue (the slot stays charged), then wait for the next
	// request in another goroutine: both sleepers must wake on Close.
	if mrs, _ := q.take(nil, 0, time.Time{}); len(mrs) != 1 {
		t.Fatalf("take: %d requests, want 1", len(mrs))
	}
	taken := make(chan bool, 1)
	go func() {
		mrs, open := q.take(nil, 0, time.Time{})
		taken <- open || len(mrs) != 0
	}()
	if !modeltest.Settle(func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.schedWaiting }) {
		t.Fatal("take did not wait on an empty queue")
	}
	q.Close()
	if err := within(t, "blocked Enqueue", blocked); err != ErrClosed {
		t.Fatalf("blocked Enqueue after Close: %v, want %v", err, ErrClosed)
	}
	if within(t, "take", taken) {
		t.Fatal("take after Close reported an open queue or requests")
	}
	if err := q.Enqueue(&nopRequest{}); err != ErrClosed {
		t.Fatalf("Enqueue after Close: %v, want %v", err, ErrClosed)
	}
	if err := q.enqueueContinuation(&nopRequest{}); err != ErrClosed {
		t.Fatalf("continuation after Close: %v, want %v", err, ErrClosed)
	}
}

func TestActivationQueueTakeHonoursDeadline(t *testing.T) {
	q := NewActivationQueue(1)
	// No request will ever arrive: take must return at the deadline, open
	// and empty, instead of sleeping until a request comes.
	type result struct {
		n    int
		open bool
	}
	res := make(chan result, 1)
	go func() {
		mrs, open := q.take(nil, 0, time.Now().Add(time.Millisecond))
		res <- result{len(mrs), open}
	}()
	if r := within(t, "take with a deadline", res); !r.open || r.n != 0 {
		t.Fatalf("take with a deadline and no requests: %d requests, open %v", r.n, r.open)
	}
}

func TestContinuationNotCharged(t *testing.T) {
	q := NewActivationQueue(1)
	if err := q.Enqueue(&nopRequest{}); err != nil {
		t.Fatal(err)
	}
	// The queue is full, but a continuation never waits for a slot.
	if err := q.enqueueContinuation(&nopRequest{n: 1}); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 1 {
		t.Fatalf("Len %d after a continuation, want 1 (continuations are not charged)", q.Len())
	}
	if mrs, _ := q.take(nil, 0, time.Time{}); len(mrs) != 2 {
		t.Fatalf("take: %d requests, want 2", len(mrs))
	}
}
