package loadgen

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"concbench/wire"
)

// TestValidate checks that Validate names the offending value and the
// accepted range.
func TestValidate(t *testing.T) {
	ok := Config{Addr: "127.0.0.1:1", Rate: 1000, Duration: time.Second}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // "" for valid
	}{
		{name: "valid", change: func(*Config) {}},
		{name: "closed-valid", change: func(c *Config) { c.Rate, c.Closed, c.Outstanding, c.Depth = 0, true, 8, 4 }},
		{name: "no-addr", change: func(c *Config) { c.Addr = "" }, want: "no address"},
		{name: "protocol", change: func(c *Config) { c.Protocol = "grpc" }, want: `protocol "grpc" unknown (accepted: binary, http)`},
		{name: "conns", change: func(c *Config) { c.Conns = -1 }, want: "conns -1 out of range (accepted: 1..65536)"},
		{name: "workers", change: func(c *Config) { c.Conns, c.Workers = 2, 3 }, want: "workers 3 out of range (accepted: 1..2"},
		{name: "depth", change: func(c *Config) { c.Depth = 2000 }, want: "depth 2000 out of range (accepted: 1..1024)"},
		{name: "nice", change: func(c *Config) { c.Nice = -21 }, want: "nice -21 out of range (accepted: -20..19)"},
		{name: "no-length", change: func(c *Config) { c.Duration = 0 }, want: "set exactly one of them"},
		{name: "both-lengths", change: func(c *Config) { c.Requests = 10 }, want: "set exactly one of them"},
		{name: "rate-zero", change: func(c *Config) { c.Rate = 0 }, want: "rate 0 req/s out of range (accepted: > 0 and ≤ 1e+08 in open loop; set Closed for a closed loop)"},
		{name: "rate-nan", change: func(c *Config) { c.Rate = math.NaN() }, want: "rate NaN req/s out of range"},
		{name: "rate-closed", change: func(c *Config) { c.Closed = true }, want: "rate 1000 given with closed loop"},
		{name: "outstanding", change: func(c *Config) { c.Rate, c.Closed, c.Depth, c.Outstanding = 0, true, 4, 2 }, want: "outstanding 2 out of range (accepted: depth 4..65536)"},
		{name: "arrival", change: func(c *Config) { c.Arrival = "uniform" }, want: `arrival "uniform" unknown (accepted: poisson, constant, onoff)`},
		{name: "onoff-periods", change: func(c *Config) { c.Arrival = OnOff }, want: "on/off periods 0s/0s out of range"},
		{name: "periods-without-onoff", change: func(c *Config) { c.On = time.Second }, want: `given with arrival "poisson"`},
		{name: "max-in-flight", change: func(c *Config) { c.Depth, c.MaxInFlight = 8, 4 }, want: "max in flight 4 out of range (accepted: depth 8..65536)"},
		{name: "warmup", change: func(c *Config) { c.Warmup = -time.Second }, want: "warmup -1s out of range (accepted: 0..1h)"},
		{name: "timeout", change: func(c *Config) { c.Timeout = time.Microsecond }, want: "timeout 1µs out of range (accepted: 1ms..1h)"},
		{name: "cpu", change: func(c *Config) { c.CPU = Exp(float64(time.Minute)) }, want: "cpu: mean 1m0s out of range (accepted: 0..10s)"},
		{name: "size", change: func(c *Config) { c.Size = Bimodal(0.5, 10, 1e9) }, want: "size: bimodal second value 1e+09 out of range (accepted: 0..1.048576e+06)"},
		{name: "bimodal-p", change: func(c *Config) { c.Size = Bimodal(1.5, 1, 2) }, want: "size: bimodal probability 1.5 out of range (accepted: 0..1)"},
		{name: "priority", change: func(c *Config) { c.Priority = Fixed(300) }, want: "priority: value 300 out of range (accepted: 0..255)"},
		{name: "dist-kind", change: func(c *Config) { c.Block = Dist{Kind: "pareto"} }, want: `block: unknown distribution "pareto"`},
		{name: "op-weight", change: func(c *Config) { c.Ops = OpMix{Work: 1, Transfer: -1} }, want: "weight -1 of transfer out of range"},
		{name: "op-sum", change: func(c *Config) { c.Ops = OpMix{Work: math.Inf(1)} }, want: "weight +Inf of work out of range"},
		{name: "transfer-accounts", change: func(c *Config) { c.Ops, c.Accounts = OpMix{Transfer: 1}, 1 }, want: "accounts 1 too few for transfers"},
		{name: "withdraw-wait", change: func(c *Config) { c.WithdrawWait = time.Minute }, want: "withdraw wait 1m0s out of range (accepted: 0..10s)"},
		{name: "ledger-money", change: func(c *Config) { c.LedgerMoney = -1 }, want: "ledger money -1 out of range"},
		{name: "kill-every", change: func(c *Config) { c.KillEvery = -1 }, want: "kill every -1 out of range"},
		{name: "soak-valid", change: func(c *Config) { c.WithdrawWait, c.LedgerMoney, c.KillEvery = time.Millisecond, 1000, 10 }},
		{name: "verify", change: func(c *Config) { c.Verify = "some" }, want: `verify "some" unknown (accepted: full, auto, status, none)`},
		{name: "hist-range", change: func(c *Config) { c.HistHighest = time.Nanosecond }, want: "histogram range 1µs..1ns out of range"},
		{name: "hist-digits", change: func(c *Config) { c.HistDigits = 7 }, want: "histogram significant digits 7 out of range (accepted: 1..5)"},
		{name: "hlog-interval", change: func(c *Config) { c.HlogInterval = time.Millisecond }, want: "hlog interval 1ms out of range (accepted: 10ms..1h)"},
		{name: "poll", change: func(c *Config) { c.Poll = "spin" }, want: `poll "spin" unknown`},
		{name: "max-lag-share", change: func(c *Config) { c.Limits.MaxLagShare = 1.5 }, want: "max lag share 1.5 out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestParseDist checks the distribution syntax and that formatting parses
// back to the same distribution.
func TestParseDist(t *testing.T) {
	for _, tc := range []struct {
		in      string
		dur     bool
		want    Dist
		wantErr string
	}{
		{in: "20us", dur: true, want: Fixed(20000)},
		{in: "fixed:0", dur: true, want: Fixed(0)},
		{in: "exp:10us", dur: true, want: Exp(10000)},
		{in: "bimodal:0.9:10us:1ms", dur: true, want: Bimodal(0.9, 10000, 1e6)},
		{in: "64", want: Fixed(64)},
		{in: "exp:512", want: Exp(512)},
		{in: "bimodal:0.9:64:4096", want: Bimodal(0.9, 64, 4096)},
		{in: "exp:10", dur: true, wantErr: `"10" is not a Go duration`},
		{in: "bimodal:x:1:2", wantErr: `probability "x" is not a number`},
		{in: "pareto:1", wantErr: "unknown form"},
		{in: "exp:NaN", wantErr: `"NaN" is not a number`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			parse, format := ParseIntDist, Dist.FormatInt
			if tc.dur {
				parse, format = ParseDurationDist, Dist.FormatDuration
			}
			d, err := parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("parse(%q) = %v, %v; want error containing %q", tc.in, d, err, tc.wantErr)
				}
				return
			}
			if err != nil || d != tc.want {
				t.Fatalf("parse(%q) = %+v, %v; want %+v", tc.in, d, err, tc.want)
			}
			if back, err := parse(format(d)); err != nil || back != d {
				t.Errorf("parse(format(%+v) = %q) = %+v, %v", d, format(d), back, err)
			}
		})
	}
}

