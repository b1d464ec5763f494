package report

import (
	"bytes"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/results"
)

// nginxRun returns a run of the nginx profile's shape: in each of two
// modes the nginx-style model and nginx, five repetitions of capacity
// and one equal rate, with the given connections per worker (max ÷ mean)
// at the rate, by configuration.
func nginxRun(balance map[string]float64, threads int) (*results.Run, []results.Point) {
	each := map[string][]float64{}
	for k, v := range balance {
		each[k] = []float64{v}
	}
	return nginxRunEach(each, threads)
}

// nginxRunEach is nginxRun with each repetition's connections per worker
// (repetition r takes balance[name][r % len]).
func nginxRunEach(balance map[string][]float64, threads int) (*results.Run, []results.Point) {
	r := &results.Run{ID: "nginx-test"}
	var pts []results.Point
	for _, mode := range []string{"mutex", "reuseport"} {
		for _, model := range []string{modelAcceptMutex, modelNginx} {
			cfg := results.ModelConfig{Name: model + "/" + mode, Model: model, Args: []string{"--accept", mode}, Threads: threads}
			r.Configs = append(r.Configs, cfg)
			for rep := range 5 {
				for _, kind := range []results.Kind{results.KindCapacity, results.KindRate} {
					p := results.Point{Config: cfg, Kind: kind, Repetition: rep, Status: results.StatusOK, Fraction: 1,
						Load: &loadgen.Result{Valid: true, AchievedRatePerS: 20000, Latency: loadgen.Summary{Count: 1000, P99Ns: 200_000}},
						Server: results.ServerCost{Requests: 10000, CPUNsPerRequest: 5000,
							Other: &results.OtherThreads{Threads: 3, CPUNsPerRequest: 400, SlicesPerRequest: 0.25}}}
					if kind == results.KindRate {
						p.Fraction, p.OfferedRatePerS = 0, 7000
						var b float64
						if bs := balance[cfg.Name]; len(bs) > 0 {
							b = bs[rep%len(bs)]
						}
						p.Server.Balance = &results.ThreadBalance{Role: "worker", Threads: threads, Conns: 64, ConnsMaxMean: b, Requests: 10000, RequestsMaxMean: b, BusiestShare: 25 * b}
					}
					pts = append(pts, p)
				}
			}
		}
	}
	return r, pts
}

// TestNginxSection checks the nginx table's verdicts: the model's and
// nginx's connection balance agree within 10 %, or differ, mode by mode;
// and that the connection balance section lists every configuration.
func TestNginxSection(t *testing.T) {
	r, pts := nginxRun(map[string]float64{
		"acceptmutex/mutex": 3.8, "nginx/mutex": 3.6, // 5.6 % apart
		"acceptmutex/reuseport": 1.5, "nginx/reuseport": 1.2, // 25 % apart
	}, 4)
	a := analyze(r, pts, Options{})
	s := a.nginx()
	if s == nil || len(s.Rows) != 4 || len(s.Verdicts) != 2 {
		t.Fatalf("nginx section %+v, want 4 rows and 2 verdicts", s)
	}
	if v := s.Verdicts[0]; !strings.Contains(v, "mutex**: connection balance agrees within 10%") || !strings.Contains(v, "5.6% apart") {
		t.Errorf("mutex verdict %q, want agreement, 5.6%% apart", v)
	}
	if v := s.Verdicts[1]; !strings.Contains(v, "reuseport**: connection balance differs by more than 10%") || !strings.Contains(v, "25.0% apart") ||
		!strings.Contains(v, "Mann–Whitney p=") {
		t.Errorf("reuseport verdict %q, want a difference, 25%% apart, with its test", v)
	}
	if row := s.Rows[1]; row[1] != "nginx/mutex" || !strings.HasPrefix(row[2], "20000") || row[3] != "1" || !strings.HasPrefix(row[6], "0.4") ||
		!strings.HasPrefix(row[7], "0.25") || !strings.HasPrefix(row[8], "3.6") {
		t.Errorf("nginx/mutex row %q, want its capacity 20000, factor 1, other threads' 0.4 µs and 0.25 switches per request, and connections max/mean 3.6", row)
	}
	if row := s.Rows[0]; row[1] != "acceptmutex/mutex" || !strings.HasPrefix(row[3], "1× [1, 1]") {
		t.Errorf("acceptmutex/mutex row %q, want capacity 1× nginx's, with its interval", row)
	}
	b := a.balance()
	if b == nil || len(b.Tables) != 1 || len(b.Tables[0].Rows) != 4 {
		t.Fatalf("balance section %+v, want one table of the 4 configurations", b)
	}
	md := s.Markdown() + b.Markdown()
	for _, want := range []string{"| reuseport | nginx/reuseport |", "zero-work end", "| acceptmutex/mutex | 5 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the sections lack %q:\n%s", want, md)
		}
	}
	var html bytes.Buffer
	if err := (&report{Run: r, Balance: b, Nginx: s}).writeHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Connection balance</h2>", "<h2>nginx beside its model</h2>", "<li>reuseport: connection balance differs"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestNginxSectionAlone checks nginx without its model: its balance is
