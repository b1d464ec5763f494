package service

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"concbench/internal/sysstat"
)

// contextSwitches returns the voluntary plus involuntary context switches
// of the whole process (all threads), or -1 if unknown.
func contextSwitches() int64 {
	ru, err := sysstat.Self()
	if err != nil {
		return -1
	}
	return ru.Voluntary + ru.Involuntary
}

// TestMonitorConcurrent runs random transfers, deposits and withdrawals
// (some of them guarded, waiting for funds) from many goroutines, half of
// them locked to OS threads as the models run, while an auditor checks the
// invariant on live snapshots; afterwards the flow must match what the
// workers did.
func TestMonitorConcurrent(t *testing.T) {
	const (
		accounts = 16
		initial  = 100
		workers  = 8
		ops      = 2000
	)
	m := NewMonitor(accounts, initial)
	var deposited, withdrawn atomic.Int64
	var guardedOK, guardedTimeout atomic.Int64

	stop := make(chan struct{})
	var auditor sync.WaitGroup
	audits := 0
	auditor.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := m.Audit(); err != nil {
				t.Errorf("live audit: %v", err)
				return
			}
			audits++
			runtime.Gosched()
		}
	})

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if w%2 == 0 {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			r := rand.New(rand.NewPCG(uint64(w), 42))
			for range ops {
				a := uint32(r.IntN(accounts))
				b := uint32(r.IntN(accounts))
				amt := int64(1 + r.IntN(60))
				switch k := r.IntN(10); {
				case k < 5:
					if _, err := m.Transfer(a, b, amt); err != nil && err != ErrInsufficientFunds {
						t.Errorf("Transfer(%d, %d, %d): %v", a, b, amt, err)
					}
				case k < 7:
					if _, err := m.Deposit(a, amt); err != nil {
						t.Errorf("Deposit(%d, %d): %v", a, amt, err)
					} else {
						deposited.Add(amt)
					}
				case k < 9:
					switch bal, err := m.Withdraw(a, amt, 0); {
					case err == nil:
						withdrawn.Add(amt)
						if bal < 0 {
							t.Errorf("Withdraw(%d, %d) left %d", a, amt, bal)
						}
					case err != ErrInsufficientFunds:
						t.Errorf("Withdraw(%d, %d, 0): %v", a, amt, err)
					}
				default:
					switch _, err := m.Withdraw(a, amt, 200*time.Microsecond); {
					case err == nil:
						withdrawn.Add(amt)
						guardedOK.Add(1)
					case err == ErrTimeout:
						guardedTimeout.Add(1)
					default:
						t.Errorf("Withdraw(%d, %d, 200µs): %v", a, amt, err)
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	auditor.Wait()

	if err := m.Audit(); err != nil {
		t.Fatal(err)
	}
	d, w := m.Flow()
	if d != deposited.Load() || w != withdrawn.Load() {
		t.Errorf("Flow() = %d, %d; the workers deposited %d and withdrew %d", d, w, deposited.Load(), withdrawn.Load())
	}
	if got, want := m.Total(), m.ExpectedTotal(); got != want {
		t.Errorf("Total() = %d, ExpectedTotal() = %d", got, want)
	}
	if want := int64(accounts*initial) + d - w; m.ExpectedTotal() != want {
		t.Errorf("ExpectedTotal() = %d, want %d", m.ExpectedTotal(), want)
	}
	if n := m.waiting(); n != 0 {
		t.Errorf("%d waiters left", n)
	}
	t.Logf("%d live audits; deposited %d, withdrew %d; guarded withdrawals: %d ok, %d timed out",
		audits, d, w, guardedOK.Load(), guardedTimeout.Load())
}

type withdrawal struct {
	bal int64
	err error
}

// startWithdraw starts a guarded withdrawal on a locked OS thread and
// returns a channel that receives its outcome, after the withdrawal has
// registered as a waiter.
func startWithdraw(t *testing.T, m *Monitor, a uint32, amt int64, timeout time.Duration) <-chan withdrawal {
	t.Helper()
	registered := make(chan struct{}, 1)
	m.waitHook = func() { registered <- struct{}{} }
	t.Cleanup(func() { m.waitHook = nil })
	done := make(chan withdrawal, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b, err := m.Withdraw(a, amt, timeout)
		done <- withdrawal{bal: b, err: err}
	}()
	select {
	case <-registered:
	case r := <-done:
		t.Fatalf("Withdraw(%d, %d) returned %d, %v without waiting", a, amt, r.bal, r.err)
	}
	return done
}

func TestMonitorWithdrawWaitsForDeposit(t *testing.T) {
	m := NewMonitor(2, 10)
	done := startWithdraw(t, m, 1, 30, time.Hour)
	if n := m.waiting(); n != 1 {
		t.Fatalf("waiting() = %d, want 1", n)
	}
	// Not enough yet: the waiter wakes, re-checks and waits again.
	if _, err := m.Deposit(1, 15); err != nil {
		t.Fatal(err)
	}
	// A deposit to another account wakes it too, in vain.
	if _, err := m.Deposit(0, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Deposit(1, 9); err != nil { // 10+15+9 = 34 ≥ 30
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.bal != 4 {
		t.Fatalf("Withdraw = %d, %v; want 4, nil", r.bal, r.err)
	}
	if n := m.waiting(); n != 0 {
		t.Errorf("waiting() = %d after the withdrawal, want 0", n)
	}
	if err := m.Audit(); err != nil {
		t.Error(err)
	}
}

func TestMonitorWithdrawWaitsForTransfer(t *testing.T) {
	m := NewMonitor(2, 10)
	done := startWithdraw(t, m, 1, 15, time.Hour)
	if _, err := m.Transfer(0, 1, 5); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.bal != 0 {
		t.Fatalf("Withdraw = %d, %v; want 0, nil", r.bal, r.err)
	}
	if b, _ := m.Balance(0); b != 5 {
		t.Errorf("Balance(0) = %d, want 5", b)
	}
	if err := m.Audit(); err != nil {
		t.Error(err)
	}
}

func TestMonitorWithdrawTimeout(t *testing.T) {
	m := NewMonitor(1, 10)
	done := startWithdraw(t, m, 0, 11, time.Millisecond)
	r := <-done
	if !errors.Is(r.err, ErrTimeout) {
		t.Fatalf("Withdraw = %d, %v; want ErrTimeout", r.bal, r.err)
	}
	if b, _ := m.Balance(0); b != 10 {
		t.Errorf("Balance(0) = %d after a timed-out withdrawal, want 10", b)
	}
	if d, w := m.Flow(); d != 0 || w != 0 {
		t.Errorf("Flow() = %d, %d, want 0, 0", d, w)
	}
	if n := m.waiting(); n != 0 {
		t.Errorf("waiting() = %d, want 0", n)
	}
}

func TestMonitorWithdrawNoWait(t *testing.T) {
	m := NewMonitor(1, 10)
	m.waitHook = func() { t.Error("a withdrawal waited") }
	for _, tt := range []struct {
		name    string
		a       uint32
		amt     int64
		timeout time.Duration
		wantErr error
	}{
		{name: "zero-timeout", a: 0, amt: 11, timeout: 0, wantErr: ErrInsufficientFunds},
		{name: "negative-timeout", a: 0, amt: 11, timeout: -time.Second, wantErr: ErrInsufficientFunds},
		{name: "no-account", a: 1, amt: 1, timeout: time.Hour, wantErr: ErrNoAccount},
		{name: "bad-amount", a: 0, amt: 0, timeout: time.Hour, wantErr: ErrBadAmount},
		{name: "sufficient", a: 0, amt: 4, timeout: time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := m.Withdraw(tt.a, tt.amt, tt.timeout); err != tt.wantErr {
				t.Errorf("Withdraw(%d, %d, %v) = %v, want %v", tt.a, tt.amt, tt.timeout, err, tt.wantErr)
			}
		})
	}
}

func TestMonitorMethods(t *testing.T) {
	m := NewMonitor(3, 50)
	if m.Accounts() != 3 || !m.Owns(2) || m.Owns(3) {
		t.Errorf("Accounts() = %d, Owns(2) = %v, Owns(3) = %v", m.Accounts(), m.Owns(2), m.Owns(3))
	}
	if b, err := m.Transfer(1, 1, 20); err != nil || b != 50 {
		t.Errorf("self Transfer = %d, %v; want 50, nil", b, err)
	}
	if _, err := m.Transfer(1, 1, 51); err != ErrInsufficientFunds {
		t.Errorf("self Transfer over balance: %v, want ErrInsufficientFunds", err)
	}
	if b, err := m.Transfer(0, 2, 20); err != nil || b != 30 {
		t.Errorf("Transfer = %d, %v; want 30, nil", b, err)
	}
	if b, err := m.Balance(2); err != nil || b != 70 {
		t.Errorf("Balance(2) = %d, %v; want 70, nil", b, err)
	}
	if got := m.Total(); got != 150 {
		t.Errorf("Total() = %d, want 150", got)
	}
}

// BenchmarkMonitorTransfer runs random transfers from parallel goroutines,
// either plain goroutines or locked to OS threads as the models call the
// monitor (locked=true), and reports the process's context switches per op.
func BenchmarkMonitorTransfer(b *testing.B) {
	for _, locked := range []bool{false, true} {
		b.Run(fmt.Sprintf("locked=%v", locked), func(b *testing.B) {
			const accounts = DefaultAccounts
			m := NewMonitor(accounts, DefaultInitialBalance)
			var seed atomic.Uint64
			var failed atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			cs0 := contextSwitches()
			b.RunParallel(func(pb *testing.PB) {
				if locked {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				r := rand.New(rand.NewPCG(seed.Add(1), 7))
				for pb.Next() {
					if _, err := m.Transfer(uint32(r.IntN(accounts)), uint32(r.IntN(accounts)), 1); err != nil {
						failed.Add(1)
					}
				}
			})
			b.StopTimer()
			if cs1 := contextSwitches(); cs0 >= 0 && cs1 >= 0 {
				b.ReportMetric(float64(cs1-cs0)/float64(b.N), "ctxsw/op")
			}
			if err := m.Audit(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/op")
		})
	}
}
