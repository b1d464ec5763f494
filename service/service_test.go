package service

import (
	"math"
	"testing"
	"time"

	"concbench/wire"
)

// newTestService returns a service with a fixed calibration (no measuring).
func newTestService(t testing.TB) *Service {
	t.Helper()
	s, err := New(Config{Accounts: 8, InitialBalance: 100, NsPerIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{name: "zero", cfg: Config{}},
		{name: "bounds", cfg: Config{Accounts: MaxAccounts, InitialBalance: MaxInitialBalance, NsPerIter: 1e6}},
		{name: "one", cfg: Config{Accounts: 1, InitialBalance: 1, NsPerIter: 1e-3}},
		{name: "accounts-negative", cfg: Config{Accounts: -1}, want: "accounts -1 out of range (accepted: 0 for the default 1024, or 1..1048576)"},
		{name: "accounts-too-many", cfg: Config{Accounts: MaxAccounts + 1}, want: "accounts 1048577"},
		{name: "balance-negative", cfg: Config{InitialBalance: -5}, want: "initial balance -5 out of range"},
		{name: "balance-too-large", cfg: Config{InitialBalance: MaxInitialBalance + 1}, want: "initial balance 1099511627777"},
		{name: "ns-negative", cfg: Config{NsPerIter: -1}, want: "ns per iteration -1 out of range (accepted: 0 to measure, or 0.001..1e+06)"},
		{name: "ns-tiny", cfg: Config{NsPerIter: 1e-9}, want: "ns per iteration 1e-09"},
		{name: "ns-huge", cfg: Config{NsPerIter: 2e6}, want: "ns per iteration 2e+06"},
		{name: "ns-nan", cfg: Config{NsPerIter: math.NaN()}, want: "ns per iteration NaN"},
		{name: "ns-inf", cfg: Config{NsPerIter: math.Inf(1)}, want: "ns per iteration +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			checkErrContains(t, "Validate()", err, tt.want)
			if _, nerr := New(tt.cfg); (nerr == nil) != (err == nil) {
				t.Errorf("New err = %v, Validate err = %v", nerr, err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	s, err := New(Config{NsPerIter: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Accounts: DefaultAccounts, InitialBalance: DefaultInitialBalance, NsPerIter: 2}
	if got := s.Config(); got != want {
		t.Errorf("Config() = %+v, want %+v", got, want)
	}
	if got := s.Ledger().Accounts(); got != DefaultAccounts {
		t.Errorf("ledger has %d accounts, want %d", got, DefaultAccounts)
	}
	if got, want := s.Ledger().Total(), int64(DefaultAccounts*DefaultInitialBalance); got != want {
		t.Errorf("Total() = %d, want %d", got, want)
	}
	c := s.Calibration()
	if c.Measured || c.NsPerIter != 2 || c.Min != 2 || c.Max != 2 || c.Samples != 0 {
		t.Errorf("Calibration() = %+v, want the given 2 ns, not measured", c)
	}
}

func TestCalibrationMeasured(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Calibration()
	t.Logf("calibration: %+v", c)
	if !c.Measured || c.Samples != calSamples || c.Iterations < calMinIters || c.Iterations > calMaxIters {
		t.Errorf("Calibration() = %+v: want measured, %d samples, %d..%d iterations",
			c, calSamples, calMinIters, calMaxIters)
	}
	if !(c.NsPerIter > 0) || c.Min > c.NsPerIter || c.NsPerIter > c.Max {
		t.Errorf("Calibration() = %+v: want 0 < Min <= NsPerIter <= Max", c)
	}
	// Proportionality holds whatever the measured value.
	for _, d := range []time.Duration{time.Microsecond, 10 * time.Microsecond, time.Millisecond} {
		if n1, n2 := s.Iterations(d), s.Iterations(2*d); n2 < 2*n1-1 || n2 > 2*n1+1 {
			t.Errorf("Iterations(%v) = %d, Iterations(%v) = %d: not proportional", d, n1, 2*d, n2)
		}
	}
}

func TestIterations(t *testing.T) {
	s, err := New(Config{NsPerIter: 2.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{
		{d: -time.Second, want: 0},
		{d: 0, want: 0},
		{d: 1, want: 0}, // 0.4 rounds down
		{d: 2, want: 1}, // 0.8 rounds up
		{d: 10, want: 4},
		{d: time.Microsecond, want: 400},
		{d: time.Second, want: 400_000_000},
	} {
		if got := s.Iterations(tt.d); got != tt.want {
			t.Errorf("Iterations(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
	prev := int64(0)
	for d := time.Duration(0); d < 20*time.Microsecond; d += 7 {
		n := s.Iterations(d)
		if n < prev {
			t.Fatalf("Iterations(%v) = %d < Iterations(%v) = %d", d, n, d-7, prev)
		}
		if exact := float64(d) / 2.5; math.Abs(float64(n)-exact) > 0.5 {
			t.Fatalf("Iterations(%v) = %d, want round(%g)", d, n, exact)
		}
		prev = n
	}
	tiny, err := New(Config{NsPerIter: minNsPerIter})
	if err != nil {
		t.Fatal(err)
	}
	if got := tiny.Iterations(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("Iterations(max) at %g ns/iter = %d, want it clamped to MaxInt64", minNsPerIter, got)
	}
}

func TestSpin(t *testing.T) {
	s := newTestService(t)
	// Must match the loop in spin: a change of the loop changes what a
	// recorded NsPerIter means, so it is a deliberate act.
	const want1000 = 0xf0804d0a7f617cf7
	for range 3 { // the same result every time
		if got := s.Spin(1000); got != want1000 {
			t.Fatalf("Spin(1000) = %#x, want %#x", got, uint64(want1000))
		}
	}
	if s.Spin(0) != spinSeed || s.Spin(-3) != spinSeed {
		t.Errorf("Spin(0) = %#x, Spin(-3) = %#x, want the seed", s.Spin(0), s.Spin(-3))
	}
	seen := map[uint64]int64{}
	for n := int64(0); n < 64; n++ {
		r := s.Spin(n)
		if m, dup := seen[r]; dup {
			t.Errorf("Spin(%d) == Spin(%d)", n, m)
		}
		seen[r] = n
	}
}

func TestDo(t *testing.T) {
	tests := []struct {
		name    string
		req     wire.Request
		status  wire.Status
		payload string // for ledger ops and errors
		body    bool   // payload is the OpWork body of req.ID, req.Size long
		after   func(t *testing.T, s *Service)
	}{
		{name: "work/empty", req: wire.Request{ID: 1, Op: wire.OpWork}, body: true},
		{name: "work/size=100/cpu", req: wire.Request{ID: 77, Op: wire.OpWork, CPU: 3 * time.Microsecond, Size: 100}, body: true},
		{name: "work/size=10000", req: wire.Request{ID: 1 << 40, Op: wire.OpWork, Size: 10000}, body: true},
		{name: "work/block", req: wire.Request{ID: 5, Op: wire.OpWork, Block: 100 * time.Microsecond, Size: 16}, body: true},
		{name: "work/close", req: wire.Request{ID: 6, Op: wire.OpWork, Size: 3, Close: true}, body: true},
		{name: "balance", req: wire.Request{ID: 10, Op: wire.OpBalance, Account: 3}, payload: "100"},
		{name: "balance/no-account", req: wire.Request{ID: 11, Op: wire.OpBalance, Account: 8}, status: wire.StatusNoAccount},
		{name: "deposit", req: wire.Request{ID: 12, Op: wire.OpDeposit, Account: 0, Amount: 1234}, payload: "1334"},
		{name: "deposit/bad-amount", req: wire.Request{ID: 13, Op: wire.OpDeposit, Account: 0}, status: wire.StatusBadRequest},
		{name: "withdraw", req: wire.Request{ID: 14, Op: wire.OpWithdraw, Account: 7, Amount: 100}, payload: "0"},
		{
			name:   "withdraw/insufficient",
			req:    wire.Request{ID: 15, Op: wire.OpWithdraw, Account: 7, Amount: 101},
			status: wire.StatusInsufficientFunds,
		},
		{
			name:   "withdraw/timeout",
			req:    wire.Request{ID: 16, Op: wire.OpWithdraw, Account: 7, Amount: 101, Timeout: time.Millisecond},
			status: wire.StatusTimeout,
		},
		{
			name:    "transfer",
			req:     wire.Request{ID: 17, Op: wire.OpTransfer, Account: 1, To: 2, Amount: 30, CPU: time.Microsecond},
			payload: "70",
			after: func(t *testing.T, s *Service) {
				if b, _ := s.Ledger().Balance(2); b != 130 {
					t.Errorf("destination balance %d, want 130", b)
				}
			},
		},
		{
			name:   "transfer/no-account",
			req:    wire.Request{ID: 18, Op: wire.OpTransfer, Account: 1, To: 9, Amount: 30},
			status: wire.StatusNoAccount,
		},
		{name: "total", req: wire.Request{ID: 19, Op: wire.OpTotal, Close: true}, payload: "800"},
		{name: "unknown-op", req: wire.Request{ID: 20, Op: wire.Op(200)}, status: wire.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t)
			// Stale fields and a scratch prefix that Do must keep.
			resp := wire.Response{ID: 999, Status: wire.StatusInternal, Payload: []byte("stale"), Checksum: 1, HasChecksum: true, Pattern: 7}
			scratch := append(make([]byte, 0, 8), "prefix"...)
			out := s.Do(&tt.req, &resp, scratch)

			if resp.ID != tt.req.ID || resp.Close != tt.req.Close || resp.Checksum != 0 || resp.HasChecksum {
				t.Errorf("resp = {ID %d, Close %v, Checksum %d/%v}, want {ID %d, Close %v, no checksum}",
					resp.ID, resp.Close, resp.Checksum, resp.HasChecksum, tt.req.ID, tt.req.Close)
			}
			if resp.Status != tt.status {
				t.Errorf("Status = %v, want %v", resp.Status, tt.status)
			}
			if string(out[:6]) != "prefix" || string(out[6:]) != string(resp.Payload) {
				t.Errorf("Do returned %q with payload %q: want prefix + payload", out, resp.Payload)
			}
			switch {
			case tt.body && tt.req.Size > wire.MaxInlineBody:
				// Not materialised: the encoder streams it.
				if resp.Pattern != tt.req.Size || len(resp.Payload) != 0 {
					t.Errorf("a %d-byte body: Pattern %d with %d payload bytes; want Pattern %d, no payload",
						tt.req.Size, resp.Pattern, len(resp.Payload), tt.req.Size)
				}
			case tt.body:
				if resp.Pattern != 0 || len(resp.Payload) != tt.req.Size || !wire.VerifyBody(tt.req.ID, resp.Payload) {
					t.Errorf("payload of %d bytes is not the body of request %d (size %d)",
						len(resp.Payload), tt.req.ID, tt.req.Size)
				}
			default:
				if resp.Pattern != 0 || string(resp.Payload) != tt.payload {
					t.Errorf("payload = %q (pattern %d), want %q", resp.Payload, resp.Pattern, tt.payload)
				}
			}
			if tt.after != nil {
				tt.after(t, s)
			}
			if err := s.Ledger().Audit(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestAppendResult(t *testing.T) {
	var resp wire.Response
	out := AppendResult(&resp, []byte("x"), -42, nil)
	if resp.Status != wire.StatusOK || string(resp.Payload) != "-42" || string(out) != "x-42" {
		t.Errorf("AppendResult(-42, nil): status %v, payload %q, scratch %q", resp.Status, resp.Payload, out)
	}
	out = AppendResult(&resp, []byte("x"), 7, ErrInsufficientFunds)
	if resp.Status != wire.StatusInsufficientFunds || len(resp.Payload) != 0 || string(out) != "x" {
		t.Errorf("AppendResult(7, err): status %v, payload %q, scratch %q", resp.Status, resp.Payload, out)
	}
}

func TestDoAllocs(t *testing.T) {
	s := newTestService(t)
	for _, tt := range []struct {
		name string
		req  wire.Request
	}{
		{name: "work", req: wire.Request{ID: 3, Op: wire.OpWork, CPU: time.Microsecond, Size: 4096}},
		{name: "work/block", req: wire.Request{ID: 3, Op: wire.OpWork, Block: time.Microsecond, Size: 64}},
		{name: "transfer", req: wire.Request{ID: 4, Op: wire.OpTransfer, Account: 1, To: 2, Amount: 1}},
		{name: "deposit", req: wire.Request{ID: 4, Op: wire.OpDeposit, Account: 1, Amount: 1}},
		{name: "total", req: wire.Request{ID: 5, Op: wire.OpTotal}},
		{name: "withdraw/timeout", req: wire.Request{ID: 6, Op: wire.OpWithdraw, Account: 0, Amount: 1 << 40, Timeout: time.Microsecond}},
		{name: "error", req: wire.Request{ID: 7, Op: wire.OpBalance, Account: 1 << 30}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var resp wire.Response
			scratch := make([]byte, 0, 8192)
			allocs := testing.AllocsPerRun(100, func() {
				scratch = s.Do(&tt.req, &resp, scratch[:0])
			})
			if allocs != 0 {
				t.Errorf("Do(%s) allocates %v times per call, want 0", tt.name, allocs)
			}
		})
	}
}

func BenchmarkSpin(b *testing.B) {
	s := newTestService(b)
	b.ReportAllocs()
	b.ResetTimer()
	keep(s.Spin(int64(b.N)))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/iter")
}

func BenchmarkDo(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("calibration: %+v", s.Calibration())
	for _, bb := range []struct {
		name string
		req  wire.Request
	}{
		{name: "op=work/cpu=0", req: wire.Request{Op: wire.OpWork, Size: 64}},
		{name: "op=work/cpu=10us", req: wire.Request{Op: wire.OpWork, CPU: 10 * time.Microsecond, Size: 64}},
		{name: "op=balance", req: wire.Request{Op: wire.OpBalance, Account: 5}},
		{name: "op=transfer", req: wire.Request{Op: wire.OpTransfer, Account: 5, To: 6, Amount: 1}},
		{name: "op=total", req: wire.Request{Op: wire.OpTotal}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			var resp wire.Response
			scratch := make([]byte, 0, 4096)
			req := bb.req
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				req.ID = uint64(i)
				if req.Op == wire.OpTransfer {
					req.Account, req.To = req.To, req.Account // keep the balances bounded
				}
				scratch = s.Do(&req, &resp, scratch[:0])
			}
		})
	}
}