// still reported, and the verdict says the model is missing; a run
// without nginx has no such section.
func TestNginxSectionAlone(t *testing.T) {
	r, pts := nginxRun(map[string]float64{"nginx/mutex": 4, "nginx/reuseport": 1.1}, 4)
	var only []results.Point
	for _, p := range pts {
		if p.Config.Model == modelNginx {
			only = append(only, p)
		}
	}
	s := analyze(r, only, Options{}).nginx()
	if s == nil || len(s.Rows) != 2 || !strings.Contains(s.Verdicts[0], "no measured acceptmutex/mutex beside nginx/mutex") {
		t.Fatalf("nginx alone: %+v", s)
	}
	var models []results.Point
	for _, p := range pts {
		if p.Config.Model != modelNginx {
			models = append(models, p)
		}
	}
	if s := analyze(r, models, Options{}).nginx(); s != nil {
		t.Errorf("a run without nginx has an nginx section: %+v", s)
	}
}

// TestNginxSectionOneWorker checks that one worker each (a server of one
// CPU) is called even by construction, not an agreement.
func TestNginxSectionOneWorker(t *testing.T) {
	r, pts := nginxRun(map[string]float64{"acceptmutex/mutex": 1, "nginx/mutex": 1, "acceptmutex/reuseport": 1, "nginx/reuseport": 1}, 1)
	s := analyze(r, pts, Options{}).nginx()
	if s == nil || !strings.Contains(s.Verdicts[0], "one worker each") || strings.Contains(s.Verdicts[0], "agrees") {
		t.Errorf("one worker each: %+v, want no agreement claimed", s)
	}
}

// TestNginxVerdictSpread checks that medians more than 10 % apart are not
// called a difference when the repetitions do not show one: splits that
// range from even to one-sided in both (a storm of connections goes to
// whichever worker runs) give medians far apart by chance.
func TestNginxVerdictSpread(t *testing.T) {
	r, pts := nginxRunEach(map[string][]float64{
		"acceptmutex/mutex": {1, 1.9, 1.3, 1.05, 1.5}, "nginx/mutex": {1.6, 1, 1.03, 2, 1.1}, // medians 1.3 and 1.1
		"acceptmutex/reuseport": {1.1}, "nginx/reuseport": {1.1},
	}, 2)
	s := analyze(r, pts, Options{}).nginx()
	if s == nil || len(s.Verdicts) != 2 {
		t.Fatalf("nginx section %+v, want 2 verdicts", s)
	}
	v := s.Verdicts[0]
	for _, want := range []string{"mutex**: connection balance medians more than 10% apart, but no difference shown", "18.2% apart", "n=5, 5", "ranged 1–1.9 (acceptmutex/mutex)"} {
		if !strings.Contains(v, want) {
			t.Errorf("mutex verdict %q lacks %q", v, want)
		}
	}
	if strings.Contains(v, "differs") {
		t.Errorf("mutex verdict %q calls overlapping repetitions a difference", v)
	}
}

// TestNginxSectionFactors checks the capacity × nginx column: each model
// against the nginx of its mode, a configuration without a mode (the lean
// profile's) against the first nginx, a factor whose interval excludes 1
// where every repetition differs, and the quota's note.
func TestNginxSectionFactors(t *testing.T) {
	r, pts := nginxRun(map[string]float64{"acceptmutex/mutex": 1, "nginx/mutex": 1, "acceptmutex/reuseport": 1, "nginx/reuseport": 1}, 1)
	pro := results.ModelConfig{Name: "proactor", Model: "proactor", Threads: 1}
	r.Configs = append(r.Configs, pro)
	rates := map[string]float64{"nginx/mutex": 40000, "acceptmutex/mutex": 44000, "proactor": 52000}
	for i := range pts {
		if pts[i].Config.Name == "nginx/reuseport" {
			pts = append(pts, pts[i])
			q := &pts[len(pts)-1]
			q.Config = pro
			q.Load = &loadgen.Result{Valid: true, AchievedRatePerS: 20000, Latency: q.Load.Latency}
		}
	}
	for i := range pts {
		p := &pts[i]
		if x, ok := rates[p.Config.Name]; ok && p.Kind == results.KindCapacity {
			l := *p.Load
			l.AchievedRatePerS = x * (1 + 0.01*float64(p.Repetition)) // repetitions apart, alike for all
			p.Load = &l
		}
	}
	r.Provenance.ServerCPUQuota = "0.5 of a CPU for all the server's processes together (a test)"
	s := analyze(r, pts, Options{}).nginx()
	if s == nil || len(s.Rows) != 5 {
		t.Fatalf("nginx section %+v, want 5 rows: 2 modes' pairs and the proactor", s)
	}
	if row := s.Rows[0]; row[1] != "acceptmutex/mutex" || !strings.HasPrefix(row[3], "1.1× [") {
		t.Errorf("acceptmutex/mutex row %q, want 1.1× nginx/mutex's capacity", row)
	}
	if row := s.Rows[4]; row[0] != "—" || row[1] != "proactor" || !strings.HasPrefix(row[3], "1.3× [") {
		t.Errorf("proactor row %q, want mode — and 1.3× the first nginx's capacity (nginx/mutex)", row)
	}
	if row := s.Rows[3]; row[1] != "nginx/reuseport" || row[3] != "1" {
		t.Errorf("nginx/reuseport row %q, want factor 1", row)
	}
	md := s.Markdown()
	for _, want := range []string{"Server CPU quota: 0.5 of a CPU", "capacity × nginx"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if got := capacityFactor(nil, []float64{1, 2}); !strings.Contains(got, "no valid capacity") {
		t.Errorf("capacityFactor without the model's capacities: %q", got)
	}
}
