package stats

import (
	"math"

	moremath "github.com/aclements/go-moremath/stats"
	"math/rand/v2"
	"testing"
)

// censoredArm returns an arm whose every round is a bound of kind c.
func censoredArm(name string, c Censor, xs ...float64) Arm {
	a := rounds(name, xs...)
	a.Censored = map[int]Censor{}
	for r := range a.Values {
		a.Censored[r] = c
	}
	return a
}

// TestCensoredPair checks values capped by the load generator's ceiling
// ("≥ x"): two capped configurations are never equivalent, a capped
// leader can still be shown ahead of a rival below its cap, and a capped
// rival is never shown behind.
func TestCensoredPair(t *testing.T) {
	higher := DecideOptions{HigherIsBetter: true, Margin: 0.10}
	t.Run("both beyond the generator", func(t *testing.T) {
		d := Decide([]Arm{
			censoredArm("a", AtLeast, 1000, 1000, 1000, 1000, 1000),
			censoredArm("b", AtLeast, 1000, 1000, 1000, 1000, 1000),
		}, higher)
		if r := d.Rivals[0]; d.Verdict != Undecided || r.Status != Undetermined || r.Dropped != 5 || r.Rounds != 0 {
			t.Errorf("Decide = %s, rival %+v; want undecided, every round dropped", d, r)
		}
	})
	t.Run("a capped leader ahead of a rival below its cap", func(t *testing.T) {
		d := Decide([]Arm{
			censoredArm("capped", AtLeast, 1000, 1000, 1000, 1000, 1000),
			rounds("slow", 500, 520, 490, 510, 505),
		}, higher)
		if r := d.Rivals[0]; d.Verdict != Winner || r.Status != Behind || r.Bounded != 5 {
			t.Errorf("Decide = %s, rival %+v; want the capped one the winner", d, r)
		}
	})
	t.Run("a capped rival is not behind", func(t *testing.T) {
		// b's median is below a's, but b is only known to be beyond 900.
		d := Decide([]Arm{
			rounds("a", 1200, 1210, 1190, 1205, 1200),
			censoredArm("b", AtLeast, 900, 900, 900, 900, 900),
		}, higher)
		if r := d.Rivals[0]; d.Verdict != Undecided || r.Status != Undetermined || !math.IsNaN(r.PBehind) {
			t.Errorf("Decide = %s, rival %+v; want no claim", d, r)
		}
	})
	t.Run("a bound is never within the margin", func(t *testing.T) {
		d := Decide([]Arm{
			censoredArm("a", AtLeast, 1000, 1000, 1000, 1000, 1000),
			rounds("b", 990, 995, 1000, 985, 992),
		}, higher)
		if r := d.Rivals[0]; r.Status != Undetermined || !math.IsNaN(r.PEquiv) {
			t.Errorf("rival %+v; want no equivalence claim", r)
		}
	})
}

// TestBothZeroRounds checks that a round in which both configurations
// met nothing (both bounds below what they probed) drops out, rather than
// count as an exact tie that pulls toward equivalence.
func TestBothZeroRounds(t *testing.T) {
	opt := DecideOptions{HigherIsBetter: true, Margin: 0.10}
	a := rounds("a", 100, 0, 0, 103, 99, 101)
	b := rounds("b", 70, 0, 0, 72, 69, 71)
	d := Decide([]Arm{a, b}, opt)
	if r := d.Rivals[0]; r.Dropped != 2 || r.Rounds != 4 || r.Status != Behind {
		t.Errorf("rival %+v; want 2 rounds dropped, behind on the other 4", r)
	}
	// Equal arms with many both-zero rounds: the zeros add no evidence of
	// equivalence, so it rests on the measured rounds alone.
	x := rounds("x", 100, 0, 0, 0, 0, 0, 0, 130)
	y := rounds("y", 120, 0, 0, 0, 0, 0, 0, 105)
	if r := Decide([]Arm{x, y}, opt).Rivals[0]; r.Status == Equivalent || r.Rounds != 2 {
		t.Errorf("rival %+v; want 2 rounds, not shown equivalent", r)
	}
}

// TestZeroOfACostIsWorst checks that a value of 0 of a lower-is-better
// metric (a counter that read nothing) is the worst of its arm, never
// the best value there is: it does not make its configuration look
// cheaper, and no claim in its favour rests on it.
func TestZeroOfACostIsWorst(t *testing.T) {
	opt := DecideOptions{HigherIsBetter: false, Margin: 0.10}
	d := Decide([]Arm{rounds("zeros", 0, 0, 0, 50, 52), rounds("b", 40, 41, 39, 40, 40)}, opt)
	if d.Best != "b" {
		t.Errorf("best %s, want b (the zeros stand at the other arm's own highest, 52)", d.Best)
	}
	d = Decide([]Arm{rounds("a", 10, 10, 0, 10, 10), rounds("b", 12, 12, 12, 12, 12)}, opt)
	if r := d.Rivals[0]; d.Best != "a" || r.Status != Undetermined || r.Bounded != 1 {
		t.Errorf("Decide = %s, rival %+v; want no claim for a, whose 0 overstates its lead", d, r)
	}
}

