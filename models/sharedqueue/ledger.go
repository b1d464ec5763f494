package sharedqueue

import (
	"fmt"
	"slices"
	"time"

	"concbench/models"
	"concbench/service"
	"concbench/wire"
)

// callKind is what a call asks of a shard.
type callKind uint8

// The kinds of call: the ledger's operations, the two halves of a
// transfer between shards, a snapshot's start and markers (Total), and a
// shard's expiry of guarded withdrawals.
const (
	kindBalance   callKind = iota
	kindDeposit            // wakes the guarded withdrawals of the shard
	kindWithdraw           // waits in the shard for funds while its timeout lasts
	kindTransfer           // both accounts in one shard
	kindDebit              // a transfer's first half, in the source's shard
	kindCredit             // its second half, in the destination's shard
	kindTotal              // a snapshot of every shard (never a call of a shard)
	kindSnapStart          // a snapshot's start in one shard
	kindMarker             // a snapshot's marker from one shard to another
	kindExpire             // time out the shard's guarded withdrawals that are due
)

// kindOf returns the call kind of a ledger operation.
func kindOf(o wire.Op) callKind {
	switch o {
	case wire.OpBalance:
		return kindBalance
	case wire.OpDeposit:
		return kindDeposit
	case wire.OpWithdraw:
		return kindWithdraw
	case wire.OpTransfer:
		return kindTransfer
	case wire.OpTotal:
		return kindTotal
	}
	panic(fmt.Sprintf("sharedqueue: %v is not a ledger operation", o))
}

// call is a handler in a strand: asio's completion handler wrapped by the
// strand. A connection's ledger request is its conn.call, reused by its
// next request, so a request allocates nothing; a snapshot's starts and
// markers and a shard's expiries are allocated (a Total, a timeout: rare).
type call struct {
	next *call
	kind callKind

	account, to uint32
	amount      int64
	timeout     time.Duration // a withdrawal's guard
	deadline    time.Time     // when a waiting withdrawal times out
	dest        *shard        // a debit's destination
	from        int           // a credit's source shard; a marker's sender
	snap        *snapshot

	id    uint64 // the request's, for its response
	close bool
	c     *conn // the connection whose request this is; nil for a snapshot's and an expiry's calls

	v   int64 // the result
	err error
}

// finish records the call's result and hands its connection back. The
// caller touches the call no more: the connection may reuse it at once.
func (c *call) finish(v int64, err error) {
	c.v, c.err = v, err
	c.c.finished()
}

// response fills resp for the finished call as Service.Do answers a
// ledger request, appending its payload to scratch.
func (c *call) response(resp *wire.Response, scratch []byte) []byte {
	resp.ID, resp.Close = c.id, c.close
	resp.Checksum, resp.HasChecksum = 0, false
	return service.AppendResult(resp, scratch, c.v, c.err)
}

// shard is one shard of the ledger with its strand: the servant (an
// unsynchronized service.Ledger and its guarded withdrawals) is touched
// only by the handler running in the strand, so it has no lock.
type shard struct {
	strand
	idx int
	s   *Server

	ledger  *service.Ledger
	waiters []*call     // guarded withdrawals waiting for funds, oldest first
	snaps   []*snapshot // snapshots recorded here and waiting for markers

	expiry       expiryOp
	expiryQueued bool // expiry is in the scheduler's queue; guarded by the scheduler's mu

	ownerCheck                   // the servant's owner check (checkStrands)
	cross         models.Counter // transfers to another shard begun here; in the strand
	guardWaits    models.Counter // withdrawals that waited for funds; in the strand
	guardTimeouts models.Counter // withdrawals that timed out; in the strand
}

// begin sends a connection's ledger request to the strand of the shard
// that holds its account (a Total to every shard).
func (s *Server) begin(c *call) {
	switch c.kind {
	case kindTotal:
		s.startSnapshot(c)
		return
	case kindTransfer:
		if c.to >= s.accounts {
			c.finish(0, service.ErrNoAccount) // checked first, as service.Ledger.Transfer does
			return
		}
		if to := s.shardOf(c.to); to != s.shardOf(c.account) {
			c.kind, c.dest = kindDebit, to
		}
	}
	s.shardOf(c.account).dispatch(c)
}

