package activeobject

import (
	"time"

	"concbench/service"
	"concbench/wire"
)

// MethodRequest is the pattern's method request: the context of one method
// invocation on the active object (its arguments, the servant it applies to,
// the future that receives its result), passed from the Proxy in the
// client's thread to the Scheduler in the servant's thread.
//
// The scheduler calls Guard and Call only from its own thread, so both may
// read and change the servant without locks.
type MethodRequest interface {
	// Guard reports whether the method's synchronization constraint holds
	// now, i.e. whether Call may run. A request whose guard fails stays in
	// the scheduler's activation list and is asked again after the
	// servant's state changes (or its deadline passes).
	Guard() bool
	// Call executes the method on the servant and completes the future.
	Call()
	// Cancel completes the future with ErrClosed without executing the
	// method: the active object is shutting down.
	Cancel()
}

// deadliner is implemented by method requests whose guard gives up at a
// deadline (a guarded withdrawal): the scheduler wakes by then even if no
// request arrives, so that the guard can let the request time out.
type deadliner interface {
	// deadline returns the time the guard starts to hold regardless of the
	// servant's state, or the zero time if none.
	deadline() time.Time
}

// workSpec is the work a request asks for besides its method: CPU work and
// blocking work (Service.Work), run by the scheduler thread before the
// method, exactly as service.Do runs it before a ledger operation.
type workSpec struct {
	cpu, block time.Duration
}

// base is what every concrete method request holds: the active object that
// executes it, its future, and the queue on which it holds a slot.
type base struct {
	obj    *scheduler
	fut    *Future
	charge *ActivationQueue // nil if the request holds no slot
	work   workSpec
}

// doWork runs the request's work spec on the scheduler thread.
func (b *base) doWork() {
	if b.work.cpu > 0 || b.work.block > 0 {
		b.obj.svc.Work(b.work.cpu, b.work.block)
	}
}

// finish completes the future and releases the request's slot.
func (b *base) finish(v int64, err error) {
	b.fut.complete(b.obj, v, err)
	b.obj.released(b.charge)
}

// Cancel completes the future with ErrClosed.
func (b *base) Cancel() { b.finish(0, ErrClosed) }

// Guard of a method without synchronization constraint: it may always run.
func (*base) Guard() bool { return true }

// workRequest is the synthetic OpWork method: CPU and blocking work, then
// the response body. It has no constraint on the servant; it runs on the
// active object the connection chose, so one connection's work stays in
// order on one scheduler.
type workRequest struct {
	base
	id   uint64
	size int
}

func (r *workRequest) Call() {
	r.doWork()
	if r.fut.conn != nil && r.size > wire.MaxInlineBody {
		// A connection streams a large body from the codec's shared
		// table as its client reads (connio.Out): nothing to build.
		r.fut.pattern = r.size
	} else {
		r.fut.payload = wire.AppendBody(r.fut.payload[:0], r.id, r.size)
	}
	r.finish(0, nil)
}

// balanceRequest reads one account's balance.
type balanceRequest struct {
	base
	acct uint32
}

func (r *balanceRequest) Call() {
	r.doWork()
	r.finish(r.obj.servant.balance(r.acct))
}

// depositRequest adds to one account.
type depositRequest struct {
	base
	acct uint32
	amt  int64
}

func (r *depositRequest) Call() {
	r.doWork()
	r.finish(r.obj.servant.deposit(r.acct, r.amt))
}

// withdrawRequest is the guarded method: it takes amt from an account, and
// while the balance is short its guard keeps it waiting in the activation
// list until deposits or transfers make it sufficient or until its deadline
// (issue time + timeout) passes, when it fails with service.ErrTimeout. With
// timeout <= 0 it does not wait and fails with ErrInsufficientFunds, as
// Monitor.Withdraw does.
type withdrawRequest struct {
	base
	acct    uint32
	amt     int64
	timeout time.Duration
	until   time.Time
}

// Guard holds when the withdrawal can be decided now: the balance covers
// it, it is invalid (no such account, bad amount: it fails at once), it may
// not wait, or its deadline has passed.
func (r *withdrawRequest) Guard() bool {
	b, err := r.obj.servant.balance(r.acct)
	if err != nil || r.amt <= 0 || b >= r.amt || r.timeout <= 0 {
		return true
	}
	return !time.Now().Before(r.until)
}

