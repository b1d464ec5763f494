package activeobject

import (
	"errors"
	"runtime"
	"sync/atomic"
	"unsafe"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
	"concbench/models/internal/connio"
	"concbench/service"
	"concbench/wire"
)

const (
	// ioEvents is how many events the I/O threads take from the handle set
	// per Wait, divided among them: one thread takes many (fewer system
	// calls), several take fewer each so that no thread sits on events
	// another could serve.
	ioEvents = 64
	// maxRounds bounds the decode/dispatch/collect rounds of one
	// connection step, and connio.MaxReadsPerEvent the reads of one pump,
	// so that one busy connection cannot hold an I/O thread (fairness).
	maxRounds = 8
)

var (
	// errBadOp answers a request whose operation is not defined, with
	// StatusBadRequest, as service.Do does.
	errBadOp = errors.New("activeobject: undefined operation")
	// errUnhandledOp answers a defined operation this model has no method
	// for, with StatusInternal (a bug), as service.Do does.
	errUnhandledOp = errors.New("activeobject: unhandled operation")
)

// ioThread is one I/O thread: it waits on the handle set and dispatches the
// events of the listener, of the connections and of the completion ports.
// Several I/O threads share the set; every handle is registered OneShot, so
// an event goes to one thread, which owns the handle until it re-arms it
// (the handle set's deactivation protocol). A connection's state is also
// guarded by its own mutex, because a completion may reach it while a
// readiness event does. It exits still locked.
func (s *Server) ioThread(sh *models.Shard) {
	defer s.wg.Done()
	runtime.LockOSThread()
	sh.SetTID(models.CurrentThreadID())
	w := s.set.NewWaiter(max(1, ioEvents/s.cfg.Threads))
	var slice connio.Slice
	for {
		slice.Refresh()
		evs, err := w.Wait(s.lh.pause.Timeout()) // bounded while the listener backs off
		if err != nil {
			if !errClosing(err) {
				sh.AddError(models.ErrIO) // epoll_wait failed: nothing to retry
			}
			return
		}
		for _, ev := range evs {
			sh.AddEvent()
			ev.Handler.HandleEvent(ev.Fd, ev.Ready)
		}
		s.lh.resume()
	}
}

// listenHandler accepts connections. The thread that receives the
// listener's event owns it until it re-arms it; its counts go to a
// connection-style shard that those threads take turns writing, and so
// does its back-off.
type listenHandler struct {
	srv *Server
	sh  *models.Shard

	backoff connio.AcceptBackoff // the delay after a descriptor or memory shortage
	pause   connio.ListenPause   // when an I/O thread re-arms the listener after it
}

// HandleEvent accepts a batch of connections (connio.AcceptAdmitted: each
// admitted under Config.MaxConns, counted and registered) and re-arms the
// listener. When accept fails for lack of descriptors or memory
// it leaves the listener disarmed and starts a pause of the back-off's
// delay, after which an I/O thread re-arms it: the listener backs off
// instead of spinning, and the I/O threads keep serving their connections
// meanwhile.
func (l *listenHandler) HandleEvent(int, handleset.Events) {
	wait, _ := connio.AcceptAdmitted(l.srv.ln, &l.backoff, l.srv.limit, l.sh, func(fd int) bool {
		l.srv.addConn(fd) // a connection the set refuses is closed; the batch goes on
		return true
	})
	if wait > 0 {
		// Not a single access to l.backoff after this: once the pause
		// ends another thread may own the listener.
		l.pause.Start(wait)
		return
	}
	l.rearm()
}

func (l *listenHandler) rearm() {
	// The only failure is ErrClosed (shutting down).
	_ = l.srv.set.Reactivate(l.srv.ln.Fd(), handleset.Readable|handleset.OneShot)
}

// resume re-arms the listener once its back-off has passed (one thread
// wins).
func (l *listenHandler) resume() {
	if l.pause.End() {
		l.rearm()
	}
}

// completionPort carries completed futures from one scheduler to the I/O
// threads: the scheduler appends the future's connection to a list and, if
// the list was empty, signals an eventfd registered in the handle set; the
// I/O thread that receives its event drains the list and, for each
// connection, encodes the ready responses in order and writes them.
//
// Note: the scheduler does not write responses itself. It is the
// serialization point of its shard of the ledger: every microsecond it spent
// encoding, checksumming and in write(2) would be a microsecond no other
// request of the shard could run, and a slow reader's full socket would
// leave it holding output it cannot block on. It would also have to take
// part in the handle set's (de)activation protocol for a socket an I/O
// thread may hold. Handing the completion back costs one eventfd write per
// batch of completions (signals coalesce while the list is non-empty), and
// keeps every socket owned by the I/O side.
type completionPort struct {
	srv   *Server
	index int
	wake  *handleset.Wakeup

	mu    futex.Mutex
	list  []*conn // connections with completed futures; guarded by mu
	spare []*conn // the other buffer; guarded by mu

	signals atomic.Uint64 // eventfd signals sent
}

