package service

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"concbench/wire"
)

// The ledger's errors. They are returned as is, never wrapped, so the error
// path of a request does not allocate; StatusOf maps them onto wire statuses.
var (
	// ErrNoAccount means an account of the operation is not in the ledger
	// (for a shard: not owned by it).
	ErrNoAccount = errors.New("service: no such account")
	// ErrInsufficientFunds means a withdrawal or transfer would overdraw
	// the source account.
	ErrInsufficientFunds = errors.New("service: insufficient funds")
	// ErrTimeout means a guarded withdrawal (Monitor.Withdraw) waited its
	// whole timeout without the balance becoming sufficient.
	ErrTimeout = errors.New("service: timed out waiting for funds")
	// ErrBadAmount means the amount is not positive.
	ErrBadAmount = errors.New("service: amount must be positive")
	// ErrOverflow means a deposit would take the ledger's money (its
	// Supply) above math.MaxInt64, or an operation would take a balance
	// above it.
	ErrOverflow = errors.New("service: the ledger's money would exceed its limit (math.MaxInt64)")
)

// StatusOf returns the wire status for err, the outcome of a ledger
// operation: nil is StatusOK, each ledger error its own status (ErrOverflow
// StatusOverflow), ErrBadAmount StatusBadRequest (an amount the codecs
// already refuse), and anything else StatusInternal (a server bug).
func StatusOf(err error) wire.Status {
	switch {
	case err == nil:
		return wire.StatusOK
	case errors.Is(err, ErrNoAccount):
		return wire.StatusNoAccount
	case errors.Is(err, ErrInsufficientFunds):
		return wire.StatusInsufficientFunds
	case errors.Is(err, ErrTimeout):
		return wire.StatusTimeout
	case errors.Is(err, ErrOverflow):
		return wire.StatusOverflow
	case errors.Is(err, ErrBadAmount):
		return wire.StatusBadRequest
	}
	return wire.StatusInternal
}

// Ledger is the unsynchronized servant: the balances of the accounts
// [first, first+n), with no locking at all. It is not safe for concurrent
// use: exactly one thread touches it, which is what the Active Object model
// guarantees its servant (each scheduler thread may own one shard). Monitor
// wraps a Ledger for use from many threads.
//
// Every operation validates fully before it changes anything: an operation
// that returns an error leaves the ledger as it was. Errors are checked in
// the order ErrNoAccount, ErrBadAmount, ErrInsufficientFunds, ErrOverflow.
//
// Invariant (checked by Audit): no balance is negative, and the sum of the
// balances equals the initial total plus everything deposited minus
// everything withdrawn. Transfers move money inside the ledger and do not
// count as flow.
//
// The ledger's money is bounded (see Supply): a deposit that would take it
// above math.MaxInt64 fails with ErrOverflow, so no sum of balances — of
// one ledger, or of all the shards that share a Supply — can wrap.
type Ledger struct {
	first        uint32
	bal          []int64
	initialTotal int64   // n × initial, recorded at construction
	deposited    int64   // Deposit and Credit; may wrap (Audit is exact modulo 2^64)
	withdrawn    int64   // Withdraw and Debit; may wrap likewise
	supply       *Supply // the money bound; nil: none (tests of the overflow paths)
}

// Supply is the money in a ledger, or in the shards of one ledger that
// share it: the initial balances plus every deposit minus every withdrawal.
// Deposits reserve their amount in it before they change a balance and fail
// with ErrOverflow if it would exceed math.MaxInt64; withdrawals give theirs
// back. Because every balance, and every amount in flight between shards,
// is a non-negative part of it, no sum of them can exceed math.MaxInt64:
// the audit total (/total) is exact and never wraps.
//
// A Supply is safe for concurrent use (the Active Object's shards run on
// different threads): it is one atomic word, touched only by deposits and
// withdrawals. Near the limit, a deposit that is refused elsewhere after
// its reservation briefly holds room that another deposit could have used;
// that deposit is refused too (ErrOverflow), never accepted beyond the
// bound.
type Supply struct {
	money atomic.Int64
}

// NewSupply returns a Supply holding initial, the ledger's initial money
// (accounts × initial balance). It panics if initial is negative.
func NewSupply(initial int64) *Supply {
	if initial < 0 {
		panic(fmt.Sprintf("service: NewSupply: negative initial money %d", initial))
	}
	s := &Supply{}
	s.money.Store(initial)
	return s
}

