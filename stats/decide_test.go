package stats

import (
	"slices"
	"testing"
)

// rounds returns an arm's values by round 0, 1, ….
func rounds(name string, xs ...float64) Arm {
	a := Arm{Name: name, Values: map[int]float64{}}
	for i, x := range xs {
		a.Values[i] = x
	}
	return a
}

// TestDecide checks the decision rule on made-up repetitions with known
// effects: a clear winner, a pair equivalent within the margin ahead of
// the rest, an undecided pair with the repetitions it needs, a rival at
// the margin (neither behind nor within it), values of 0,
// the lower-is-better direction, and the unpaired fallback.
func TestDecide(t *testing.T) {
	higher := DecideOptions{HigherIsBetter: true, Margin: 0.10}
	lower := DecideOptions{HigherIsBetter: false, Margin: 0.10}
	for _, tc := range []struct {
		name      string
		arms      []Arm
		opt       DecideOptions
		want      Verdict
		wantBest  string
		wantGroup []string
		check     func(t *testing.T, d Decision)
	}{
		{
			name: "a clear winner",
			arms: []Arm{
				rounds("b", 80, 82, 79, 81, 80),
				rounds("a", 100, 103, 98, 101, 100),
				rounds("c", 60, 61, 59, 62, 60),
			},
			opt: higher, want: Winner, wantBest: "a", wantGroup: []string{"a"},
			check: func(t *testing.T, d Decision) {
				if r := d.Rivals[0]; r.Name != "b" || r.Status != Behind || !r.Paired || r.Ratio < 1.2 || r.Ratio > 1.3 {
					t.Errorf("runner-up %+v, want b behind by about 1.25×, paired", r)
				}
			},
		},
		{
			name: "an equivalent pair ahead of the rest",
			arms: []Arm{
				rounds("a", 100, 101, 99, 100.5, 100),
				rounds("b", 99, 100, 98.5, 99.5, 99.2),
				rounds("c", 60, 61, 59, 62, 60),
			},
			opt: higher, want: Group, wantBest: "a", wantGroup: []string{"a", "b"},
			check: func(t *testing.T, d Decision) {
				if !slices.Equal(d.Rest, []string{"c"}) || d.Rivals[0].Status != Equivalent || d.Rivals[0].PEquiv >= 0.05 {
					t.Errorf("rest %v, rivals %+v", d.Rest, d.Rivals)
				}
			},
		},
		{
			name: "an undecided pair, and what it needs",
			arms: []Arm{
				rounds("a", 100, 140, 80, 120, 95),
				rounds("b", 110, 100, 90, 100, 85),
			},
			opt: higher, want: Undecided, wantBest: "a", wantGroup: []string{"a"},
			check: func(t *testing.T, d Decision) {
				// b is 1.09× behind, at the margin: showing it behind or
				// within takes 1000 or more rounds; showing that it is
				// not ahead of a (Near) far fewer, and the cell's need is
				// the cheaper.
				if r := d.Rivals[0]; d.Need <= 5 || r.Status != Undetermined || r.Need != MaxNeed || d.Need >= r.Need || d.NeedLo > d.Need || d.NeedHi < d.Need {
					t.Errorf("need %d (%d–%d), rival %+v; want more than the 5 repetitions measured, fewer than the rival's %d", d.Need, d.NeedLo, d.NeedHi, r, MaxNeed)
				}
			},
		},
		{
			// Old rule: b was "behind" (significantly worse, by any
			// amount), and in another run of the same experiment shown
			// "within the margin": one configuration both in and out of
			// the leading group. Behind now means beyond the margin.
			// Neither behind nor within the margin, but clearly not
			// ahead of the best: the best is within the margin of the
			// true best whichever it is (Near).
			name: "a rival at the margin is undetermined, not behind; the best is near",
			arms: []Arm{
				rounds("a", 100, 101, 99, 100, 100.5),
				rounds("b", 91, 90, 90.5, 91.5, 90.8),
			},
			opt: higher, want: Near, wantBest: "a", wantGroup: []string{"a", "b"},
			check: func(t *testing.T, d Decision) {
				r := d.Rivals[0]
				if r.Status != Undetermined || r.Ratio < 1.09 || r.Ratio > 1.12 || r.PBehind < 0.05 || r.PEquiv < 0.05 {
					t.Errorf("rival %+v, want undetermined at about 1.1×, neither p below 0.05", r)
				}
			},
		},
		{
			name: "values of 0 are the worst of their own arm",
			arms: []Arm{
				rounds("a", 1000, 1020, 990, 1010, 1005),
				rounds("none", 0, 0, 0, 0, 0),
				rounds("some", 700, 0, 690, 710, 705),
			},
			opt: higher, want: Winner, wantBest: "a",
			check: func(t *testing.T, d Decision) {
				if d.Bounds != 1 {
					t.Errorf("bounds %d, want 1 (some's 0 stands at its own lowest, 690, as at most that)", d.Bounds)
				}
				if !slices.Equal(d.Rest, []string{"some", "none"}) {
					t.Errorf("rest %v", d.Rest)
				}
				if r := d.Rivals[0]; r.Bounded != 1 || r.Status != Behind {
					t.Errorf("some: %+v, want behind with one bounded round", r)
				}
			},
		},
		{
			name: "lower is better",
			arms: []Arm{
				rounds("slow", 300, 310, 290, 305, 300),
				rounds("fast", 100, 105, 98, 102, 101),
			},
			opt: lower, want: Winner, wantBest: "fast",
			check: func(t *testing.T, d Decision) {
				if r := d.Rivals[0]; r.Ratio < 2.8 || r.Ratio > 3.2 {
					t.Errorf("ratio %g, want about 3 (the rival's over the best's)", r.Ratio)
				}
			},
		},
		{
			name: "unpaired when the rounds differ",
			arms: []Arm{
				{Name: "a", Values: map[int]float64{0: 100, 2: 102, 4: 99}},
				{Name: "b", Values: map[int]float64{1: 70, 3: 71, 5: 69}},
			},
			opt: DecideOptions{HigherIsBetter: true, Margin: 0.10, Unpaired: true}, want: Winner, wantBest: "a",
			check: func(t *testing.T, d Decision) {
				if d.Rivals[0].Paired || d.Rivals[0].Rounds != 0 {
					t.Errorf("rival %+v, want an unpaired comparison", d.Rivals[0])
				}
			},
		},
		{
			// The who-wins table's comparisons: a round missing on one
			// side is missing on both, never compared unpaired.
			name: "no unpaired fallback unless asked for",
			arms: []Arm{
				{Name: "a", Values: map[int]float64{0: 100, 2: 102, 4: 99}},
				{Name: "b", Values: map[int]float64{1: 70, 3: 71, 5: 69}},
			},
			opt: higher, want: Undecided, wantBest: "a",
			check: func(t *testing.T, d Decision) {
				if r := d.Rivals[0]; r.Status != Undetermined || r.Rounds != 0 || r.Need != -1 {
					t.Errorf("rival %+v, want undetermined on 0 shared rounds", r)
				}
			},
		},
		{name: "one configuration", arms: []Arm{rounds("a", 1, 2, 3)}, opt: higher, want: NoTest},
		{name: "nothing met the objective", arms: []Arm{rounds("a", 0, 0), rounds("b", 0, 0)}, opt: higher, want: NoTest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.arms, tc.opt)
			if d.Verdict != tc.want || tc.wantBest != "" && d.Best != tc.wantBest || tc.wantGroup != nil && !slices.Equal(d.Group, tc.wantGroup) {
				t.Fatalf("Decide = %s (%+v); want %s, best %q, group %v", d, d, tc.want, tc.wantBest, tc.wantGroup)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

// TestNeedShrinksWithSpread checks the estimate of repetitions: the same
// mean difference needs more repetitions at a larger spread.
func TestNeedShrinksWithSpread(t *testing.T) {
	delta := 0.0953
	in := func(mean, sd float64) needInput {
		return needInput{mean: mean, sd: sd, df: 4, n: 5, canEquiv: true, canBehind: true}
	}
	narrow, wide := needFor(in(0.2, 0.1), 0.1, delta, 0.05, 0.8), needFor(in(0.2, 0.4), 0.4, delta, 0.05, 0.8)
	if narrow < 3 || wide <= narrow {
		t.Errorf("need at sd 0.1 = %d, at sd 0.4 = %d; want more at the larger spread", narrow, wide)
	}
	if got := needFor(in(-0.5, 0.1), 0.1, delta, 0.05, 0.8); got != -1 {
		t.Errorf("need of a best that is worse on average beyond the margin = %d, want -1", got)
	}
}
