package activeobject

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Proxy is the pattern's proxy: the active objects' typed interface. Each
// method runs in the caller's thread, turns the invocation into a method
// request, enqueues it on the activation queue of the active object that
// owns the account (blocking while that queue is full), and returns a
// Future at once. A Proxy is safe for use by any number of threads.
//
// If the server is closing, the future completes with ErrClosed
// (StatusUnavailable) without the method being executed.
type Proxy struct {
	objs     []*scheduler
	accounts uint32
	next     atomic.Uint32 // round robin for Work

	contributed func(object int) // Options.contributed (tests)
}

// owner returns the active object whose servant holds account a, or nil if
// the account does not exist. Object i owns the contiguous accounts
// [i·N/K, (i+1)·N/K) for N accounts and K objects; first(i) ≤ a holds for
// i ≤ ((a+1)·K − 1)/N, so that is the owner.
func (p *Proxy) owner(a uint32) *scheduler {
	if a >= p.accounts {
		return nil
	}
	k := uint64(len(p.objs))
	return p.objs[((uint64(a)+1)*k-1)/uint64(p.accounts)]
}

// ownerOr returns owner(a), or object 0 for an account that does not exist
// (whose servant then reports service.ErrNoAccount).
func (p *Proxy) ownerOr(a uint32) *scheduler {
	if s := p.owner(a); s != nil {
		return s
	}
	return p.objs[0]
}

// shardRange returns the accounts object i owns: [first, first+n).
func shardRange(i, objects int, accounts uint32) (first, n uint32) {
	lo := uint64(i) * uint64(accounts) / uint64(objects)
	hi := uint64(i+1) * uint64(accounts) / uint64(objects)
	return uint32(lo), uint32(hi - lo)
}

// enqueue charges mr to s's activation queue; if the queue is closed it
// completes f with ErrClosed in the caller's thread.
func (p *Proxy) enqueue(s *scheduler, mr MethodRequest, f *Future) {
	if err := s.queue.Enqueue(mr); err != nil {
		f.complete(nil, 0, err)
	}
}

// Balance returns a future for the balance of account acct.
func (p *Proxy) Balance(acct uint32) *Future {
	f := new(Future)
	p.balance(f, acct, workSpec{})
	return f
}

func (p *Proxy) balance(f *Future, acct uint32, w workSpec) {
	s := p.ownerOr(acct)
	p.enqueue(s, &balanceRequest{base: base{obj: s, fut: f, charge: s.queue, work: w}, acct: acct}, f)
}

// Deposit returns a future for depositing amt into account acct; its value
// is the new balance.
func (p *Proxy) Deposit(acct uint32, amt int64) *Future {
	f := new(Future)
	p.deposit(f, acct, amt, workSpec{})
	return f
}

func (p *Proxy) deposit(f *Future, acct uint32, amt int64, w workSpec) {
	s := p.ownerOr(acct)
	p.enqueue(s, &depositRequest{base: base{obj: s, fut: f, charge: s.queue, work: w}, acct: acct, amt: amt}, f)
}

// Withdraw returns a future for withdrawing amt from account acct; its value
// is the new balance. While the balance is short the request waits in the
// activation list, up to timeout from now, for deposits or transfers to
// cover it; then it fails with service.ErrTimeout. With timeout <= 0 it
// fails at once with service.ErrInsufficientFunds.
func (p *Proxy) Withdraw(acct uint32, amt int64, timeout time.Duration) *Future {
	f := new(Future)
	p.withdraw(f, acct, amt, timeout, workSpec{})
	return f
}

func (p *Proxy) withdraw(f *Future, acct uint32, amt int64, timeout time.Duration, w workSpec) {
	s := p.ownerOr(acct)
	r := &withdrawRequest{base: base{obj: s, fut: f, charge: s.queue, work: w}, acct: acct, amt: amt, timeout: timeout}
	if timeout > 0 {
		r.until = time.Now().Add(timeout)
	}
	p.enqueue(s, r, f)
}

// Transfer returns a future for moving amt from account from to account to;
// its value is from's new balance. Between accounts of different active
// objects it is two method requests: TransferOut on the source's object,
// which debits and forwards the money, and TransferIn on the destination's,
// which credits it and completes the future (see the package
// documentation).
func (p *Proxy) Transfer(from, to uint32, amt int64) *Future {
	f := new(Future)
	p.transfer(f, from, to, amt, workSpec{})
	return f
}

