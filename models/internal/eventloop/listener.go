package eventloop

import (
	"errors"

	"concbench/handleset"
)

// OwnListener is a listening socket that one loop alone accepts from: a
// SO_REUSEPORT socket of a handleset.ListenGroup, a socket per loop, to
// which the kernel's hash of each connection's addresses sends it. It is
// registered in its loop's set, level-triggered, for the loop's whole life
// but for an accept back-off. It is the accept side of nginx's reuseport
// listeners and of the partitioned server: no thread ever coordinates with
// another to accept.
type OwnListener struct {
	l   *Loop
	ln  *handleset.Listener
	max int  // connections taken per event
	in  bool // registered in l.Set
}

// NewOwnListener returns loop l's listener ln, taking up to max
// connections per event (Loop.Accept). Arm registers it.
func NewOwnListener(l *Loop, ln *handleset.Listener, max int) *OwnListener {
	return &OwnListener{l: l, ln: ln, max: max}
}

// Arm registers the listener in its loop's set, readable, level-triggered,
// so that a connection left in its backlog is reported again.
func (o *OwnListener) Arm() error {
	if err := o.l.Set.Register(o.ln.Fd(), handleset.Readable, o); err != nil {
		return err
	}
	o.in = true
	return nil
}

// HandleEvent accepts (Loop.Accept); on an accept back-off it takes the
// listener out of the set until Resume puts it back.
func (o *OwnListener) HandleEvent(int, handleset.Events) {
	if _, backoff := o.l.Accept(o.ln, o.max); backoff && o.in {
		o.in = false
		if err := o.l.Set.Unregister(o.ln.Fd()); err != nil && !errors.Is(err, handleset.ErrClosed) {
			o.l.g.Fail(err)
		}
	}
}

// Resume puts the listener back in the set once an accept back-off is
// over; the loop's thread calls it every round, before it waits.
func (o *OwnListener) Resume() {
	if !o.in && o.l.PauseOver() {
		if err := o.Arm(); err != nil && !errors.Is(err, handleset.ErrClosed) {
			o.l.g.Fail(err)
		}
	}
}

// Run is the round loop of a thread whose loop accepts from its own
// listener alone: resume the listener if a back-off ended, then a Round
// that dispatches every event in the order the set reported them, until
// the group stops.
func (o *OwnListener) Run() {
	l := o.l
	for {
		o.Resume()
		err := l.Round(-1, func(evs []handleset.Event) {
			for _, ev := range evs {
				l.Dispatch(ev)
			}
		})
		if err != nil {
			l.g.Stop(err)
			return
		}
	}
}
