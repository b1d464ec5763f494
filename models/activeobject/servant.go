package activeobject

import (
	"math"

	"concbench/service"
)

// servant is the pattern's servant: the unsynchronized service.Ledger of one
// active object's shard of the accounts, plus the bookkeeping of the money
// its transfers send to and receive from other shards. It has no lock: only
// its scheduler's thread touches it, through the method requests the
// scheduler dispatches.
//
// Local invariant, after every method request:
//
//	balances = initial + deposited − withdrawn + received − sent
//
// where deposited and withdrawn are the clients' deposits and withdrawals
// into this shard, sent is the money debited by TransferOut, and received
// the money credited by TransferIn and Refund. Transfers between shards go
// through the ledger as a Debit and a Credit (counted as its withdrawals
// and deposits, but leaving the shared service.Supply alone), so the ledger's own
// Audit (balances = initial + its flow) checks the same equation. Money of
// refunds that have arrived but wait for room in their account (held) is
// the servant's too, outside the ledger.
type servant struct {
	ledger  *service.Ledger
	initial int64 // the shard's accounts × initial balance (our own record)

	sent     int64 // debited by TransferOut toward other shards
	received int64 // credited by TransferIn and Refund from other shards
	held     int64 // refunds arrived, waiting in the activation list for room

	// version counts the changes of state; the scheduler re-evaluates the
	// guards of deferred method requests only when it moved.
	version uint64
}

func newServant(first, n uint32, initial int64, supply *service.Supply) *servant {
	return &servant{ledger: service.NewShard(first, n, initial, supply), initial: int64(n) * initial}
}

// changed records a change of state (when err is nil) and passes the result
// through.
func (sv *servant) changed(v int64, err error) (int64, error) {
	if err == nil {
		sv.version++
	}
	return v, err
}

func (sv *servant) balance(a uint32) (int64, error) { return sv.ledger.Balance(a) }

func (sv *servant) deposit(a uint32, amt int64) (int64, error) {
	return sv.changed(sv.ledger.Deposit(a, amt))
}

func (sv *servant) withdraw(a uint32, amt int64) (int64, error) {
	return sv.changed(sv.ledger.Withdraw(a, amt))
}

func (sv *servant) transfer(from, to uint32, amt int64) (int64, error) {
	return sv.changed(sv.ledger.Transfer(from, to, amt))
}

// transferOut debits amt from account from for a transfer to another shard
// and returns from's new balance. The money is then in flight.
func (sv *servant) transferOut(from uint32, amt int64) (int64, error) {
	v, err := sv.ledger.Debit(from, amt)
	if err == nil {
		sv.sent += amt
	}
	return sv.changed(v, err)
}

// transferIn credits amt, sent by another shard, to account to.
func (sv *servant) transferIn(to uint32, amt int64) error {
	_, err := sv.ledger.Credit(to, amt)
	if err == nil {
		sv.received += amt
	}
	_, err = sv.changed(0, err)
	return err
}

// hasRoom reports whether account a can be credited amt without overflow
// (or does not exist here, which the credit itself reports).
func (sv *servant) hasRoom(a uint32, amt int64) bool {
	b, err := sv.ledger.Balance(a)
	return err != nil || b <= math.MaxInt64-amt
}

// auditPart is one shard's recorded state in a snapshot.
type auditPart struct {
	balances  int64 // the sum of the shard's balances
	held      int64 // refunds arrived, not yet credited
	deposited int64 // clients' deposits
	withdrawn int64 // clients' withdrawals
	err       error // the ledger's own audit, if asked for
}

// record returns the shard's state for a snapshot and, if check is set,
// verifies the ledger's local invariant.
func (sv *servant) record(check bool) auditPart {
	dep, wd := sv.ledger.Flow()
	p := auditPart{
		balances:  sv.ledger.Total(),
		held:      sv.held,
		deposited: dep - sv.received,
		withdrawn: wd - sv.sent,
	}
	if check {
		p.err = sv.ledger.Audit(sv.initial)
	}
	return p
}