func newCompletionPort(s *Server, index int) (*completionPort, error) {
	w, err := handleset.NewWakeup()
	if err != nil {
		return nil, err
	}
	return &completionPort{srv: s, index: index, wake: w}, nil
}

// post queues c for an I/O thread, unless it is queued already. It runs on
// the scheduler thread that completed one of c's futures (after marking it
// ready; the I/O side clears the mark before it looks at the futures, so a
// completion is never missed).
func (p *completionPort) post(c *conn) {
	if c.posted[p.index].Swap(true) {
		return
	}
	p.mu.Lock()
	first := len(p.list) == 0
	p.list = append(p.list, c)
	p.mu.Unlock()
	if first {
		p.signals.Add(1)
		// Signal fails only on a closed descriptor; the port's eventfd is
		// closed after every scheduler has exited.
		_ = p.wake.Signal()
	}
}

// HandleEvent serves the connections posted to the port. The port's
// eventfd is re-armed only after the batch, so one thread at a time drains
// a port (ports of different objects are drained in parallel).
func (p *completionPort) HandleEvent(int, handleset.Events) {
	// A valid non-blocking eventfd cannot fail to read but with EAGAIN.
	_, _ = p.wake.Drain()
	p.mu.Lock()
	conns := p.list
	p.list, p.spare = p.spare, nil
	p.mu.Unlock()
	for _, c := range conns {
		c.posted[p.index].Store(false)
	}
	for _, c := range conns {
		c.mu.Lock()
		c.step(0)
		c.mu.Unlock()
	}
	clear(conns)
	p.mu.Lock()
	p.spare = conns[:0]
	p.mu.Unlock()
	// The only failure is ErrClosed (shutting down).
	_ = p.srv.set.Reactivate(p.wake.Fd(), handleset.Readable|handleset.OneShot)
}

// slot is one request in flight on a connection: its future and what the
// response needs besides the result.
type slot struct {
	fut   Future
	id    uint64
	close bool // the request asked to close the connection
	body  bool // OpWork: the payload is the future's body
	est   int  // output bytes reserved for the response (connio.Reserve)
}

// A slot fits the record the models package's memory bound allows: this
// fails to compile if it outgrows models.InFlightRecord.
const _ = models.InFlightRecord - unsafe.Sizeof(slot{})

// conn is one connection: its protocol buffers and its requests in flight,
// in its connio.Ring by sequence number. Responses leave in request order
// whatever order the futures complete in (HTTP pipelining).
type conn struct {
	srv    *Server
	fd     int
	home   int           // the active object that runs the connection's Work requests
	posted []atomic.Bool // per object: queued on its completion port

	mu futex.Mutex // guards everything below
	sh *models.Shard

	closed   bool
	closing  bool         // no further request will be decoded
	readable bool         // the socket may have unread bytes
	timer    connio.Timer // the header timeout's clock (set by pump)
	// armed is the interest the socket is armed with in the handle set
	// (with OneShot), 0 once an event has disarmed it: a completion step
	// that wants the same interest need not re-arm it.
	armed   handleset.Events
	in      connio.In
	out     connio.Out
	req     wire.Request
	resp    wire.Response
	scratch []byte
	ring    connio.Ring[*slot] // the requests in flight, Options.MaxInFlight at most
	// free holds the slots of answered requests for the next ones (last
	// in, first out), so a connection has as many slots, and futures'
	// body buffers, as it has had requests in flight at once.
	free []*slot

	decodeErr error // a request failed to decode: answer it after the others (nil once answered)
	reads     int   // reads in the current step
}

// addConn registers an accepted connection with the handle set.
func (s *Server) addConn(fd int) {
	c := &conn{
		srv:      s,
		fd:       fd,
		posted:   make([]atomic.Bool, len(s.objs)),
		sh:       s.counters.NewConnShard(),
		in:       connio.NewIn(connio.MaxRequest(s.cfg.Codec.Limits())),
		readable: true,
		armed:    handleset.Readable | handleset.OneShot,
	}
	c.ring.Init(s.opts.MaxInFlight, s.cfg.MaxPendingOutput)
	s.connsMu.Lock()
	c.home = int(s.nextID % uint64(len(s.objs)))
	s.nextID++
	s.conns[c] = struct{}{}
	s.connsMu.Unlock()
	s.reaper.Track(fd, &c.timer)
	if err := s.set.Register(fd, handleset.Readable|handleset.OneShot, c); err != nil {
		c.mu.Lock()
		if !errClosing(err) {
			c.sh.AddError(models.ErrIO)
		}
		c.close()
		c.mu.Unlock()
	}
}

