package service

import (
	"errors"
	"fmt"
	"math"

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
	// ErrOverflow means the operation would take a balance above
	// math.MaxInt64.
	ErrOverflow = errors.New("service: balance would overflow")
)

// StatusOf returns the wire status for err, the outcome of a ledger
// operation: nil is StatusOK, each ledger error its own status, ErrBadAmount
// and ErrOverflow StatusBadRequest (an amount the ledger cannot take), and
// anything else StatusInternal (a server bug).
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
	case errors.Is(err, ErrBadAmount), errors.Is(err, ErrOverflow):
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
type Ledger struct {
	first        uint32
	bal          []int64
	initialTotal int64 // n × initial, recorded at construction
	deposited    int64
	withdrawn    int64
}

// NewLedger returns a ledger owning the accounts [first, first+n), each with
// balance initial. It panics if initial is negative, if the range does not
// fit in uint32 account ids, or if n × initial overflows int64: those are
// the caller's mistakes (Config.Validate keeps Service's ledger in range).
func NewLedger(first, n uint32, initial int64) *Ledger {
	if initial < 0 {
		panic(fmt.Sprintf("service: NewLedger: negative initial balance %d", initial))
	}
	if uint64(first)+uint64(n) > 1<<32 {
		panic(fmt.Sprintf("service: NewLedger: accounts [%d, %d+%d) exceed the uint32 id space", first, first, n))
	}
	if n > 0 && initial > math.MaxInt64/int64(n) {
		panic(fmt.Sprintf("service: NewLedger: %d accounts × %d overflows int64", n, initial))
	}
	l := &Ledger{first: first, bal: make([]int64, n), initialTotal: int64(n) * initial}
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

// Deposit adds amt to account a and returns the new balance.
func (l *Ledger) Deposit(a uint32, amt int64) (int64, error) {
	i, err := l.account(a, amt)
	if err != nil {
		return 0, err
	}
	if l.bal[i] > math.MaxInt64-amt {
		return 0, ErrOverflow
	}
	l.bal[i] += amt
	// The flow counters may wrap after a very long run with huge amounts;
	// Audit compares modulo 2^64 (Go's int64 arithmetic wraps), which
	// still detects any money created or lost.
	l.deposited += amt
	return l.bal[i], nil
}

// Withdraw takes amt from account a and returns the new balance. It never
// waits: if the balance is smaller than amt it returns ErrInsufficientFunds.
func (l *Ledger) Withdraw(a uint32, amt int64) (int64, error) {
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
// (it is the audit operation, O(accounts)).
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
