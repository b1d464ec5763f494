package leaderfollowers

import (
	"container/heap"
	"math"
	"slices"
	"sync/atomic"

	"concbench/internal/futex"
)

// member is one pool thread as the follower set sees it. It is always
// heap-allocated and never copied: its Parker is a futex word.
type member struct {
	id   int // index in the pool, for tests and messages
	nice int // promotion=priority: lower nice is higher priority

	parker futex.Parker // the follower's private synchronizer (lifo, fifo, priority)

	// Guarded by pool.mu.
	seq      uint64 // when the member last joined the follower set (FIFO ties)
	promoted bool   // set by the promoter, consumed by the member
}

// joinResult is what pool.join made of the calling thread.
type joinResult int

const (
	joinClosed   joinResult = iota // the pool is closed: the thread exits
	joinLeader                     // there was no leader: the thread took the role at once
	joinPromoted                   // the thread waited as a follower and was promoted
)

// pool is the Thread Pool participant without its threads: who leads, who
// follows in which order, and the protocol by which a thread (re)joins and a
// leader promotes a successor (implementation activities 3–5 of the
// pattern). It is a monitor object; its lock is a futex.Mutex held only for
// a few loads and stores, never across a system call other than the lock's
// own futex wait.
//
// Leadership is handed over, never competed for: promote names the next
// leader (or, in os order, reserves the role for whichever follower the
// kernel wakes) under the lock, so between the old leader's promote and the
// new leader's return from join no third thread can take the role. The
// exception is os-vacant order, the paper's own: promote leaves the role
// vacant and wakes a follower, and the first thread to join under the lock
// takes it, the woken follower or a rejoining processing thread. A
// promote that finds no follower leaves the pool without a leader, and the
// next thread to join takes the role without parking.
type pool struct {
	mu     futex.Mutex
	q      followerQueue // the follower set in promotion order; nil for os
	leader *member       // nil: no leader; &pending: an os grant not yet taken
	vacant bool          // os-vacant: a promotion leaves the role to the first to join
	closed bool
	seq    uint64

	// nfollowers mirrors the size of the follower set (stored under mu), so
	// that it can be read without the lock: Stats reports it, and tests and
	// the benchmark wait on it.
	nfollowers atomic.Int32

	// promotion=os: followers sleep on one shared word and the kernel
	// chooses which of them a promotion wakes.
	word    futex.Word
	waiting int       // followers on word that hold no grant
	grants  int       // promotions not yet taken by a follower (0 or 1)
	pending member    // the leader while a grant is untaken
	shared  []*member // the followers on word, in joining order (grant holders included)

	// Promotion-order counters, guarded by mu (read by counts):
	// promotions made with two or more followers to choose from, how many
	// of those promoted the follower that had waited longest, and (os)
	// follower wake-ups that found no grant to take; (os-vacant) vacant
	// roles that a rejoining thread took before the woken follower.
	choices, longest, rewaits, rejoins uint64
}

// orderCounts are pool's promotion-order counters (Stats.Counters
// promotions_with_choice, promoted_longest_waiting, os_rewaits,
// vacancy_rejoins).
type orderCounts struct{ choices, longest, rewaits, rejoins uint64 }

// counts returns the promotion-order counters.
func (p *pool) counts() orderCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return orderCounts{p.choices, p.longest, p.rewaits, p.rejoins}
}

// newPool returns an empty pool for n threads with the given promotion order.
func newPool(order Promotion, n int) *pool {
	p := &pool{}
	switch order {
	case LIFO:
		p.q = &stack{s: make([]*member, 0, n)}
	case FIFO:
		p.q = &ring{buf: make([]*member, n)}
	case Priority:
		p.q = &prioHeap{h: make([]*member, 0, n)}
	case OS, OSVacant:
		// followers share p.word
		p.shared = make([]*member, 0, n)
		p.vacant = order == OSVacant
	default:
		panic("leaderfollowers: unknown promotion order " + order.String())
	}
	return p
}

