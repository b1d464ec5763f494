package loadgen

import (
	"math"
	"sync/atomic"

	"concbench/wire"
)

// changesMoney reports whether op changes the ledger's money: a deposit
// or a withdrawal (a transfer moves money between accounts).
func changesMoney(op wire.Op) bool { return op == wire.OpDeposit || op == wire.OpWithdraw }

// moneyFlow counts, across the workers of a run with Config.LedgerMoney,
// the deposits and withdrawals sent (less those the ledger refused) and
// those acknowledged: the bounds of every total (checkTotal). Each count
// is changed by one worker at a time but read by all, hence atomics; a
// send is counted before its request is written, an acknowledgement
// after its response is read.
type moneyFlow struct {
	depSent, depAcked, wdSent, wdAcked atomic.Int64
}

// sent counts e, about to be written: a deposit or withdrawal as sent; a
// total with the acknowledgements so far, the least it can count.
func (m *moneyFlow) sent(e *entry) {
	switch e.op {
	case wire.OpDeposit:
		m.depSent.Add(1)
	case wire.OpWithdraw:
		m.wdSent.Add(1)
	case wire.OpTotal:
		e.dep, e.wd = m.depAcked.Load(), m.wdAcked.Load()
	}
}

// account counts the answer, of kind, to e in the run's ledger: an
// acknowledged deposit or withdrawal, one the ledger refused (which
// changed nothing), or one whose outcome is unknown.
func (w *worker) account(e *entry, kind errKind) {
	if !changesMoney(e.op) {
		return
	}
	dep := e.op == wire.OpDeposit
	m := w.money
	switch {
	case kind == kindOK && dep:
		w.st.deposits++
		if m != nil {
			m.depAcked.Add(1)
		}
	case kind == kindOK:
		w.st.withdrawals++
		if m != nil {
			m.wdAcked.Add(1)
		}
	case refusal(kind):
		w.st.moneyRefused++
		if m != nil && dep {
			m.depSent.Add(-1)
		} else if m != nil {
			m.wdSent.Add(-1)
		}
	default:
		w.st.moneyUnknown++
	}
}

// unanswered counts e, a request written and then never answered: a
// deposit or withdrawal whose outcome is unknown.
func (w *worker) unanswered(e *entry) {
	if changesMoney(e.op) {
		w.st.moneyUnknown++
	}
}

// refusal reports whether kind is a verified answer that the operation
// changed nothing: any status but ok, unavailable and internal. Those
// two may come from a front end whose back end failed after the request
// reached it, so that its outcome is unknown; the ledger's own errors
// (insufficient funds, a guarded withdrawal's timeout, overflow, no such
// account) and a refused request change nothing (service.Ledger:
// "an operation that returns an error leaves the ledger as it was").
func refusal(kind errKind) bool {
	if kind <= errStatusBase {
		return false
	}
	s := wire.Status(kind - errStatusBase)
	return s != wire.StatusUnavailable && s != wire.StatusInternal
}

// checkLedger checks the payload of a successful ledger answer to e: a
// balance, or the ledger's total, in decimal, never negative; and, with
// Config.LedgerMoney, a total within the bounds of the run's money flow.
func (w *worker) checkLedger(e *entry) errKind {
	v, ok := parseBalance(w.resp.Payload)
	switch {
	case !ok:
		return errVerifyBody
	case e.op == wire.OpTotal && w.money != nil:
		return w.checkTotal(e, v)
	}
	return kindOK
}

// checkTotal checks the total v answered to e. The server took it at
// some moment between e's send and the read of its answer: after every
// deposit and withdrawal acknowledged before the send (e.dep, e.wd),
// and before any not yet sent when the answer was read. So, with the
// sent counts read now,
//
//	money + (e.dep − wdSent) × amount ≤ v ≤ money + (depSent − e.wd) × amount
//
// where money is Config.LedgerMoney. A deposit or withdrawal whose
// outcome is unknown stays in its sent count: the bounds still hold.
func (w *worker) checkTotal(e *entry, v int64) errKind {
	m := w.money
	w.st.totals++
	a := w.cfg.Amount
	lo := w.cfg.LedgerMoney + (e.dep-m.wdSent.Load())*a
	hi := w.cfg.LedgerMoney + (m.depSent.Load()-e.wd)*a
	if v < lo || v > hi {
		return errVerifyTotal
	}
	return kindOK
}

// parseBalance parses b as a non-negative decimal int64 (what the
// service answers a ledger request with) without allocating.
func parseBalance(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, false
		}
		v = 10*v + d
	}
	return v, true
}