// HandleEvent serves a readiness event of the connection's socket.
func (c *conn) HandleEvent(_ int, ready handleset.Events) {
	c.mu.Lock()
	c.armed = 0 // the one-shot event disarmed the socket
	c.step(ready)
	c.mu.Unlock()
}

// step is the connection's whole non-blocking processing, run with c.mu
// held by an I/O thread on a readiness event or a completion: it encodes the
// responses whose futures are ready (in order), writes what the socket
// takes, reads and decodes requests and invokes the proxy for each while
// admission allows, and finally re-arms the socket with the interest that
// fits, closes the connection, or leaves it disarmed while it waits only for
// completions (which run step again).
func (c *conn) step(ready handleset.Events) {
	if c.closed {
		return // a stale event or completion
	}
	if ready&(handleset.Readable|handleset.HangUp|handleset.Error) != 0 {
		c.readable = true
	}
	c.reads = 0
	for range maxRounds {
		c.collect()
		if !c.flush() {
			c.close()
			return
		}
		n, ok := c.pump()
		if !ok {
			c.close()
			return
		}
		if n == 0 && !c.headReady() {
			break
		}
	}
	// The last pump stops only where it must: admission closed, or no
	// complete request buffered.
	admitted := c.canAdmit()
	if c.srv.opts.afterRounds != nil {
		c.srv.opts.afterRounds(c, ready)
	}
	c.collect()
	if !c.flush() {
		c.close()
		return
	}
	if !admitted && !c.closing && c.in.Buffered() > 0 && c.canAdmit() {
		// Collecting and writing just now reopened admission, and requests
		// the last pump held back may be buffered. No socket event will
		// report them (their bytes were read already); if nothing is in
		// flight and the output is all written, no completion or
		// writability will either. Queue the connection on its completion
		// port for another step after the work waiting there (a step stays
		// bounded by maxRounds: fairness). Seen as a slow reader's
		// connection hanging with requests buffered, when its client
		// drained the socket between the last round's write and this one
		// (TestAdmissionReopenedAfterRounds drives exactly that).
		c.srv.ports[c.home].post(c)
	}
	pending := c.out.Pending()
	if c.closing && c.ring.InFlight() == 0 && pending == 0 {
		c.close()
		return
	}
	var ev handleset.Events
	if pending > 0 {
		ev |= handleset.Writable
	}
	if !c.closing && c.canAdmit() {
		ev |= handleset.Readable
	}
	if ev == 0 {
		// Only completions can move this connection on (requests are in
		// flight: see canAdmit); the socket stays disarmed until then.
		return
	}
	ev |= handleset.OneShot
	if ev == c.armed {
		// Still armed with this interest since the last step (this one
		// runs for a completion): an event that fires meanwhile runs its
		// own step, which re-arms.
		return
	}
	if err := c.srv.set.Reactivate(c.fd, ev); err != nil {
		if !errClosing(err) {
			c.sh.AddError(models.ErrIO)
			c.close()
		}
		return
	}
	c.armed = ev
}

// canAdmit reports whether another request may be decoded and put in
// flight: the admission rule of every model that hands requests off
// (connio.Ring.Admits): fewer than Options.MaxInFlight in flight, and the
// output pending plus the output reserved by the requests in flight below
// MaxPendingOutput. With nothing in flight the second condition is
// connio's "output not full", so an idle connection always admits one
// request unless its client is not reading; memory per connection stays
// within MaxPendingOutput plus one response.
func (c *conn) canAdmit() bool { return c.ring.Admits(int64(c.out.Pending())) }

// headReady reports whether the oldest request in flight has its result.
func (c *conn) headReady() bool {
	return c.ring.InFlight() > 0 && (*c.ring.Slot(c.ring.Next())).fut.Ready()
}

// pump decodes buffered requests and dispatches each to the proxy while
// admission allows, reading the socket when no complete request is
// buffered. It returns how many it dispatched, and false if the connection
// failed.
func (c *conn) pump() (dispatched int, ok bool) {
	// Whatever stops it, a request left incomplete starts the header
	// timeout's clock (one held back by admission does not).
	defer func() { c.timer.Partial(!c.closing && c.in.Buffered() > 0 && c.canAdmit()) }()
	for !c.closing && c.canAdmit() {
		got, err := c.in.Next(c.srv.cfg.Codec, &c.req)
		if err != nil {
			c.sh.AddError(wire.KindOf(err).String())
			c.decodeErr = err
			c.closing = true
			break
		}
		if got {
			c.dispatch()
			dispatched++
			continue
		}
		if !c.readable || c.reads == connio.MaxReadsPerEvent {
			break
		}
		r, err := c.in.ReadOnce(c.fd, &c.timer, c.sh)
		c.reads++
		switch r {
		case connio.ReadFailed:
			connio.CountIOError(c.sh, err)
			return dispatched, false
		case connio.ReadEnd:
			// End of stream (a partial request left was counted as
			// truncated). The requests in flight are still answered (the
			// client may have only shut down its sending side).
			c.closing = true
		}
		// Unless the read filled the space, the socket is very likely
		// drained: the armed interest reports whatever arrives meanwhile.
		c.readable = r == connio.ReadMore
		if r == connio.ReadNone || r == connio.ReadEnd {
			break
		}
	}
	return dispatched, true
}

