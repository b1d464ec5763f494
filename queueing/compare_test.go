package queueing

import (
	"math"
	"testing"

	"concbench/results"
)

// TestCompareQueuesForms checks which closed forms a comparison claims:
// none for M/G/c with c > 1 (there is none), Erlang C only for
// exponential service, and none for a shared queue whose service an
// overhead shifted, except a constant's (still a constant).
func TestCompareQueuesForms(t *testing.T) {
	for _, tc := range []struct {
		dist                     string
		c                        int
		overhead                 float64
		shared, random, roundRob string // the forms' models, "" for none
	}{
		{dist: "exp", c: 4, shared: "M/M/4", random: "4 × M/M/1", roundRob: "4 × E_4/M/1"},
		{dist: "exp", c: 4, overhead: 10e3, random: "4 × M/M/1", roundRob: "4 × E_4/M/1"},
		{dist: "const", c: 4, random: "4 × M/D/1"},
		{dist: "lognormal:1", c: 4, random: "4 × M/G/1 (P-K)"},
		{dist: "bimodal", c: 2, random: "2 × M/G/1 (P-K)"},
		{dist: "const", c: 1, overhead: 10e3, shared: "M/D/1", random: "M/D/1", roundRob: "M/D/1"},
		{dist: "exp", c: 1, overhead: 10e3, shared: "M/G/1 (P-K)", random: "M/M/1", roundRob: "M/M/1"},
	} {
		d, err := results.ParseServiceDist(tc.dist, 100e3)
		if err != nil {
			t.Fatal(err)
		}
		q := CompareQueues(d, tc.c, 0.5, tc.overhead, 1000, 1)
		model := func(th results.Theory) string {
			if !th.Stable {
				return ""
			}
			return th.Model
		}
		if model(q.SharedForm) != tc.shared || model(q.RandomForm) != tc.random || model(q.RoundRobinForm) != tc.roundRob {
			t.Errorf("%s c=%d overhead %v: forms %q %q %q, want %q %q %q", tc.dist, tc.c, tc.overhead,
				model(q.SharedForm), model(q.RandomForm), model(q.RoundRobinForm), tc.shared, tc.random, tc.roundRob)
		}
		if tc.overhead > 0 && tc.c == 1 && math.Abs(q.SharedForm.ServiceNs-110e3) > 1e-12*110e3 {
			t.Errorf("%s c=1: the shared form's service %v, want the mean plus the overhead", tc.dist, q.SharedForm.ServiceNs)
		}
	}
}
