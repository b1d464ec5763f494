package gate

import (
	"encoding/json"
	"strings"
	"testing"

	"concbench/results"
	"concbench/results/resultstest"
)

// values are one point's metric values, by the rules' metrics.
type values struct{ capacity, p50, p99, allocs, bytes, ctxsw, cpu float64 }

// fullSide returns a side with capacity and open 0.50 groups of config,
// six repetitions, each computed by f from the repetition.
func (s *Side) full(config string, f func(kind results.Kind, rep int) values) *Side {
	for _, kind := range []results.Kind{results.KindCapacity, results.KindOpen} {
		for rep := range 6 {
			v := f(kind, rep)
			vals := map[string]float64{
				results.AllocsPerReq.Name: v.allocs, results.BytesPerReq.Name: v.bytes, results.CtxswPerReq.Name: v.ctxsw,
				results.UserCPUPerReq.Name: v.cpu,
			}
			frac := 1.0
			if kind == results.KindCapacity {
				vals[results.Capacity.Name] = v.capacity
			} else {
				frac = 0.5
				vals[results.LatencyP50.Name] = v.p50
				vals[results.LatencyP99.Name] = v.p99
			}
			s.Points = append(s.Points, Point{Config: config, Kind: kind, Fraction: frac, Repetition: rep,
				Status: results.StatusOK, Valid: true, Values: vals, Requests: 50000})
		}
	}
	return s
}

// wobble is a fixed ±1 % pattern over the repetitions.
func wobble(rep int) float64 { return 1 + 0.01*float64([]int{0, 1, -1, 2, -2, 1}[rep]) }

// sampleReport is a report with every kind of row: a model with a
// regression in throughput, latency, allocations and bytes; one with
// improvements and a significant shift below the minimum effect; one
// whose open point has too few valid samples on the head side (four of
// six invalid).
func sampleReport() *Report {
	lf := func(kind results.Kind, rep int) values {
		w := wobble(rep)
		return values{capacity: 42000 * w, p50: 95e3 * w, p99: 480e3 * w, allocs: 0.0005, bytes: 0.2, ctxsw: 0.4 * w, cpu: 24 * w}
	}
	np := func(kind results.Kind, rep int) values {
		w := wobble(rep)
		return values{capacity: 52000 * w, p50: 80e3 * w, p99: 420e3 * w, allocs: 0.001, bytes: 0.3, ctxsw: 0.75 * w, cpu: 19 * w}
	}
	hs := func(kind results.Kind, rep int) values {
		w := wobble(rep)
		return values{capacity: 46000 * w, p50: 150e3 * w, p99: 1.5e6 * w, allocs: 1.004, bytes: 240.6, ctxsw: 2.0 * w, cpu: 22 * w}
	}
	base := (&Side{Label: "base", Commit: "1111111111111111111111111111111111111111", Ref: "--base HEAD~1", Unavailable: map[string]string{}}).
		full("leaderfollowers/lifo", lf).full("halfsynchalfreactive", hs).full("netpoll", np)
	head := (&Side{Label: "head", Commit: "2222222222222222222222222222222222222222", Dirty: true, Ref: "working tree", Unavailable: map[string]string{}}).
		full("leaderfollowers/lifo", func(k results.Kind, rep int) values {
			v := lf(k, rep)
			v.capacity *= 0.8
			v.p50 *= 1.25
			v.p99 *= 2.5
			v.allocs += 1
			v.bytes += 64
			v.cpu += 5
			return v
		}).
		full("halfsynchalfreactive", hs).
		full("netpoll", func(k results.Kind, rep int) values {
			v := np(k, rep)
			v.capacity *= 0.98 // not significant after Holm's correction
			v.cpu *= 1.09      // significant, but below 10 %
			v.p50 *= 0.85
			v.ctxsw -= 0.4
			return v
		})
	for i := range head.Points {
		p := &head.Points[i]
		switch {
		case p.Config == "halfsynchalfreactive" && p.Kind == results.KindOpen && p.Repetition < 4:
			// Four points the load generator invalidated on itself.
			p.Valid, p.Fault = false, GeneratorFault
			p.Why = "the generator's own lateness moved p99 by 310µs (1.90ms with its lag, 1.59ms without; 16%), more than 10% of each"
		case p.Config == "leaderfollowers/lifo" && p.Kind == results.KindOpen && p.Repetition == 5:
			// One point the server failed at the equal load.
			p.Valid, p.Fault = false, ServerFault
			p.Why = "over capacity: the server fell behind the offered 21000 req/s: the requests in flight grew from 3 to 2210 (trend z 4.9)"
		}
	}
	r := Compare(base, head, DefaultOptions(), "same job, interleaved and counterbalanced")
	r.Notes = []string{"The load generator is this process (in-process, the current tree's concbench) for both sides; only the servers' binaries differ."}
	return r
}