// join is the (re)join protocol of implementation activity 4: a thread that
// is done processing calls it to become the leader at once if there is none,
// or else to wait as a follower until a leader promotes it. It returns
// joinClosed, without leading, once the pool is closed.
//
// No wake-up is lost: a follower enters the follower set under the lock and
// parks after releasing it. A promoter that picks it in between sets
// promoted and unparks it before it parks; the Parker keeps that permit, so
// Park returns at once. In os order the follower reads the shared word's
// value under the lock and the promoter changes the word under the lock
// before waking, so a follower that has not yet gone to sleep finds the
// value changed and FUTEX_WAIT returns at once.
func (p *pool) join(m *member) joinResult {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return joinClosed
	}
	if p.leader == nil {
		if p.vacant && p.waiting > 0 {
			// os-vacant: a promotion left the role vacant with followers
			// waiting, so it woke one; this thread came first.
			p.rejoins++
		}
		p.leader = m
		p.mu.Unlock()
		return joinLeader
	}
	if p.q == nil {
		return p.waitShared(m)
	}
	p.seq++
	m.seq = p.seq
	p.q.push(m)
	p.nfollowers.Store(int32(p.q.len()))
	for {
		p.mu.Unlock()
		m.parker.Park()
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return joinClosed
		}
		if m.promoted {
			m.promoted = false
			p.mu.Unlock()
			return joinPromoted
		}
		// A permit with neither promotion nor close: m is still in the
		// follower set (only promote and close take members out, and both
		// set their flag first). Park again.
	}
}

// waitShared is join's follower wait in os order; p.mu is held on entry and
// released on return.
func (p *pool) waitShared(m *member) joinResult {
	p.waiting++
	p.nfollowers.Store(int32(p.waiting))
	p.seq++
	m.seq = p.seq
	p.shared = append(p.shared, m)
	for {
		v := p.word.Load()
		p.mu.Unlock()
		p.word.Wait(v)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return joinClosed
		}
		// os takes a grant; os-vacant a vacant role, the follower leaving
		// the set only now (its promote did not take it out).
		if vacant := p.vacant && p.leader == nil; p.grants > 0 || vacant {
			if vacant {
				p.waiting--
				p.nfollowers.Store(int32(p.waiting))
			} else {
				p.grants--
			}
			p.leader = m
			p.takeShared(m)
			p.mu.Unlock()
			return joinPromoted
		}
		// Woken without a grant to take or a vacant role (another thread
		// took it, or the wake-up was spurious): wait again. The kernel
		// queues the next wait at the futex's tail, behind followers that
		// joined later.
		p.rewaits++
	}
}

// takeShared removes m, which takes the leader role in os order, from
// p.shared and counts whether the kernel's choice was the follower that
// had waited longest. p.mu is held.
func (p *pool) takeShared(m *member) {
	i, oldest := -1, true
	for j, o := range p.shared {
		if o == m {
			i = j
		} else if o.seq < m.seq {
			oldest = false
		}
	}
	if len(p.shared) >= 2 {
		p.choices++
		if oldest {
			p.longest++
		}
	}
	if i >= 0 {
		p.shared = slices.Delete(p.shared, i, i+1)
	}
}

// promote is promote_new_leader of implementation activity 5: the leader m,
// holding an event, hands the leader role to a follower chosen by the
// promotion order and becomes a processing thread. It reports whether a
// follower was there; if none was, the pool has no leader until the next
// join. Calling it from a thread that is not the leader is a programming
// mistake and panics.
func (p *pool) promote(m *member) bool {
	p.mu.Lock()
	if p.leader != m {
		p.mu.Unlock()
		panic("leaderfollowers: promote called by a thread that is not the leader")
	}
	if p.q == nil {
		if p.waiting == 0 {
			p.leader = nil
			p.mu.Unlock()
			return false
		}
		if p.vacant {
			// promote_new_leader as the paper has it: no current leader,
			// and a follower woken; the follower stays in the set until
			// it, or a rejoining thread, takes the role.
			p.leader = nil
			p.word.Add(1)
			p.mu.Unlock()
			p.word.Wake(1)
			return true
		}
		p.waiting--
		p.nfollowers.Store(int32(p.waiting))
		p.grants++
		p.leader = &p.pending
		p.word.Add(1)
		p.mu.Unlock()
		p.word.Wake(1)
		return true
	}
	var oldest uint64
	choice := p.q.len() >= 2
	if choice {
		oldest = p.q.oldestSeq()
	}
	next := p.q.pop()
	if choice {
		p.choices++
		if next.seq == oldest {
			p.longest++
		}
	}
	p.nfollowers.Store(int32(p.q.len()))
	p.leader = next // nil when the set is empty
	if next != nil {
		next.promoted = true
	}
	p.mu.Unlock()
	if next != nil {
		// Outside the lock: next is out of the follower set and waits
		// only for this permit, so nothing can intervene.
		next.parker.Unpark()
	}
	return next != nil
}