// Total returns the money the ledger holds now: what its balances, and the
// money in flight between its shards, sum to.
func (s *Supply) Total() int64 { return s.money.Load() }

// reserve adds amt (> 0) unless the total would exceed math.MaxInt64, and
// reports whether it did.
func (s *Supply) reserve(amt int64) bool {
	for {
		cur := s.money.Load()
		if cur > math.MaxInt64-amt {
			return false
		}
		if s.money.CompareAndSwap(cur, cur+amt) {
			return true
		}
	}
}

// release takes amt back out: a withdrawal, or a deposit that failed after
// its reservation.
func (s *Supply) release(amt int64) { s.money.Add(-amt) }

// NewLedger returns a ledger owning the accounts [first, first+n), each with
// balance initial, with a Supply of its own. It panics if initial is
// negative, if the range does not fit in uint32 account ids, or if n ×
// initial overflows int64: those are the caller's mistakes (Config.Validate
// keeps Service's ledger in range).
func NewLedger(first, n uint32, initial int64) *Ledger {
	l := NewShard(first, n, initial, nil)
	l.supply = NewSupply(l.initialTotal)
	return l
}

// NewShard returns a ledger owning the accounts [first, first+n), each with
// balance initial, as one shard of a ledger whose money is supply: the
// caller creates one Supply holding every shard's initial money and passes
// it to each. Money moves between shards with Debit and Credit, which leave
// the Supply alone. A nil supply bounds nothing (each balance still stays
// ≤ math.MaxInt64, but sums may wrap): it exists for tests of the paths
// that handle an overflowing balance. It panics where NewLedger does.
func NewShard(first, n uint32, initial int64, supply *Supply) *Ledger {
	if initial < 0 {
		panic(fmt.Sprintf("service: NewLedger: negative initial balance %d", initial))
	}
	if uint64(first)+uint64(n) > 1<<32 {
		panic(fmt.Sprintf("service: NewLedger: accounts [%d, %d+%d) exceed the uint32 id space", first, first, n))
	}
	if n > 0 && initial > math.MaxInt64/int64(n) {
		panic(fmt.Sprintf("service: NewLedger: %d accounts × %d overflows int64", n, initial))
	}
	l := &Ledger{first: first, bal: make([]int64, n), initialTotal: int64(n) * initial, supply: supply}
	for i := range l.bal {
		l.bal[i] = initial
	}
	return l
}

// Owns reports whether account a is one of the ledger's accounts.
func (l *Ledger) Owns(a uint32) bool {
	return a >= l.first && uint64(a-l.first) < uint64(len(l.bal))
}

// Accounts returns how many accounts the ledger holds.
func (l *Ledger) Accounts() int { return len(l.bal) }

// slot returns the index of account a in l.bal, or false if l does not own a.
func (l *Ledger) slot(a uint32) (int, bool) {
	if !l.Owns(a) {
		return 0, false
	}
	return int(a - l.first), true
}

// Balance returns the balance of account a.
func (l *Ledger) Balance(a uint32) (int64, error) {
	i, ok := l.slot(a)
	if !ok {
		return 0, ErrNoAccount
	}
	return l.bal[i], nil
}

// account validates an operation on account a with amount amt, in the
// documented error order, and returns a's index in l.bal.
func (l *Ledger) account(a uint32, amt int64) (int, error) {
	i, ok := l.slot(a)
	switch {
	case !ok:
		return 0, ErrNoAccount
	case amt <= 0:
		return 0, ErrBadAmount
	}
	return i, nil
}

// Deposit adds amt to account a and returns the new balance. It fails with
// ErrOverflow if the ledger's money would exceed math.MaxInt64.
func (l *Ledger) Deposit(a uint32, amt int64) (int64, error) {
	i, err := l.account(a, amt)
	if err != nil {
		return 0, err
	}
	if l.bal[i] > math.MaxInt64-amt || (l.supply != nil && !l.supply.reserve(amt)) {
		return 0, ErrOverflow
	}
	l.credit(i, amt)
	return l.bal[i], nil
}

