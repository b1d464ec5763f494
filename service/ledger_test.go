package service

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"concbench/wire"
)

// balances returns a copy of l's balances.
func balances(l *Ledger) []int64 { return slices.Clone(l.bal) }

func TestLedgerOps(t *testing.T) {
	// Every case runs on a fresh shard of accounts 10..13 holding 100 each.
	const first, n, initial = 10, 4, 100
	tests := []struct {
		name    string
		op      func(l *Ledger) (int64, error)
		want    int64
		wantErr error
		after   []int64 // balances afterwards; nil: unchanged
		flow    [2]int64
	}{
		{name: "balance", op: func(l *Ledger) (int64, error) { return l.Balance(11) }, want: 100},
		{name: "balance/below-shard", op: func(l *Ledger) (int64, error) { return l.Balance(9) }, wantErr: ErrNoAccount},
		{name: "balance/above-shard", op: func(l *Ledger) (int64, error) { return l.Balance(14) }, wantErr: ErrNoAccount},
		{
			name:  "deposit",
			op:    func(l *Ledger) (int64, error) { return l.Deposit(12, 25) },
			want:  125,
			after: []int64{100, 100, 125, 100},
			flow:  [2]int64{25, 0},
		},
		{name: "deposit/zero", op: func(l *Ledger) (int64, error) { return l.Deposit(12, 0) }, wantErr: ErrBadAmount},
		{name: "deposit/negative", op: func(l *Ledger) (int64, error) { return l.Deposit(12, -5) }, wantErr: ErrBadAmount},
		{name: "deposit/no-account", op: func(l *Ledger) (int64, error) { return l.Deposit(3, 5) }, wantErr: ErrNoAccount},
		{
			name:    "deposit/overflow",
			op:      func(l *Ledger) (int64, error) { return l.Deposit(12, math.MaxInt64-99) },
			wantErr: ErrOverflow,
		},
		{
			name:  "deposit/to-max",
			op:    func(l *Ledger) (int64, error) { return l.Deposit(12, math.MaxInt64-100) },
			want:  math.MaxInt64,
			after: []int64{100, 100, math.MaxInt64, 100},
			flow:  [2]int64{math.MaxInt64 - 100, 0},
		},
		{
			name:  "withdraw",
			op:    func(l *Ledger) (int64, error) { return l.Withdraw(13, 40) },
			want:  60,
			after: []int64{100, 100, 100, 60},
			flow:  [2]int64{0, 40},
		},
		{
			name:  "withdraw/all",
			op:    func(l *Ledger) (int64, error) { return l.Withdraw(10, 100) },
			want:  0,
			after: []int64{0, 100, 100, 100},
			flow:  [2]int64{0, 100},
		},
		{name: "withdraw/insufficient", op: func(l *Ledger) (int64, error) { return l.Withdraw(10, 101) }, wantErr: ErrInsufficientFunds},
		{name: "withdraw/zero", op: func(l *Ledger) (int64, error) { return l.Withdraw(10, 0) }, wantErr: ErrBadAmount},
		{name: "withdraw/no-account", op: func(l *Ledger) (int64, error) { return l.Withdraw(14, 1) }, wantErr: ErrNoAccount},
		{
			name:  "transfer",
			op:    func(l *Ledger) (int64, error) { return l.Transfer(10, 13, 30) },
			want:  70,
			after: []int64{70, 100, 100, 130},
		},
		{
			name:  "transfer/self",
			op:    func(l *Ledger) (int64, error) { return l.Transfer(11, 11, 30) },
			want:  100,
			after: []int64{100, 100, 100, 100},
		},
		{name: "transfer/self-insufficient", op: func(l *Ledger) (int64, error) { return l.Transfer(11, 11, 101) }, wantErr: ErrInsufficientFunds},
		{name: "transfer/insufficient", op: func(l *Ledger) (int64, error) { return l.Transfer(10, 11, 101) }, wantErr: ErrInsufficientFunds},
		{name: "transfer/bad-amount", op: func(l *Ledger) (int64, error) { return l.Transfer(10, 11, -1) }, wantErr: ErrBadAmount},
		{name: "transfer/from-not-owned", op: func(l *Ledger) (int64, error) { return l.Transfer(0, 11, 1) }, wantErr: ErrNoAccount},
		{name: "transfer/to-not-owned", op: func(l *Ledger) (int64, error) { return l.Transfer(10, 14, 1) }, wantErr: ErrNoAccount},
		{
			name: "transfer/overflow",
			op: func(l *Ledger) (int64, error) {
				l.bal[1] = math.MaxInt64 - 10 // set up directly, outside the flow
				l.initialTotal += math.MaxInt64 - 110
				return l.Transfer(10, 11, 11)
			},
			wantErr: ErrOverflow,
			after:   []int64{100, math.MaxInt64 - 10, 100, 100},
		},
		{name: "total", op: func(l *Ledger) (int64, error) { return l.Total(), nil }, want: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(first, n, initial)
			got, err := tt.op(l)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("result = %d, want %d", got, tt.want)
			}
			want := tt.after
			if want == nil {
				want = []int64{initial, initial, initial, initial}
			}
			if b := balances(l); !slices.Equal(b, want) {
				t.Errorf("balances = %v, want %v", b, want)
			}
			if d, w := l.Flow(); d != tt.flow[0] || w != tt.flow[1] {
				t.Errorf("Flow() = %d, %d, want %d, %d", d, w, tt.flow[0], tt.flow[1])
			}
			if err := l.Audit(l.InitialTotal()); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestLedgerShard(t *testing.T) {
	l := NewLedger(100, 10, 5)
	if got := l.Accounts(); got != 10 {
		t.Errorf("Accounts() = %d, want 10", got)
	}
	for _, tt := range []struct {
		a    uint32
		owns bool
	}{
		{a: 0, owns: false},
		{a: 99, owns: false},
		{a: 100, owns: true},
		{a: 105, owns: true},
		{a: 109, owns: true},
		{a: 110, owns: false},
		{a: math.MaxUint32, owns: false},
	} {
		if got := l.Owns(tt.a); got != tt.owns {
			t.Errorf("Owns(%d) = %v, want %v", tt.a, got, tt.owns)
		}
		if _, err := l.Balance(tt.a); (err == nil) != tt.owns {
			t.Errorf("Balance(%d) err = %v, owns = %v", tt.a, err, tt.owns)
		}
	}
	if got, want := l.InitialTotal(), int64(50); got != want {
		t.Errorf("InitialTotal() = %d, want %d", got, want)
	}

	// A shard at the top of the id space, and an empty one.
	top := NewLedger(math.MaxUint32-1, 2, 1)
	if !top.Owns(math.MaxUint32) || !top.Owns(math.MaxUint32-1) || top.Owns(0) {
		t.Error("top shard ownership wrong")
	}
	empty := NewLedger(7, 0, 1)
	if empty.Owns(7) || empty.Total() != 0 || empty.Audit(0) != nil {
		t.Error("empty shard is not empty")
	}
}

func TestNewLedgerPanics(t *testing.T) {
	for _, tt := range []struct {
		name     string
		first, n uint32
		initial  int64
	}{
		{name: "negative-initial", first: 0, n: 1, initial: -1},
		{name: "id-overflow", first: math.MaxUint32, n: 2, initial: 0},
		{name: "total-overflow", first: 0, n: 4, initial: math.MaxInt64 / 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewLedger(%d, %d, %d) did not panic", tt.first, tt.n, tt.initial)
				}
			}()
			NewLedger(tt.first, tt.n, tt.initial)
		})
	}
}