// close makes every present and future join return joinClosed and wakes
// every follower. It is idempotent.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	var parked []*member
	if p.q != nil {
		for p.q.len() > 0 {
			parked = append(parked, p.q.pop())
		}
	}
	p.waiting, p.grants = 0, 0
	clear(p.shared)
	p.shared = p.shared[:0]
	p.nfollowers.Store(0)
	p.word.Add(1)
	p.mu.Unlock()
	for _, m := range parked {
		m.parker.Unpark()
	}
	p.word.Wake(math.MaxInt32)
}

// followers returns the number of threads in the follower set, without
// taking the lock.
func (p *pool) followers() int { return int(p.nfollowers.Load()) }

// hasLeader reports whether a thread holds (or, in os order, is about to
// take) the leader role; in os-vacant order a role left vacant for a woken
// follower is no leader.
func (p *pool) hasLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader != nil
}

// followerQueue is the follower set of the orders in which the promoter
// chooses whom to wake: pop returns the next follower to promote, or nil;
// oldestSeq returns the smallest member.seq in the set (the follower that
// has waited longest), for a non-empty set. Every method is called with
// pool.mu held.
type followerQueue interface {
	push(m *member)
	pop() *member
	len() int
	oldestSeq() uint64
}

// stack is promotion=lifo: the most recently parked follower first.
type stack struct{ s []*member }

func (q *stack) push(m *member) { q.s = append(q.s, m) }

func (q *stack) pop() *member {
	n := len(q.s)
	if n == 0 {
		return nil
	}
	m := q.s[n-1]
	q.s[n-1] = nil
	q.s = q.s[:n-1]
	return m
}

func (q *stack) len() int { return len(q.s) }

// oldestSeq is the bottom's: members are pushed in joining order.
func (q *stack) oldestSeq() uint64 { return q.s[0].seq }

// ring is promotion=fifo: the longest-waiting follower first. Its capacity is
// the pool's thread count, so it never grows.
type ring struct {
	buf     []*member
	head, n int
}

func (q *ring) push(m *member) {
	if q.n == len(q.buf) {
		// More followers than threads cannot happen; grow rather than
		// corrupt the queue if it ever does.
		nb := make([]*member, 2*len(q.buf)+1)
		for i := range q.n {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = m
	q.n++
}

func (q *ring) pop() *member {
	if q.n == 0 {
		return nil
	}
	m := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return m
}

func (q *ring) len() int { return q.n }

// oldestSeq is the head's: members are pushed in joining order.
func (q *ring) oldestSeq() uint64 { return q.buf[q.head].seq }

// prioHeap is promotion=priority: the follower with the highest priority
// (lowest nice value) first; among equals, the longest-waiting first, as in
// a real-time scheduler's run queue.
type prioHeap struct{ h []*member }

func (q *prioHeap) push(m *member) { heap.Push(q, m) }

func (q *prioHeap) pop() *member {
	if len(q.h) == 0 {
		return nil
	}
	return heap.Pop(q).(*member)
}

func (q *prioHeap) len() int { return len(q.h) }

func (q *prioHeap) oldestSeq() uint64 {
	oldest := q.h[0].seq
	for _, m := range q.h[1:] {
		oldest = min(oldest, m.seq)
	}
	return oldest
}

// Len, Less, Swap, Push and Pop implement heap.Interface; use push and pop.
func (q *prioHeap) Len() int { return len(q.h) }

func (q *prioHeap) Less(i, j int) bool {
	a, b := q.h[i], q.h[j]
	return a.nice < b.nice || (a.nice == b.nice && a.seq < b.seq)
}

func (q *prioHeap) Swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
}

func (q *prioHeap) Push(x any) {
	q.h = append(q.h, x.(*member))
}

func (q *prioHeap) Pop() any {
	n := len(q.h)
	m := q.h[n-1]
	q.h[n-1] = nil
	q.h = q.h[:n-1]
	return m
}
