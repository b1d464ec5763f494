package halfsynchalfreactive

import (
	"runtime"

	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/wire"
)

// worker is one thread of the synchronous layer: it takes request objects
// from the queue, runs the service synchronously (it may block in the
// service's blocking work or in the ledger's guarded withdrawal) and
// delivers the response to the connection in order.
type worker struct {
	s *Server
	thread
	resp    wire.Response
	scratch []byte // the service's output space, reused across requests
}

// run is the worker thread. Like every model thread it exits still locked,
// so the runtime destroys the thread instead of reusing it.
func (w *worker) run() {
	defer w.s.wg.Done()
	runtime.LockOSThread()
	w.sh.SetTID(models.CurrentThreadID())
	w.s.started.Done()
	svc := w.s.cfg.Service
	for {
		w.slice.Refresh()
		r, ok := w.take()
		if !ok {
			return
		}
		w.sh.AddEvent()
		w.scratch = svc.Do(&r.req, &w.resp, w.scratch[:0])
		w.sh.AddRequests(1)
		c := r.conn // r may be released by complete
		if c.complete(&w.thread, r, &w.resp, true) {
			w.s.notes.push(c)
		}
		if cap(w.scratch) > connio.RetainLimit {
			w.scratch = nil
		}
	}
}

// take is the worker's half of a hand-off: it gives the request objects it
// released back to the pool (pooled variant) and takes the next request,
// sleeping in the kernel while the queue is empty. It reports false once
// the queue is closed.
func (w *worker) take() (*request, bool) {
	r, ok := w.s.q.get(w.done)
	clear(w.done)
	w.done = w.done[:0]
	return r, ok
}