func (p *Proxy) transfer(f *Future, from, to uint32, amt int64, w workSpec) {
	src, dst := p.owner(from), p.owner(to)
	if src == nil || dst == nil || src == dst {
		// One shard does it all (including reporting a missing account).
		s := src
		if s == nil {
			s = p.ownerOr(to)
		}
		p.enqueue(s, &transferRequest{base: base{obj: s, fut: f, charge: s.queue, work: w}, from: from, to: to, amt: amt}, f)
		return
	}
	p.enqueue(src, &transferOutRequest{base: base{obj: src, fut: f, charge: src.queue, work: w}, from: from, to: to, amt: amt, dst: dst}, f)
}

// Total returns a future for the audit total: the sum of all balances plus
// the money in flight between active objects — the conserved total, which
// is the sum of the balances whenever no transfer is in flight.
func (p *Proxy) Total() *Future {
	f := new(Future)
	p.total(f, workSpec{}, false)
	return f
}

// total starts a snapshot: a start request on every active object, in
// index order; the work spec runs with object 0's.
func (p *Proxy) total(f *Future, w workSpec, check bool) *snapshot {
	sn := newSnapshot(f, len(p.objs), check)
	sn.contributed = p.contributed
	for i, s := range p.objs {
		r := &snapStartRequest{base: base{obj: s, fut: f, charge: s.queue}, snap: sn}
		if i == 0 {
			r.work = w
		}
		if s.queue.Enqueue(r) != nil {
			sn.contribute(nil, i, true)
		}
	}
	return sn
}

// Work returns a future for a Work method: cpu of CPU work and block of
// blocking work on the scheduler thread of one active object (chosen round
// robin), with an empty body.
func (p *Proxy) Work(cpu, block time.Duration) *Future {
	f := new(Future)
	i := int(p.next.Add(1)) % len(p.objs)
	p.work(f, i, workSpec{cpu: cpu, block: block}, 0, 0)
	return f
}

// work enqueues a Work method request on object i whose body is
// wire.AppendBody(id, size).
func (p *Proxy) work(f *Future, i int, w workSpec, id uint64, size int) {
	s := p.objs[i]
	p.enqueue(s, &workRequest{base: base{obj: s, fut: f, charge: s.queue, work: w}, id: id, size: size}, f)
}

// Audit is a consistent account of the money in the ledger: the state of
// every active object's servant at one consistent cut (a Chandy–Lamport
// snapshot; see the package documentation).
type Audit struct {
	Balances  int64 // the sum of all balances
	InFlight  int64 // debited by a TransferOut, not yet credited by its TransferIn (or Refund), at the cut
	Initial   int64 // accounts × initial balance
	Deposited int64 // clients' successful deposits
	Withdrawn int64 // clients' successful withdrawals
	// Err is the first servant whose own ledger failed its audit (a
	// negative balance, or balances that do not match its flow), or nil.
	Err error
}

// Check reports whether money is conserved: no servant failed its audit,
// the money in flight is not negative, and Balances + InFlight = Initial +
// Deposited − Withdrawn.
func (a Audit) Check() error {
	switch {
	case a.Err != nil:
		return a.Err
	case a.InFlight < 0:
		return fmt.Errorf("activeobject: audit: %d in flight (negative)", a.InFlight)
	case a.Balances+a.InFlight != a.Initial+a.Deposited-a.Withdrawn:
		return fmt.Errorf("activeobject: audit: money not conserved: balances %d + in flight %d = %d, want initial %d + deposited %d - withdrawn %d = %d",
			a.Balances, a.InFlight, a.Balances+a.InFlight, a.Initial, a.Deposited, a.Withdrawn, a.Initial+a.Deposited-a.Withdrawn)
	}
	return nil
}

// Audit takes a snapshot of every active object, as Total does, with each
// servant's ledger audit, and waits for it. The snapshot is a consistent
// cut even while transfers are in flight. It returns ErrClosed if the
// server is closing.
func (p *Proxy) Audit() (Audit, error) {
	f := new(Future)
	sn := p.total(f, workSpec{}, true)
	f.Wait()
	if f.Err() != nil {
		return Audit{}, f.Err()
	}
	a := sn.sum // complete: every part has been added
	for _, s := range p.objs {
		a.Initial += s.servant.initial // immutable after Start
	}
	return a, nil
}