// equalCell returns k arms of n rounds with the same true value: a round
// effect shared by all (the machine's drift) and noise of sd on the
// logarithm.
func equalCell(rng *rand.Rand, k, n int, sd float64) []Arm {
	arms := make([]Arm, k)
	for i := range arms {
		arms[i] = Arm{Name: string(rune('a' + i)), Values: map[int]float64{}}
	}
	for r := range n {
		drift := rng.NormFloat64() * 0.2
		for i := range arms {
			arms[i].Values[r] = 1000 * math.Exp(drift+sd*rng.NormFloat64())
		}
	}
	return arms
}

// TestPartialClaimsAmongEqualArms checks the error control of an
// undecided cell's claims: among six configurations of equal truth, a
// claim that one is behind the best by more than the margin is false. The
// per-comparison tests make such a claim in more cells than the level;
// with Holm's adjustment within the cell (Rival.Held) it stays within
// the level, with and without the pooled variance. Seeded: the counts are
// fixed.
func TestPartialClaimsAmongEqualArms(t *testing.T) {
	const cells, alpha = 2000, 0.05
	for _, pooled := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		opt := DecideOptions{HigherIsBetter: false, Margin: 0.25, Alpha: alpha, Pool: pooled}
		raw, held, decided := 0, 0, 0
		for range cells {
			d := Decide(equalCell(rng, 6, 5, 0.3), opt)
			anyRaw, anyHeld := false, false
			for _, r := range d.Rivals {
				if r.Status == Behind {
					anyRaw = true
					anyHeld = anyHeld || r.Held
				}
			}
			if anyRaw {
				raw++
			}
			if anyHeld {
				held++
			}
			if d.Verdict == Winner || d.Verdict == Group && len(d.Rest) > 0 {
				decided++
			}
		}
		rate := float64(held) / cells
		t.Logf("pooled %t: a false behind in %d of %d cells per comparison, %d with Holm (%.3f), %d false decisions", pooled, raw, cells, held, rate, decided)
		if lo, _ := ClopperPearson(held, cells, 0.95); lo > alpha {
			t.Errorf("pooled %t: Holm's claims false in %.3f of cells (95%% interval above %.3f), want at most the level %g", pooled, rate, lo, alpha)
		}
		if _, hi := ClopperPearson(decided, cells, 0.95); hi < 0 || float64(decided)/cells > alpha {
			t.Errorf("pooled %t: %d of %d cells decided a false winner or a group ahead of others", pooled, decided, cells)
		}
	}
}

// TestNearBestAtTheLeastFavourable checks Near's error control where it
// is hardest: one configuration truly ahead of five equal others by just
// more than the margin, so that a Near naming any of the five is false.
// The data put one of the five first in many cells; Near's Bonferroni
// bound over the rivals keeps its false claims within the level, and
// the cells where it names the true best are most of its decisions.
// Seeded: the counts are fixed.
func TestNearBestAtTheLeastFavourable(t *testing.T) {
	const cells, alpha, margin = 2000, 0.05, 0.10
	gap := 1.01 * math.Log(1+margin)
	for _, sd := range []float64{0.03, 0.08} {
		rng := rand.New(rand.NewPCG(5, 6))
		opt := DecideOptions{HigherIsBetter: true, Margin: margin, Alpha: alpha, Pool: true}
		near, falseNear, misled := 0, 0, 0
		for range cells {
			arms := equalCell(rng, 6, 5, sd)
			for r, v := range arms[0].Values {
				arms[0].Values[r] = v * math.Exp(gap)
			}
			d := Decide(arms, opt)
			if d.Best != "a" {
				misled++
			}
			if d.Verdict == Near {
				near++
				if d.Best != "a" {
					falseNear++
				}
			}
		}
		t.Logf("sd %g: the data put another first in %d of %d cells; Near in %d, %d of them false", sd, misled, cells, near, falseNear)
		if lo, _ := ClopperPearson(falseNear, cells, 0.95); lo > alpha {
			t.Errorf("sd %g: a false Near in %d of %d cells (95%% interval above %.3f), want at most the level %g", sd, falseNear, cells, lo, alpha)
		}
		if near == 0 {
			t.Errorf("sd %g: no cell decided Near: the test cannot tell the rule from one that never decides", sd)
		}
	}
}