// Credit adds amt, money that left another shard of the same Supply
// (Debit), to account a and returns the new balance. The money is the
// ledger's already, so Credit reserves nothing: it cannot fail with
// ErrOverflow when the shards share a Supply (the balance and the amount
// are parts of it), and it fails with ErrOverflow, changing nothing, only
// without one.
func (l *Ledger) Credit(a uint32, amt int64) (int64, error) {
	i, err := l.account(a, amt)
	if err != nil {
		return 0, err
	}
	if l.bal[i] > math.MaxInt64-amt {
		return 0, ErrOverflow
	}
	l.credit(i, amt)
	return l.bal[i], nil
}

// credit adds amt to the account at index i and counts it as flow in.
func (l *Ledger) credit(i int, amt int64) {
	l.bal[i] += amt
	// The flow counters may wrap after a very long run with huge amounts;
	// Audit compares modulo 2^64 (Go's int64 arithmetic wraps), which
	// still detects any money created or lost.
	l.deposited += amt
}

// Withdraw takes amt from account a and returns the new balance. It never
// waits: if the balance is smaller than amt it returns ErrInsufficientFunds.
func (l *Ledger) Withdraw(a uint32, amt int64) (int64, error) {
	v, err := l.Debit(a, amt)
	if err == nil && l.supply != nil {
		l.supply.release(amt)
	}
	return v, err
}

// Debit takes amt from account a, as Withdraw does, for money that moves to
// another shard of the same Supply (Credit): the money stays the ledger's,
// so the Supply keeps it.
func (l *Ledger) Debit(a uint32, amt int64) (int64, error) {
	i, err := l.account(a, amt)
	if err != nil {
		return 0, err
	}
	if l.bal[i] < amt {
		return 0, ErrInsufficientFunds
	}
	l.bal[i] -= amt
	l.withdrawn += amt
	return l.bal[i], nil
}

// Transfer moves amt from account from to account to, both of which the
// ledger must own, and returns from's new balance.
//
// A transfer from an account to itself is allowed and changes nothing, but
// it is validated like any other (the account exists, amt > 0, the balance
// covers amt), so that whether a transfer succeeds never depends on whether
// a randomly chosen pair happens to coincide. A load generator drawing from
// and to independently draws such pairs; rejecting them would turn an
// ordinary request into an error response.
func (l *Ledger) Transfer(from, to uint32, amt int64) (int64, error) {
	j, ok := l.slot(to)
	if !ok {
		return 0, ErrNoAccount
	}
	i, err := l.account(from, amt)
	switch {
	case err != nil:
		return 0, err
	case l.bal[i] < amt:
		return 0, ErrInsufficientFunds
	case i != j && l.bal[j] > math.MaxInt64-amt:
		return 0, ErrOverflow
	}
	if i != j {
		l.bal[i] -= amt
		l.bal[j] += amt
	}
	return l.bal[i], nil
}

// Total returns the sum of all balances, computed afresh by summing them
// (it is the audit operation, O(accounts)). With a Supply the sum, and every
// partial sum, is at most math.MaxInt64: it cannot wrap.
func (l *Ledger) Total() int64 {
	var sum int64
	for _, b := range l.bal {
		sum += b
	}
	return sum
}

// Flow returns the sums of all successful deposits and withdrawals: the
// money that entered and left the ledger.
func (l *Ledger) Flow() (deposited, withdrawn int64) { return l.deposited, l.withdrawn }

// InitialTotal returns the money the ledger started with: accounts × initial.
func (l *Ledger) InitialTotal() int64 { return l.initialTotal }

// ExpectedTotal returns what Total must be if money is conserved: the
// initial total plus deposits minus withdrawals.
func (l *Ledger) ExpectedTotal() int64 { return l.initialTotal + l.deposited - l.withdrawn }

// Audit checks the ledger's invariant against initialTotal, the money the
// caller put in (normally accounts × initial, the caller's own record rather
// than the ledger's): the sum of the balances equals initialTotal +
// deposited − withdrawn, and no balance is negative. The error names the
// first discrepancy found.
func (l *Ledger) Audit(initialTotal int64) error {
	for i, b := range l.bal {
		if b < 0 {
			return fmt.Errorf("service: audit: account %d has negative balance %d", l.first+uint32(i), b)
		}
	}
	total := l.Total()
	want := initialTotal + l.deposited - l.withdrawn
	if total != want {
		return fmt.Errorf("service: audit: money not conserved: balances sum to %d, want %d "+
			"(initial %d + deposited %d - withdrawn %d); %d created",
			total, want, initialTotal, l.deposited, l.withdrawn, total-want)
	}
	return nil
}
