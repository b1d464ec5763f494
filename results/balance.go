package results

import "concbench/models"

// ThreadBalance is how evenly one point's connections and requests
// spread over the threads that serve them (nginx: its worker processes),
// computed by Balance. Concentration on one thread is what the designs
// that let a thread own its connections trade for having no hand-off: a
// thread that owns more connections than its share serves more requests,
// and its requests queue behind each other while other threads idle.
//
// A ratio max/mean is 1 when the threads share evenly and the thread
// count when one thread has everything. Zero means absent, never a
// measured value: max/mean is at least 1 and a share is positive
// wherever they are defined.
type ThreadBalance struct {
	// Role is the threads' role (models.ThreadStats.Role: "pool",
	// "worker"), Threads how many of them there are.
	Role    string `json:"role"`
	Threads int    `json:"threads"`
	// Conns are the connections the threads accepted in the point and
	// ConnsMaxMean the most one thread accepted ÷ the mean; both 0 when
	// the model reports no connections per thread
	// (models.ThreadStats.Accepted).
	Conns        uint64  `json:"conns,omitempty"`
	ConnsMaxMean float64 `json:"conns_max_mean,omitempty"`
	// Requests are the requests the threads served in the window and
	// RequestsMaxMean the most one thread served ÷ the mean; BusiestShare
	// is that thread's share of them, in %. All 0 when the threads served
	// none.
	Requests        uint64  `json:"requests,omitempty"`
	RequestsMaxMean float64 `json:"requests_max_mean,omitempty"`
	BusiestShare    float64 `json:"busiest_share_pct,omitempty"`
}

// Balance computes the balance of the threads in threads (a point's
// per-thread stats: requests over the window, connections accepted over
// the point), and reports false when there is nothing to compute it
// from: no per-thread stats (a model without a pool), or threads that
// neither served a request nor accepted a connection.
//
// Only the threads of one role count, the role whose threads served the
// most requests (the first such role in threads' order on a tie; with no
// requests at all, the role that accepted the most connections): a
// reactor thread beside a worker pool serves no request by design, and
// counting it would call a perfectly even pool unbalanced. Every thread
// of that role counts, idle ones included: an idle thread is the
// imbalance.
func Balance(threads []models.ThreadStats) (ThreadBalance, bool) {
	role, ok := servingRole(threads)
	if !ok {
		return ThreadBalance{}, false
	}
	b := ThreadBalance{Role: role}
	var maxConns, maxReqs uint64
	for _, t := range threads {
		if t.Role != role {
			continue
		}
		b.Threads++
		b.Conns += t.Accepted
		b.Requests += t.Requests
		maxConns = max(maxConns, t.Accepted)
		maxReqs = max(maxReqs, t.Requests)
	}
	n := float64(b.Threads)
	if b.Conns > 0 {
		b.ConnsMaxMean = float64(maxConns) * n / float64(b.Conns)
	}
	if b.Requests > 0 {
		b.RequestsMaxMean = float64(maxReqs) * n / float64(b.Requests)
		b.BusiestShare = 100 * float64(maxReqs) / float64(b.Requests)
	}
	return b, true
}

// servingRole returns the role whose threads served the most requests,
// or, when none served any, accepted the most connections; false if no
// thread did either.
func servingRole(threads []models.ThreadStats) (string, bool) {
	var roles []string
	reqs, conns := map[string]uint64{}, map[string]uint64{}
	for _, t := range threads {
		if _, seen := reqs[t.Role]; !seen {
			roles = append(roles, t.Role)
		}
		reqs[t.Role] += t.Requests
		conns[t.Role] += t.Accepted
	}
	for _, by := range []map[string]uint64{reqs, conns} {
		best := -1
		for i, r := range roles {
			if by[r] > 0 && (best < 0 || by[r] > by[roles[best]]) {
				best = i
			}
		}
		if best >= 0 {
			return roles[best], true
		}
	}
	return "", false
}