// TestMarkdownGolden checks the Markdown report against its golden file.
func TestMarkdownGolden(t *testing.T) {
	b := resultstest.GoldenWrite(t, "report.md", sampleReport().WriteMarkdown)
	// The properties the golden file must have, so that an -update
	// cannot bless a broken report.
	md := string(b)
	for _, want := range []string{
		"## concbench gate: REGRESSION (exit 1)",
		"- leaderfollowers/lifo capacity: throughput -20.0%",
		"- leaderfollowers/lifo capacity: allocations per request +1.000",
		"| configuration | load | metric | base | head | delta | test | verdict |",
		"| netpoll | open 0.50 | p50 latency |",
		"+15.0% better",
		"below the minimum effect 10%",
		"too few valid samples: base 6, head 2 (5 needed)",
		"halfsynchalfreactive open 0.50: head rep 0 invalid (the load generator's verdict on itself): the generator's own lateness",
		"- leaderfollowers/lifo open 0.50: server failures +1",
		"- leaderfollowers/lifo capacity: server user CPU per request +",
		"family-wise α = 0.05",
		"head: `222222222222` with uncommitted changes (working tree)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	regs, _, _ := strings.Cut(md, "base: ")
	if strings.Contains(regs, "- netpoll") || strings.Contains(regs, "- halfsynchalfreactive") {
		t.Errorf("a model without a regression is listed as regressed:\n%s", regs)
	}
}

// TestJSON checks the JSON verdict: its golden file, and that numbers a
// row does not have are null rather than invented.
func TestJSON(t *testing.T) {
	b := resultstest.GoldenWrite(t, "report.json", sampleReport().WriteJSON)
	var v struct {
		Outcome     string   `json:"outcome"`
		ExitCode    int      `json:"exit_code"`
		Regressions []string `json:"regressions"`
		Rows        []struct {
			Config, Metric, Method, Verdict, Load string
			P, Delta                              *float64
			Old                                   struct{ N int }
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.Outcome != "regression" || v.ExitCode != 1 || len(v.Regressions) != 10 {
		t.Errorf("outcome %s exit %d regressions %q", v.Outcome, v.ExitCode, v.Regressions)
	}
	for _, row := range v.Rows {
		// A U-test row has a p-value unless a side had too few samples
		// for a test (halfsynchalfreactive's open point here).
		tested := row.Method == string(UTest) && !(row.Config == "halfsynchalfreactive" && row.Load == "open 0.50")
		if (row.P != nil) != tested {
			t.Errorf("%s %s %s: p %v for method %s", row.Config, row.Load, row.Metric, row.P, row.Method)
		}
		wantN := 6 // six repetitions, or one count of failed points
		switch {
		case row.Method == string(Failures):
			wantN = 1
		case strings.HasPrefix(row.Metric, "latency_"):
			wantN = 5 // the highest repetition left out
		}
		if row.Old.N != wantN {
			t.Errorf("%s %s %s: old n %d, want %d", row.Config, row.Load, row.Metric, row.Old.N, wantN)
		}
	}
}

// TestFormat checks the value formats of the table.
func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		m    results.Metric
		v    float64
		want string
	}{
		{results.Capacity, 41234, "41.2k"},
		{results.Capacity, 812, "812"},
		{results.LatencyP99, 812, "812ns"},
		{results.LatencyP99, 45123, "45.1µs"},
		{results.LatencyP99, 1234567, "1.23ms"},
		{results.LatencyP99, 512e3, "512µs"},
		{results.AllocsPerReq, 1.0049, "1.005"},
		{results.BytesPerReq, 240.66, "240.7"},
		{results.CtxswPerReq, 0.4, "0.400"},
	} {
		if got := fmtValue(tc.m, tc.v); got != tc.want {
			t.Errorf("fmtValue(%s, %v) = %q, want %q", tc.m.Name, tc.v, got, tc.want)
		}
	}
}
