package loadgen

import (
	"concbench/wire"
)

// check verifies w.resp as the answer to e per the Verify mode; with
// VerifyFull (and VerifyAuto against a concbench server) a successful
// ledger answer is checked too (checkLedger).
func (w *worker) check(c *conn, e *entry) errKind {
	resp := &w.resp
	switch w.cfg.Verify {
	case VerifyNone:
		return kindOK
	case VerifyStatus:
		return statusKind(resp.Status)
	case VerifyAuto:
		if resp.ID == 0 {
			// A foreign server: no id to match; a checksum, if any, still must.
			if resp.HasChecksum && wire.Checksum(resp.ID, resp.Payload) != resp.Checksum {
				return errVerifyChecksum
			}
			return statusKind(resp.Status)
		}
		if !resp.HasChecksum {
			if resp.ID != e.id {
				return w.misattributed(c, e)
			}
			return statusKind(resp.Status)
		}
	case VerifyFull:
		if !resp.HasChecksum {
			return errVerifyChecksum
		}
	}
	req := wire.Request{ID: e.id, Op: e.op, Size: int(e.size)}
	if wire.Verify(&req, resp) != nil {
		switch {
		case resp.ID != e.id:
			return w.misattributed(c, e)
		case wire.Checksum(resp.ID, resp.Payload) != resp.Checksum:
			return errVerifyChecksum
		}
		return errVerifyBody
	}
	kind := statusKind(resp.Status)
	if kind == kindOK && e.op != wire.OpWork {
		return w.checkLedger(e)
	}
	return kind
}

// misattributed classifies a response whose id is not its request's: an
// order violation if it answers a request sent later on c (or the one an
// earlier out-of-order response skipped), a wrong id otherwise.
func (w *worker) misattributed(c *conn, e *entry) errKind {
	id := w.resp.ID
	switch {
	case c.fly.contains(id) || id == c.skipped && id != 0:
		c.skipped = e.id
		return errVerifyOrder
	}
	return errVerifyID
}