func TestLedgerAuditDetects(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(l *Ledger)
		initial int64 // passed to Audit
		want    string
	}{
		{name: "clean", corrupt: func(*Ledger) {}, initial: 30},
		{name: "money-created", corrupt: func(l *Ledger) { l.bal[1] += 7 }, initial: 30, want: "7 created"},
		{name: "money-lost", corrupt: func(l *Ledger) { l.bal[2] -= 3 }, initial: 30, want: "-3 created"},
		{name: "unrecorded-deposit", corrupt: func(l *Ledger) { l.deposited += 5 }, initial: 30, want: "want 35"},
		{name: "wrong-initial", corrupt: func(*Ledger) {}, initial: 31, want: "balances sum to 30, want 31"},
		{
			name:    "negative",
			corrupt: func(l *Ledger) { l.bal[0] -= 11; l.bal[1] += 11 },
			initial: 30,
			want:    "account 5 has negative balance -1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(5, 3, 10)
			tt.corrupt(l)
			err := l.Audit(tt.initial)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Audit = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Audit = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want wire.Status
	}{
		{err: nil, want: wire.StatusOK},
		{err: ErrNoAccount, want: wire.StatusNoAccount},
		{err: ErrInsufficientFunds, want: wire.StatusInsufficientFunds},
		{err: ErrTimeout, want: wire.StatusTimeout},
		{err: ErrBadAmount, want: wire.StatusBadRequest},
		{err: ErrOverflow, want: wire.StatusBadRequest},
		{err: fmt.Errorf("shard 3: %w", ErrNoAccount), want: wire.StatusNoAccount},
		{err: errors.New("something else"), want: wire.StatusInternal},
		{err: errUnhandledOp, want: wire.StatusInternal},
	} {
		if got := StatusOf(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