// TestDistDraws checks the draws' means and proportions with a fixed seed,
// within 5 standard errors.
func TestDistDraws(t *testing.T) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		d    Dist
		mean float64
		sd   float64
	}{
		{name: "fixed", d: Fixed(7), mean: 7, sd: 0},
		{name: "exp", d: Exp(1000), mean: 1000, sd: 1000},
		{name: "bimodal", d: Bimodal(0.9, 64, 4096), mean: 0.9*64 + 0.1*4096, sd: math.Sqrt(0.9*0.1) * (4096 - 64)},
	} {
		sum := 0.0
		for range n {
			v, _ := tc.d.draw(rng, math.MaxInt64)
			sum += float64(v)
		}
		mean := sum / n
		if tol := 5*tc.sd/math.Sqrt(n) + 0.5; math.Abs(mean-tc.mean) > tol {
			t.Errorf("%s: mean %.2f, want %.2f ± %.2f", tc.name, mean, tc.mean, tol)
		}
		if got := tc.d.Mean(); math.Abs(got-tc.mean) > 1e-9*tc.mean {
			t.Errorf("%s: Mean() = %g, want %g", tc.name, got, tc.mean)
		}
	}
	if v, clamped := Exp(1e6).draw(rng, 10); v > 10 || !clamped && v == 10 {
		t.Errorf("draw with max 10 = %d (clamped %t)", v, clamped)
	}
}

// TestMixer checks the operation mix's proportions and the ledger
// arguments it draws.
func TestMixer(t *testing.T) {
	const n = 100_000
	cfg := Config{Ops: OpMix{Work: 2, Transfer: 1, Withdraw: 1}, Accounts: 3, Amount: 5, WithdrawWait: time.Millisecond}.WithDefaults()
	m := newMixer(&cfg, 0)
	var counts [6]int
	var req wire.Request
	for range n {
		m.fill(&req)
		counts[req.Op]++
		switch req.Op {
		case wire.OpTransfer:
			if req.Account == req.To || req.Account >= 3 || req.To >= 3 || req.Amount != 5 {
				t.Fatalf("transfer %d → %d of %d", req.Account, req.To, req.Amount)
			}
		case wire.OpWithdraw:
			if req.Account >= 3 || req.Amount != 5 || req.Timeout != time.Millisecond {
				t.Fatalf("withdraw from %d of %d, waiting %v", req.Account, req.Amount, req.Timeout)
			}
		}
	}
	for op, want := range [6]float64{0.5, 0, 0, 0.25, 0.25, 0} {
		p := float64(counts[op]) / n
		if tol := 5 * math.Sqrt(want*(1-want)/n); math.Abs(p-want) > tol {
			t.Errorf("%s: share %.4f, want %.4f ± %.4f", wire.Op(op), p, want, tol)
		}
	}
	if mix, err := ParseOpMix(cfg.Ops.String()); err != nil || mix != cfg.Ops {
		t.Errorf("ParseOpMix(%q) = %+v, %v", cfg.Ops.String(), mix, err)
	}
	if _, err := ParseOpMix("work=1,steal=2"); err == nil || !strings.Contains(err.Error(), `unknown op "steal"`) {
		t.Errorf("ParseOpMix with an unknown op: %v", err)
	}
}
