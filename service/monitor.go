package service

import (
	"time"

	"concbench/internal/futex"
)

// Monitor is the ledger as a monitor object: one Ledger of all accounts,
// guarded by a futex.Mutex, with a futex.Cond (funds) on which guarded
// withdrawals wait. It is safe for use by many threads at once. Its methods
// are the synchronized methods of the pattern: each holds the lock for its
// whole (short) critical section, so every operation is atomic with respect
// to every other, and Audit sees a consistent snapshot.
//
// The lock and condition are futex-based, not sync.Mutex/sync.Cond: callers
// are goroutines locked to OS threads, which sleep in the kernel on a futex
// with one context switch per hand-off, where sync primitives would go
// through the Go scheduler's locked-M hand-off (5–7 switches).
//
// A Monitor must not be copied (its futex words would be copied); create it
// with NewMonitor.
type Monitor struct {
	mu    futex.Mutex
	funds futex.Cond // signalled when a balance may have grown; L is &mu
	l     *Ledger    // guarded by mu

	// waiters counts the withdrawals sleeping on funds (for waiting);
	// guarded by mu.
	waiters int

	// waitHook, if set (by tests, before any concurrent use), is called
	// with mu held each time a withdrawal registers as a waiter.
	waitHook func()
}

// NewMonitor returns a monitor over accounts 0..accounts-1, each with
// balance initial. It panics where NewLedger does.
func NewMonitor(accounts uint32, initial int64) *Monitor {
	m := &Monitor{l: NewLedger(0, accounts, initial)}
	m.funds.L = &m.mu
	return m
}

// Owns reports whether account a exists. It takes no lock: the set of
// accounts never changes.
func (m *Monitor) Owns(a uint32) bool { return m.l.Owns(a) }

// Accounts returns how many accounts the ledger holds.
func (m *Monitor) Accounts() int { return m.l.Accounts() }

// Balance returns the balance of account a.
func (m *Monitor) Balance(a uint32) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.l.Balance(a)
}

// Deposit adds amt to account a and returns the new balance, waking the
// withdrawals that wait for funds, if any.
func (m *Monitor) Deposit(a uint32, amt int64) (int64, error) {
	m.mu.Lock()
	b, err := m.l.Deposit(a, amt)
	m.unlockAndNotify(err == nil)
	return b, err
}

// Transfer moves amt from account from to account to and returns from's new
// balance, waking the withdrawals that wait for funds, if any. A transfer
// from an account to itself is allowed and changes nothing (see
// Ledger.Transfer).
func (m *Monitor) Transfer(from, to uint32, amt int64) (int64, error) {
	m.mu.Lock()
	b, err := m.l.Transfer(from, to, amt)
	m.unlockAndNotify(err == nil && from != to)
	return b, err
}

// unlockAndNotify releases mu and, if grew is set (some balance
// increased), broadcasts funds (no system call when no withdrawal waits).
// The broadcast comes after the unlock, so woken waiters do not collide
// with a lock still held; futex.Cond loses no wake-up that way.
func (m *Monitor) unlockAndNotify(grew bool) {
	m.mu.Unlock()
	if grew {
		// Broadcast, not Signal: waiters wait on different accounts and
		// amounts, and only each can tell whether the change satisfies it.
		m.funds.Broadcast()
	}
}

// Withdraw takes amt from account a and returns the new balance. If the
// balance is insufficient it waits — the guarded method of the monitor
// object — until deposits or transfers make it sufficient, or until timeout
// has passed, then returns ErrTimeout. With timeout <= 0 it does not wait
// and returns ErrInsufficientFunds, as Ledger.Withdraw does. A missing
// account or a bad amount fails at once.
//
// The waiting thread sleeps in the kernel on the funds futex with the lock
// released. Every balance increase wakes all waiters to re-check (a
// broadcast); with many waiters on different accounts that is a thundering
// herd, accepted because waiting withdrawals are the exception in the
// workloads this suite runs.
func (m *Monitor) Withdraw(a uint32, amt int64, timeout time.Duration) (int64, error) {
	m.mu.Lock()
	b, err := m.l.Withdraw(a, amt)
	if err != ErrInsufficientFunds || timeout <= 0 {
		m.mu.Unlock()
		return b, err
	}
	deadline := time.Now().Add(timeout)
	m.waiters++
	if m.waitHook != nil {
		m.waitHook()
	}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			err = ErrTimeout
			break
		}
		m.funds.WaitTimeout(left) // returns with mu held, possibly spuriously
		if b, err = m.l.Withdraw(a, amt); err != ErrInsufficientFunds {
			break
		}
	}
	m.waiters--
	m.mu.Unlock()
	return b, err
}

// Total returns the sum of all balances, a consistent snapshot taken under
// the lock (O(accounts) while holding it).
func (m *Monitor) Total() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.l.Total()
}

// Flow returns the sums of all successful deposits and withdrawals.
func (m *Monitor) Flow() (deposited, withdrawn int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.l.Flow()
}

// ExpectedTotal returns what Total must be if money is conserved: accounts
// × initial + deposited − withdrawn.
func (m *Monitor) ExpectedTotal() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.l.ExpectedTotal()
}

// Audit checks the ledger's invariant (see Ledger.Audit) on a consistent
// snapshot: it is safe to call while other threads operate on the monitor.
func (m *Monitor) Audit() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.l.Audit(m.l.InitialTotal())
}

// waiting returns the number of withdrawals currently waiting for funds.
func (m *Monitor) waiting() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiters
}
