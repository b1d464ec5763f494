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

// checkErrContains checks that err, what call returned, is nil if want is
// empty and otherwise an error containing want: the validation tests all
// state the error they expect so.
func checkErrContains(t *testing.T, call string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s = %v, want nil", call, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s = %v, want an error containing %q", call, err, want)
	}
}

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
			// The ledger's money (400) plus the deposit would pass the
			// limit, although the account alone would not.
			name:    "deposit/overflow-supply",
			op:      func(l *Ledger) (int64, error) { return l.Deposit(12, math.MaxInt64-399) },
			wantErr: ErrOverflow,
		},
		{
			name:    "deposit/overflow-balance",
			op:      func(l *Ledger) (int64, error) { return l.Deposit(12, math.MaxInt64-99) },
			wantErr: ErrOverflow,
		},
		{
			name:  "deposit/to-limit",
			op:    func(l *Ledger) (int64, error) { return l.Deposit(12, math.MaxInt64-400) },
			want:  math.MaxInt64 - 300,
			after: []int64{100, 100, math.MaxInt64 - 300, 100},
			flow:  [2]int64{math.MaxInt64 - 400, 0},
		},
		{
			name: "deposit/at-limit",
			op: func(l *Ledger) (int64, error) {
				if _, err := l.Deposit(12, math.MaxInt64-400); err != nil {
					return 0, err
				}
				return l.Deposit(10, 1)
			},
			wantErr: ErrOverflow,
			after:   []int64{100, 100, math.MaxInt64 - 300, 100},
			flow:    [2]int64{math.MaxInt64 - 400, 0},
		},
		{
			// Credit is money from another shard of the same Supply: it
			// reserves nothing, so only the balance bounds it.
			name:  "credit",
			op:    func(l *Ledger) (int64, error) { return l.Credit(12, math.MaxInt64-100) },
			want:  math.MaxInt64,
			after: []int64{100, 100, math.MaxInt64, 100},
			flow:  [2]int64{math.MaxInt64 - 100, 0},
		},
		{name: "credit/overflow", op: func(l *Ledger) (int64, error) { return l.Credit(12, math.MaxInt64-99) }, wantErr: ErrOverflow},
		{name: "credit/no-account", op: func(l *Ledger) (int64, error) { return l.Credit(9, 1) }, wantErr: ErrNoAccount},
		{
			name:  "debit",
			op:    func(l *Ledger) (int64, error) { return l.Debit(13, 40) },
			want:  60,
			after: []int64{100, 100, 100, 60},
			flow:  [2]int64{0, 40},
		},
		{name: "debit/insufficient", op: func(l *Ledger) (int64, error) { return l.Debit(13, 101) }, wantErr: ErrInsufficientFunds},
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
			checkErrContains(t, "Audit", l.Audit(tt.initial), tt.want)
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
		{err: ErrOverflow, want: wire.StatusOverflow},
		{err: fmt.Errorf("shard 3: %w", ErrNoAccount), want: wire.StatusNoAccount},
		{err: errors.New("something else"), want: wire.StatusInternal},
		{err: errUnhandledOp, want: wire.StatusInternal},
	} {
		if got := StatusOf(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestSupply: deposits reserve room in the ledger's money and withdrawals
// give it back; Credit and Debit (money moving between shards) leave it
// alone; shards that share a Supply are bounded together, so the sum of
// their balances never wraps.
func TestSupply(t *testing.T) {
	s := NewSupply(300)
	a := NewShard(0, 2, 100, s) // accounts 0, 1
	b := NewShard(2, 1, 100, s) // account 2
	sum := func() int64 { return a.Total() + b.Total() }
	if _, err := a.Deposit(0, math.MaxInt64-300); err != nil {
		t.Fatal(err)
	}
	if got := s.Total(); got != math.MaxInt64 {
		t.Fatalf("Supply.Total() = %d, want %d", got, int64(math.MaxInt64))
	}
	if _, err := b.Deposit(2, 1); err != ErrOverflow {
		t.Fatalf("deposit on the other shard at the limit: %v, want %v", err, ErrOverflow)
	}
	// A transfer between the shards: Debit on one, Credit on the other.
	if _, err := a.Debit(0, math.MaxInt64-300); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Credit(2, math.MaxInt64-300); err != nil {
		t.Fatal(err)
	}
	if got := sum(); got != math.MaxInt64 || s.Total() != math.MaxInt64 {
		t.Fatalf("after the transfer: balances sum to %d, supply %d; want both %d", got, s.Total(), int64(math.MaxInt64))
	}
	if _, err := b.Withdraw(2, 50); err != nil {
		t.Fatal(err)
	}
	if got := s.Total(); got != math.MaxInt64-50 {
		t.Fatalf("after a withdrawal of 50: supply %d, want %d", got, int64(math.MaxInt64-50))
	}
	if _, err := a.Deposit(1, 50); err != nil {
		t.Fatalf("deposit into the room the withdrawal made: %v", err)
	}
	if _, err := a.Deposit(1, 1); err != ErrOverflow {
		t.Fatalf("deposit past the limit: %v, want %v", err, ErrOverflow)
	}
	if got := sum(); got != math.MaxInt64 {
		t.Fatalf("balances sum to %d, want %d", got, int64(math.MaxInt64))
	}
	// Each shard's own audit holds: Debit and Credit are its flow.
	for name, l := range map[string]*Ledger{"a": a, "b": b} {
		if err := l.Audit(l.InitialTotal()); err != nil {
			t.Errorf("shard %s: %v", name, err)
		}
	}
}

// TestLedgerTotalAtTheLimit: a ledger of many accounts cannot be pushed
// past math.MaxInt64 through deposits, each of which fits its account, so
// Total stays exact and non-negative.
func TestLedgerTotalAtTheLimit(t *testing.T) {
	l := NewLedger(0, 8, 1000)
	per := int64(math.MaxInt64 / 4) // four of these fit one balance each, not the ledger
	accepted := 0
	for a := range uint32(8) {
		if _, err := l.Deposit(a, per); err == nil {
			accepted++
		} else if err != ErrOverflow {
			t.Fatalf("deposit %d: %v", a, err)
		}
	}
	if accepted != 3 {
		t.Errorf("%d deposits of MaxInt64/4 accepted on top of 8000, want 3", accepted)
	}
	if got, want := l.Total(), 8000+3*per; got != want || got < 0 {
		t.Errorf("Total() = %d, want %d", got, want)
	}
	if err := l.Audit(8000); err != nil {
		t.Error(err)
	}
}