// TestPooledVariance checks the pooled residual variance: six arms of
// equal spread pool (rounds as blocks, (6−1)(5−1) = 20 degrees of
// freedom), which decides a comparison the pair's own 4 degrees of
// freedom leave open; arms of very different spread do not pool.
func TestPooledVariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var arms []Arm
	for i, f := range []float64{1, 1.02, 1.5, 1.55, 1.6, 1.65} {
		a := Arm{Name: string(rune('a' + i)), Values: map[int]float64{}}
		arms = append(arms, a)
		_ = f
	}
	for r := range 5 {
		drift := rng.NormFloat64() * 0.2
		for i, f := range []float64{1, 1.02, 1.5, 1.55, 1.6, 1.65} {
			arms[i].Values[r] = 100 * f * math.Exp(drift+0.03*rng.NormFloat64())
		}
	}
	opt := DecideOptions{HigherIsBetter: false, Margin: 0.10, Pool: true}
	d := Decide(arms, opt)
	if !d.Pool.Used || d.Pool.DF != 20 || d.Pool.Arms != 6 {
		t.Fatalf("pool %+v, want used with 20 degrees of freedom over 6 arms", d.Pool)
	}
	for _, r := range d.Rivals {
		if !r.Pooled || r.DF != 20 {
			t.Errorf("rival %+v, want the pooled spread", r)
		}
	}
	if d.Verdict != Group || len(d.Group) != 2 {
		t.Errorf("Decide = %s, want a and b within the margin ahead of the rest", d)
	}
	// One arm far noisier than the rest: Bartlett's test rejects.
	for r := range 5 {
		arms[5].Values[r] *= math.Exp(0.8 * rng.NormFloat64())
	}
	if d := Decide(arms, opt); d.Pool.Used || d.Pool.BartlettP >= poolAlpha {
		t.Errorf("pool %+v, want not used: one arm's spread differs", d.Pool)
	}
}

// TestBlockFit checks the additive fit against a design solved by hand:
// with every cell present the residual degrees of freedom are
// (arms−1)(rounds−1), and a missing cell takes one away.
func TestBlockFit(t *testing.T) {
	var cells []BlockCell
	for a := range 3 {
		for r := range 4 {
			cells = append(cells, BlockCell{Arm: a, Round: r, Y: float64(a) + float64(r*r) + 0.1*float64((a*7+r*3)%5)})
		}
	}
	f := Block(cells)
	if f.DF != 6 || f.Arms != 3 || f.Rounds != 4 {
		t.Errorf("fit %+v, want 6 degrees of freedom", f)
	}
	g := Block(cells[1:])
	if g.DF != 5 || !(g.SS <= f.SS+1e-12) {
		t.Errorf("fit without a cell %+v, want 5 degrees of freedom and no more residual", g)
	}
	// An additive design has no residual.
	var exact []BlockCell
	for a := range 3 {
		for r := range 4 {
			if a != 1 || r != 2 {
				exact = append(exact, BlockCell{Arm: a, Round: r, Y: float64(a)*2 + float64(r)})
			}
		}
	}
	if h := Block(exact); h.SS > 1e-18 {
		t.Errorf("additive design: residual %g, want 0", h.SS)
	}
}

// TestNeedRange checks that the repetitions a decision needs come as a
// range around their estimate, and that a cell asks more power of each
// rival when several are open.
func TestNeedRange(t *testing.T) {
	opt := DecideOptions{HigherIsBetter: true, Margin: 0.10}
	d := Decide([]Arm{rounds("a", 100, 140, 80, 120, 95), rounds("b", 92, 120, 85, 110, 88)}, opt)
	r := d.Rivals[0]
	if r.Status != Undetermined || !(r.NeedLo <= r.Need && r.Need <= r.NeedHi) || r.NeedLo == r.NeedHi {
		t.Fatalf("rival %+v, want undetermined with need lo ≤ need ≤ hi", r)
	}
	if d.Need != r.Need || d.NeedLo != r.NeedLo || d.NeedHi != r.NeedHi {
		t.Errorf("decision need %d [%d, %d], rival's %d [%d, %d]", d.Need, d.NeedLo, d.NeedHi, r.Need, r.NeedLo, r.NeedHi)
	}
	// The same rival beside a second open one needs more.
	d2 := Decide([]Arm{rounds("a", 100, 140, 80, 120, 95), rounds("b", 92, 120, 85, 110, 88), rounds("c", 93, 119, 86, 111, 87)}, opt)
	for _, r2 := range d2.Rivals {
		if r2.Name == "b" && r2.Status == Undetermined && r2.Need < r.Need {
			t.Errorf("need beside another open rival %d, alone %d: want at least as many", r2.Need, r.Need)
		}
	}
}

// TestTQuantile checks the expansion against the exact quantile.
func TestTQuantile(t *testing.T) {
	for _, v := range []float64{3, 4, 8, 20, 100} {
		for _, p := range []float64{0.8, 0.9, 0.95, 0.975, 0.99} {
			exact := moremath.InvCDF(moremath.TDist{V: v})(p)
			got := tQuantile(moremath.StdNormal.InvCDF(p), v)
			if math.Abs(got-exact) > 0.01*exact {
				t.Errorf("t quantile %g at %g df = %g, exact %g", p, v, got, exact)
			}
		}
	}
}
