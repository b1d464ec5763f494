package loadgen

import (
	"strings"
	"testing"
)

func TestPriorityClasses(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[int]uint8 // priority → class
		wantErr string
	}{
		{name: "one boundary", in: "128", want: map[int]uint8{0: 0, 127: 0, 128: 1, 255: 1}},
		{name: "three classes", in: "1,200", want: map[int]uint8{0: 0, 1: 1, 199: 1, 200: 2, 255: 2}},
		{name: "zero", in: "0", wantErr: "out of range"},
		{name: "too high", in: "256", wantErr: "out of range"},
		{name: "not increasing", in: "100,100", wantErr: "increase"},
		{name: "not a number", in: "high", wantErr: "not an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParsePriorityClasses(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tab := classTable(b)
			for p, c := range tt.want {
				if tab[p] != c {
					t.Errorf("priority %d in class %d, want %d", p, tab[p], c)
				}
			}
		})
	}
}

// TestClassLatencies runs a mix of two priorities and checks that each
// request's latency is in its class and in no other: the classes' counts
// add up to the whole, and each class got requests.
func TestClassLatencies(t *testing.T) {
	for _, proto := range protocols {
		t.Run("protocol="+proto, func(t *testing.T) {
			s := startServer(t, proto, nil)
			r := mustRun(t, Config{Addr: s.addr(), Protocol: proto, Conns: 4, Closed: true, Requests: 400, Seed: 5,
				Priority: Bimodal(0.25, 200, 0), PriorityClasses: []int{100, 250}})
			if len(r.Classes) != 3 {
				t.Fatalf("%d classes, want 3", len(r.Classes))
			}
			var sum int64
			for _, c := range r.Classes {
				sum += c.Latency.Count
			}
			if sum != r.Latency.Count {
				t.Errorf("classes count %d requests, latency %d", sum, r.Latency.Count)
			}
			lo, hi, top := r.Classes[0], r.Classes[1], r.Classes[2]
			if lo.Latency.Count == 0 || hi.Latency.Count == 0 || top.Latency.Count != 0 {
				t.Errorf("counts %d (%s), %d (%s), %d (%s): want >0, >0, 0", lo.Latency.Count, lo.Name(), hi.Latency.Count, hi.Name(), top.Latency.Count, top.Name())
			}
			if lo.Name() != "prio 0-99" || hi.Name() != "prio 100-249" || top.Name() != "prio 250-255" {
				t.Errorf("class names %q, %q, %q", lo.Name(), hi.Name(), top.Name())
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "prio 100-249") {
				t.Errorf("the text report does not show the classes:\n%s", b.String())
			}
		})
	}
}

func TestPrimePriority(t *testing.T) {
	tests := []struct {
		name string
		dist Dist
		want uint8
	}{
		{name: "zero", dist: Dist{}, want: 0},
		{name: "fixed", dist: Fixed(200), want: 200},
		{name: "exp", dist: Exp(100), want: 0},
		{name: "bimodal", dist: Bimodal(0.5, 200, 0), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := primePriority(&Config{Priority: tt.dist}); got != tt.want {
				t.Errorf("primePriority = %d, want %d", got, tt.want)
			}
		})
	}
}
