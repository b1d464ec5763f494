package halfsynchalfreactive

// prioHeap is the request queue's order with Options.Priority: the queued
// request with the highest priority (wire.Request.Priority) first, and
// among equal priorities the one queued first. It is a binary min-heap of
// keys (255 − priority) << 56 | arrival number, so that a key comparison
// decides both; it never grows beyond the queue's capacity. Every method is
// called with queue.mu held.
//
// Note: the arrival number is kept here, not in the request object: a field
// more would move the request object into the next allocation size class,
// which the default variant would pay on every request (see wire's
// Response packing for the same reason).
type prioHeap struct {
	items []prioItem
	seq   uint64
}

type prioItem struct {
	key uint64
	r   *request
}

// seqMask keeps the arrival number below the priority's byte; it wraps
// after 2^56 requests, far beyond any run.
const seqMask = 1<<56 - 1

func newPrioHeap(capacity int) *prioHeap {
	return &prioHeap{items: make([]prioItem, 0, capacity)}
}

func (h *prioHeap) push(r *request) {
	h.seq++
	it := prioItem{key: uint64(255-r.req.Priority)<<56 | h.seq&seqMask, r: r}
	h.items = append(h.items, it)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.items[p].key <= it.key {
			break
		}
		h.items[i] = h.items[p]
		i = p
	}
	h.items[i] = it
}

// pop removes and returns the first request; the heap must not be empty.
func (h *prioHeap) pop() *request {
	top := h.items[0].r
	n := len(h.items) - 1
	last := h.items[n]
	h.items[n] = prioItem{}
	h.items = h.items[:n]
	if n > 0 {
		i := 0
		for {
			c := 2*i + 1
			if c >= n {
				break
			}
			if c+1 < n && h.items[c+1].key < h.items[c].key {
				c++
			}
			if last.key <= h.items[c].key {
				break
			}
			h.items[i] = h.items[c]
			i = c
		}
		h.items[i] = last
	}
	return top
}