func (r *withdrawRequest) deadline() time.Time {
	if r.timeout <= 0 {
		return time.Time{}
	}
	return r.until
}

func (r *withdrawRequest) Call() {
	r.doWork()
	v, err := r.obj.servant.withdraw(r.acct, r.amt)
	if err == service.ErrInsufficientFunds && r.timeout > 0 {
		// The guard let it through at its deadline, still short.
		err = service.ErrTimeout
		r.obj.timeouts.Add(1)
	}
	r.finish(v, err)
}

// transferRequest moves money between two accounts of the same shard (or
// reports an account that does not exist): one step, as Ledger.Transfer.
type transferRequest struct {
	base
	from, to uint32
	amt      int64
}

func (r *transferRequest) Call() {
	r.doWork()
	r.finish(r.obj.servant.transfer(r.from, r.to, r.amt))
}

// transferOutRequest is the first half of a transfer between shards, run by
// the source account's active object: it debits the source (failing, as
// Ledger.Transfer does, on a bad amount or insufficient funds — a transfer
// never waits for funds) and sends the money on to the destination's active
// object as a transferInRequest. Its slot travels with the money.
//
// Note: checking the destination's room first (a reservation on the
// destination, then the debit, then the credit) would make the rare
// overflow need no refund, but costs every transfer between objects a third
// hand-off; the refund path costs only the transfers that overflow.
type transferOutRequest struct {
	base
	from, to uint32
	amt      int64
	dst      *scheduler
}

func (r *transferOutRequest) Call() {
	r.doWork()
	v, err := r.obj.servant.transferOut(r.from, r.amt)
	if err != nil {
		r.finish(v, err)
		return
	}
	r.obj.crossShard.Add(1)
	in := &transferInRequest{
		base:    base{obj: r.dst, fut: r.fut, charge: r.charge},
		src:     r.obj,
		from:    r.from,
		to:      r.to,
		amt:     r.amt,
		fromBal: v,
	}
	if r.dst.queue.enqueueContinuation(in) != nil {
		// Shutting down: the money stays in flight; nobody audits a closed
		// server.
		r.finish(0, ErrClosed)
	}
}

// arriver is implemented by method requests that carry money between
// active objects: the scheduler calls arrive when it takes the request from
// its queue, before evaluating its guard — the moment the money is received,
// for the snapshots of Total (see snapshot).
type arriver interface {
	arrive()
}

// transferInRequest is the second half of a transfer between shards, run by
// the destination account's active object: it credits the money and
// completes the transfer's future with the source's balance after the
// debit. If the credit would overflow the destination balance it bounces the
// money back to the source as a refundRequest.
type transferInRequest struct {
	base
	src      *scheduler
	from, to uint32
	amt      int64
	fromBal  int64
}

func (r *transferInRequest) arrive() { r.obj.receive(r.src, r.amt) }

func (r *transferInRequest) Call() {
	err := r.obj.servant.transferIn(r.to, r.amt)
	if err == nil {
		r.finish(r.fromBal, nil)
		return
	}
	ref := &refundRequest{base: base{obj: r.src, fut: r.fut, charge: r.charge}, src: r.obj, acct: r.from, amt: r.amt, cause: err}
	if r.src.queue.enqueueContinuation(ref) != nil {
		r.finish(0, ErrClosed)
	}
}

// refundRequest returns the money of a transfer whose credit failed to the
// source account, and fails the transfer with the credit's error
// (service.ErrOverflow), leaving both balances as they were. Its guard waits
// until the source account has room for the money again (it received
// deposits meanwhile), so a refund never fails and money is never lost;
// while it waits its money is held by the servant.
type refundRequest struct {
	base
	src   *scheduler // the object that bounced the money
	acct  uint32
	amt   int64
	cause error
}

func (r *refundRequest) arrive() {
	r.obj.receive(r.src, r.amt)
	r.obj.servant.held += r.amt
}

func (r *refundRequest) Guard() bool { return r.obj.servant.hasRoom(r.acct, r.amt) }

func (r *refundRequest) Call() {
	r.obj.servant.held -= r.amt
	if err := r.obj.servant.transferIn(r.acct, r.amt); err != nil {
		// The guard held, so this is a bug; report it rather than hide it.
		r.finish(0, err)
		return
	}
	r.finish(0, r.cause)
}
