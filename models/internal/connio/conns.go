package connio

import (
	"errors"
	"fmt"
	"sync"

	"concbench/handleset"
	"concbench/internal/futex"
	"concbench/models"
)

// Conns is the table of a server's open connections by descriptor, for the
// models whose connections any of their threads may register and close
// (Leader/Followers, the shared queue), and what closing one takes there:
// the header timer stopped (Reaper), the descriptor closed, the place
// under the connection cap given back (Limit) and the close counted. It is
// safe for use by any number of threads; its lock is a futex.Mutex, since
// the threads that take it are locked OS threads.
type Conns[C handleset.EventHandler] struct {
	reaper *Reaper // nil: no header timeout
	limit  *Limit

	mu    futex.Mutex
	conns map[int]C // guarded by mu
}

// NewConns returns an empty table whose connections reaper times (nil if
// the header timeout is disabled) and limit caps.
func NewConns[C handleset.EventHandler](reaper *Reaper, limit *Limit) *Conns[C] {
	return &Conns[C]{reaper: reaper, limit: limit, conns: make(map[int]C)}
}

// Register records c as the connection of fd, a descriptor just accepted
// and admitted (Limit.Accept), starts timing its header with timer, and
// registers c as fd's handler in set, armed once for reading (the
// deactivation protocol of a set that threads share). If set refuses it,
// fd is closed (Close), counted as models.ErrIO unless the set is closed,
// and Register reports false if it is: the server is stopping.
func (t *Conns[C]) Register(set *handleset.Set, fd int, c C, timer *Timer, sh *models.Shard) bool {
	return t.RegisterAs(set, fd, handleset.Readable|handleset.OneShot, c, timer, sh)
}

// RegisterAs is Register with interest ev instead of one-shot reading.
func (t *Conns[C]) RegisterAs(set *handleset.Set, fd int, ev handleset.Events, c C, timer *Timer, sh *models.Shard) bool {
	t.mu.Lock()
	t.conns[fd] = c
	t.mu.Unlock()
	t.reaper.Track(fd, timer)
	err := set.Register(fd, ev, c)
	if err == nil {
		return true
	}
	if !errors.Is(err, handleset.ErrClosed) {
		sh.AddError(models.ErrIO)
	}
	t.Close(fd, sh)
	return !errors.Is(err, handleset.ErrClosed)
}

// Close forgets fd's connection, no longer in any handle set, and closes
// it: its header timer stopped, the descriptor closed, its place under the
// cap given back and the close counted in sh. It is forgotten before its
// descriptor is closed, since the number may be reused by the next accept
// at once.
func (t *Conns[C]) Close(fd int, sh *models.Shard) {
	t.reaper.Untrack(fd)
	t.mu.Lock()
	delete(t.conns, fd)
	t.mu.Unlock()
	handleset.Close(fd)
	t.limit.Release()
	sh.AddClosed()
}

// Len returns how many connections are open.
func (t *Conns[C]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// CloseAll closes every connection left, counting each close in sh, and
// returns the errors of closing. A server's Close calls it once every
// thread that served the connections has exited and the reaper is closed,
// so nothing else closes them meanwhile (the lock is for Len).
func (t *Conns[C]) CloseAll(sh *models.Shard) []error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for fd := range t.conns {
		errs = append(errs, handleset.Close(fd))
		sh.AddClosed()
	}
	clear(t.conns)
	return errs
}

// Fatal is a server's first fatal error: its handle set or its listener
// failed in a way that leaves it unable to serve. The server stops, and
// its Close returns the error. It is safe for use by any number of
// threads; the zero value holds none.
type Fatal struct {
	mu  sync.Mutex
	err error
}

// Set records err, wrapped as "prefix: err", unless an error is recorded
// already: the first failure is the cause, later ones its consequences.
func (f *Fatal) Set(prefix string, err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = fmt.Errorf("%s: %w", prefix, err)
	}
	f.mu.Unlock()
}

// Err returns the error recorded, or nil.
func (f *Fatal) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
