package frontend

// deliver hands w its result: it marks it ready (after the result is
// written) and wakes its thread, the specific notification of the paper's
// bound hand-off. w must already be out of the table of expected
// responses. Under the bound pool a leader delivers with handOff instead.
func deliver(w *waiter) {
	w.ready.Store(true)
	w.parker.Unpark()
}

// handOff is the bound pool's delivery by the leader: w leaves the
// follower set and is marked ready in one step under mu, then woken.
// join checks ready and joins the set under mu too, so a delivered
// waiter is never left in the set. (Marked ready after the removal, a
// waiter that joined in between stayed in the set after it returned;
// the next leader to promote it set the role of a thread that had left,
// which its next register reset: the link kept a leader flag and no
// reader, and every request on it hung.)
func (l *link) handOff(w *waiter) {
	l.mu.Lock()
	l.removeFollower(w)
	w.ready.Store(true)
	l.mu.Unlock()
	w.parker.Unpark()
}

// removeFollower drops w from the follower set if it is there. l.mu must
// be held.
func (l *link) removeFollower(w *waiter) {
	for i, f := range l.followers {
		if f == w {
			l.followers = append(l.followers[:i], l.followers[i+1:]...)
			return
		}
	}
}

// join is the bound pool's join, called by a thread that has registered
// and sent its request: if its response has come already it returns; if
// the pool has no leader it becomes the leader; otherwise it parks as a
// follower until a leader hands it its response or promotes it. It
// returns once w.res holds the response.
func (l *link) join(w *waiter) {
	l.mu.Lock()
	switch {
	case w.ready.Load():
		l.mu.Unlock()
		return
	case !l.leader:
		l.leader = true
		l.mu.Unlock()
		l.lead(w)
		return
	}
	l.followers = append(l.followers, w)
	l.mu.Unlock()
	for {
		// Promotion is checked first: a promoted thread whose response
		// a failure then delivered must still give up the leadership.
		if w.role.Load() == roleLeader {
			l.lead(w)
			return
		}
		if w.ready.Load() {
			return
		}
		w.parker.Park()
	}
}

// lead is the leader's loop: it reads responses off the link until its
// own has come. Another thread's response is handed to that thread
// (deliver) while the leader keeps leading; its own makes it promote a
// follower (the one that parked most recently) and return. A link
// failure answers every waiter, the leader included.
func (l *link) lead(w *waiter) {
	l.srv.promotions.Add(1)
	for !w.ready.Load() {
		got, err := l.readOne()
		if got != nil {
			if got == w {
				l.srv.ownResponses.Add(1)
				w.ready.Store(true) // no wake-up: it is this thread
			} else {
				l.srv.handoffs.Add(1)
				l.handOff(got)
			}
		}
		if err != nil {
			l.fail(err)
		}
	}
	l.mu.Lock()
	l.leader = false
	var next *waiter
	if n := len(l.followers); n > 0 {
		next = l.followers[n-1]
		l.followers = l.followers[:n-1]
		l.leader = true
		next.role.Store(roleLeader)
	}
	l.mu.Unlock()
	if next != nil {
		next.parker.Unpark()
	}
}

// wait is the queue hand-off's wait: the thread parks until the link's
// reader thread delivers its response.
func (w *waiter) wait() {
	for !w.ready.Load() {
		w.parker.Park()
	}
}

// readLoop is the reader thread of a link under handoff queue: it reads
// every response and hands each to its waiting thread, until the link
// fails (the back end closed it, or the server is closing).
func (l *link) readLoop() {
	for {
		got, err := l.readOne()
		if got != nil {
			l.srv.handoffs.Add(1)
			deliver(got)
		}
		if err != nil {
			l.fail(err)
			return
		}
	}
}