// dispatch puts the decoded request in flight: it takes the next slot and
// invokes the proxy method for the request's operation with the slot's
// future.
func (c *conn) dispatch() {
	r := &c.req
	var sl *slot
	if k := len(c.free); k > 0 {
		sl = c.free[k-1]
		c.free[k-1] = nil
		c.free = c.free[:k-1]
	} else {
		sl = &slot{}
		sl.fut.conn = c
	}
	sl.id, sl.close, sl.body = r.ID, r.Close, r.Op == wire.OpWork
	sl.est = connio.Reserve(r)
	seq, _ := c.ring.Push(sl.est)
	*c.ring.Slot(seq) = sl
	if r.Close {
		c.closing = true
	}
	f, p := &sl.fut, c.srv.proxy
	w := workSpec{cpu: r.CPU, block: r.Block}
	switch r.Op {
	case wire.OpWork:
		p.work(f, c.home, w, r.ID, r.Size)
	case wire.OpBalance:
		p.balance(f, r.Account, w)
	case wire.OpDeposit:
		p.deposit(f, r.Account, r.Amount, w)
	case wire.OpWithdraw:
		p.withdraw(f, r.Account, r.Amount, r.Timeout, w)
	case wire.OpTransfer:
		p.transfer(f, r.Account, r.To, r.Amount, w)
	case wire.OpTotal:
		p.total(f, w, false)
	default:
		if !r.Op.Valid() {
			f.complete(nil, 0, errBadOp)
		} else {
			f.complete(nil, 0, errUnhandledOp)
		}
	}
}

// collect encodes, in request order, the responses of the requests in
// flight whose futures are ready, and then the error response of a request
// that failed to decode once everything before it has been answered.
func (c *conn) collect() {
	for c.ring.InFlight() > 0 {
		p := c.ring.Slot(c.ring.Next())
		sl := *p
		if !sl.fut.Ready() {
			break
		}
		c.encode(sl)
		c.ring.Pop(sl.est)
		*p = nil
		sl.fut.reset()
		c.free = append(c.free, sl)
		c.sh.AddRequests(1)
	}
	if c.ring.InFlight() == 0 && c.decodeErr != nil {
		c.out.AppendError(c.srv.cfg.Codec, c.decodeErr)
		c.decodeErr = nil // closing is set: no further decode error can follow
	}
	if cap(c.scratch) > connio.RetainLimit {
		c.scratch = nil
	}
}

// encode appends the response of a ready slot, byte for byte what
// service.Do would have produced.
func (c *conn) encode(sl *slot) {
	f := &sl.fut
	c.resp = wire.Response{ID: sl.id, Close: sl.close, Status: f.status}
	switch {
	case f.status != wire.StatusOK:
		c.resp.Payload = c.scratch[:0]
	case sl.body:
		c.resp.Payload, c.resp.Pattern = f.payload, f.pattern
	default:
		c.scratch = service.AppendResult(&c.resp, c.scratch[:0], f.value, nil)
	}
	c.out.AppendResponse(c.srv.cfg.Codec, &c.resp)
}

// flush writes pending output until it is all written or the socket would
// block. It reports false if the connection failed.
func (c *conn) flush() bool {
	if err := c.out.Flush(c.fd, c.sh); err != nil {
		connio.CountIOError(c.sh, err)
		return false
	}
	return true
}

// close removes the connection from the handle set and the server and
// releases it. Requests still in flight are dropped with it: their futures
// complete into slots nobody reads. c.mu is held.
func (c *conn) close() {
	if c.closed {
		return
	}
	// ErrClosed (shutting down) is the only expected failure; Close
	// releases the descriptor either way.
	_ = c.srv.set.Unregister(c.fd)
	c.srv.reaper.Untrack(c.fd)
	c.srv.connsMu.Lock()
	delete(c.srv.conns, c)
	c.srv.connsMu.Unlock()
	c.release()
}

// release closes the descriptor, gives back its place under the
// connection cap and retires the connection's counters.
// c.mu is held, or no other thread runs (Server.Close).
func (c *conn) release() {
	c.closed = true
	if err := handleset.Close(c.fd); err != nil {
		c.sh.AddError(models.ErrIO)
	}
	c.srv.limit.Release()
	c.sh.AddClosed()
	c.srv.counters.Retire(c.sh)
	c.in, c.out, c.scratch, c.free = connio.In{}, connio.Out{}, nil, nil
}