// execute runs c on the servant; it is called in the strand only.
func (sh *shard) execute(c *call) {
	if checkStrands {
		sh.enter()
		defer sh.leave()
		if f := sh.s.hooks.inServant; f != nil {
			f(sh)
		}
	}
	l := sh.ledger
	switch c.kind {
	case kindBalance:
		c.finish(l.Balance(c.account))
	case kindDeposit:
		v, err := l.Deposit(c.account, c.amount)
		c.finish(v, err)
		if err == nil {
			sh.recheck()
		}
	case kindWithdraw:
		sh.withdraw(c)
	case kindTransfer:
		v, err := l.Transfer(c.account, c.to, c.amount)
		grew := err == nil && c.account != c.to
		c.finish(v, err)
		if grew {
			sh.recheck()
		}
	case kindDebit:
		sh.debit(c)
	case kindCredit:
		sh.credit(c)
	case kindSnapStart:
		sh.record(c.snap, -1)
	case kindMarker:
		sh.marker(c.snap, c.from)
	case kindExpire:
		sh.expire()
	default:
		panic(fmt.Sprintf("sharedqueue: call kind %d in a strand", c.kind))
	}
}

// withdraw takes the amount now, or, if the balance is short and the
// request has a timeout, keeps the withdrawal waiting in the shard — the
// guard of the monitor's Withdraw, without a thread waiting: a deposit or
// credit to the shard re-checks it (recheck), and its deadline, through
// the scheduler's timers, times it out (expire).
func (sh *shard) withdraw(c *call) {
	v, err := sh.ledger.Withdraw(c.account, c.amount)
	if err != service.ErrInsufficientFunds || c.timeout <= 0 {
		c.finish(v, err)
		return
	}
	c.deadline = time.Now().Add(c.timeout)
	sh.waiters = append(sh.waiters, c)
	sh.guardWaits.Inc()
	sh.s.sched.addTimer(c.deadline, sh)
}

// recheck retries the waiting withdrawals, oldest first, after a balance
// of the shard grew; each that no longer lacks funds finishes.
func (sh *shard) recheck() {
	sh.waiters = slices.DeleteFunc(sh.waiters, func(c *call) bool {
		v, err := sh.ledger.Withdraw(c.account, c.amount)
		if err == service.ErrInsufficientFunds {
			return false
		}
		c.finish(v, err)
		return true
	})
}

// expire times out the waiting withdrawals whose deadline has passed.
func (sh *shard) expire() {
	now := time.Now()
	sh.waiters = slices.DeleteFunc(sh.waiters, func(c *call) bool {
		if c.deadline.After(now) {
			return false
		}
		sh.guardTimeouts.Inc()
		c.finish(0, service.ErrTimeout)
		return true
	})
}

// debit is a transfer's first half, in the source's shard: it validates
// and debits the source exactly as service.Ledger.Transfer would, then
// sends the money to the destination's strand (dispatch: at once if that
// strand is free). The transfer's response carries the source's balance
// after the debit.
func (sh *shard) debit(c *call) {
	v, err := sh.ledger.Debit(c.account, c.amount)
	if err != nil {
		c.finish(0, err)
		return
	}
	sh.cross.Inc()
	c.v, c.kind, c.from = v, kindCredit, sh.idx
	c.dest.dispatch(c)
}

// credit is a transfer's second half, in the destination's shard.
func (sh *shard) credit(c *call) {
	// The money is the ledger's already: with the Supply that bounds it,
	// no balance can overflow, and the account exists (begin checked).
	if _, err := sh.ledger.Credit(c.to, c.amount); err != nil {
		panic(fmt.Sprintf("sharedqueue: credit of %d to account %d failed after its debit: %v", c.amount, c.to, err))
	}
	sh.receive(c.from, c.amount)
	c.finish(c.v, nil)
	sh.recheck()
}

// expiryOp brings a shard's due deadlines into its strand: the scheduler's
// timers queue it, and the thread that performs it posts an expiry call
// to the strand.
type expiryOp struct {
	opLink
	sh *shard
}

func (e *expiryOp) perform(*thread) {
	sc := &e.sh.s.sched
	sc.mu.Lock()
	e.sh.expiryQueued = false
	sc.mu.Unlock()
	e.sh.post(&call{kind: kindExpire})
}
