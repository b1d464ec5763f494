package acceptmutex

import (
	"testing"
	"time"
)

// TestBegin drives a Mutex worker's round through each case of the rule:
// a worker short of slots sits out without trying the lock; otherwise it
// tries once, the winner adds the listener unless it has it, the loser
// removes it if it had it and bounds its wait.
func TestBegin(t *testing.T) {
	tests := []struct {
		name      string
		before    acceptState
		free      bool // the lock is free
		want      decision
		after     acceptState
		wantTries int
	}{
		{name: "sits-out-short-of-slots", before: acceptState{disabled: 2}, free: true,
			want: decision{}, after: acceptState{disabled: 1}},
		{name: "sits-out-keeping-the-listener", before: acceptState{disabled: 1, held: true}, free: true,
			want: decision{}, after: acceptState{held: true}},
		{name: "wins-adds", free: true, wantTries: 1,
			want: decision{tried: true, locked: true, add: true}, after: acceptState{held: true}},
		{name: "wins-again-keeps", before: acceptState{held: true}, free: true, wantTries: 1,
			want: decision{tried: true, locked: true}, after: acceptState{held: true}},
		{name: "wins-when-disabled-ran-out", before: acceptState{disabled: 0}, free: true, wantTries: 1,
			want: decision{tried: true, locked: true, add: true}, after: acceptState{held: true}},
		{name: "loses-removes", before: acceptState{held: true}, wantTries: 1,
			want: decision{tried: true, remove: true, capped: true}, after: acceptState{}},
		{name: "loses-without-listener", wantTries: 1,
			want: decision{tried: true, capped: true}, after: acceptState{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.before
			tries := 0
			got := a.begin(func() bool { tries++; return tc.free })
			if got != tc.want || a != tc.after || tries != tc.wantTries {
				t.Errorf("begin: %+v, state %+v, %d tries; want %+v, %+v, %d", got, a, tries, tc.want, tc.after, tc.wantTries)
			}
		})
	}
}

// TestDisabledAfter checks nginx's ngx_accept_disabled: positive exactly
// when under an eighth of the slots are free.
func TestDisabledAfter(t *testing.T) {
	for _, tc := range []struct{ slots, free, want int }{
		{slots: 512, free: 64, want: 0},
		{slots: 512, free: 63, want: 1},
		{slots: 512, free: 0, want: 64},
		{slots: 512, free: 512, want: -448},
		{slots: 8, free: 0, want: 1},
		{slots: 7, free: 0, want: 0}, // fewer than 8 slots: an eighth is none
	} {
		if got := disabledAfter(tc.slots, tc.free); got != tc.want {
			t.Errorf("disabledAfter(%d, %d) = %d, want %d", tc.slots, tc.free, got, tc.want)
		}
	}
}

// TestAcceptMutex: the try-lock takes a free lock only, fails at once
// when another worker holds it, and only the holder's unlock frees it.
func TestAcceptMutex(t *testing.T) {
	var m acceptMutex
	if m.holder() != -1 || !m.tryLock(0) || m.holder() != 0 {
		t.Fatalf("a free lock: holder %d after tryLock(0)", m.holder())
	}
	done := make(chan bool)
	go func() { done <- m.tryLock(1) }() // returns, never waits
	if <-done {
		t.Fatal("worker 1 took the lock worker 0 holds")
	}
	m.unlock(1)
	if m.holder() != 0 {
		t.Fatalf("worker 1's unlock freed worker 0's lock: holder %d", m.holder())
	}
	m.unlock(0)
	if m.holder() != -1 || !m.tryLock(1) {
		t.Fatal("the lock was not free after its holder's unlock")
	}
}

// TestOptions checks the defaults, the range checks and the mode's names.
func TestOptions(t *testing.T) {
	o, err := Options{}.withDefaults()
	if err != nil || o.Accept != Exclusive || o.AcceptDelay != DefaultAcceptDelay || o.WorkerConns != DefaultWorkerConns {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	if v := o.variant(); v != "accept=exclusive multi_accept=off worker_conns=512" {
		t.Errorf("variant %q", v)
	}
	o = Options{Accept: Mutex, MultiAccept: true, AcceptDelay: 5 * time.Millisecond}
	if o, _ = o.withDefaults(); o.variant() != "accept=mutex multi_accept=on worker_conns=512 accept_delay=5ms" {
		t.Errorf("variant %q", o.variant())
	}
	for _, bad := range []Options{{Accept: 3}, {AcceptDelay: -1}, {WorkerConns: -1}, {WorkerConns: MaxWorkerConns + 1}} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	for _, m := range []Mode{Exclusive, Mutex, ReusePort} {
		var back Mode
		if err := back.UnmarshalText([]byte(m.String())); err != nil || back != m {
			t.Errorf("mode %v: parsed back as %v, %v", m, back, err)
		}
	}
	if _, err := ParseMode("herd"); err == nil {
		t.Error("unknown mode parsed")
	}
}
