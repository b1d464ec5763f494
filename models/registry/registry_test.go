package registry

import (
	"strings"
	"testing"
)

// TestNiceSpread checks the priority order's nice values at any pool
// size, and that a configuration's own --nice is kept.
func TestNiceSpread(t *testing.T) {
	prio := []string{"--promotion", "priority"}
	for _, tc := range []struct {
		args []string
		t    int
		want string
	}{
		{args: prio, t: 4, want: "--nice 0,5,10,15"},
		{args: prio, t: 1, want: "--nice 0"},
		{args: prio, t: 2, want: "--nice 0,15"},
		{args: []string{"--promotion=priority"}, t: 3, want: "--nice 0,8,15"},
		{args: []string{"--promotion", "priority", "--nice", "1,2"}, t: 4, want: ""},
		{args: []string{"--promotion", "lifo"}, t: 4, want: ""},
	} {
		if got := strings.Join(NiceSpread(tc.args, tc.t), " "); got != tc.want {
			t.Errorf("NiceSpread(%v, %d) = %q, want %q", tc.args, tc.t, got, tc.want)
		}
	}
}

// TestTable checks the table's own invariants: unique names and
// colours, a known family, configurations named after their model, and
// a start function and a summary for every row.
func TestTable(t *testing.T) {
	names, colours, configs := map[string]bool{}, map[int]string{}, map[string]bool{}
	for _, m := range Models {
		if names[m.Name] {
			t.Errorf("model %s twice", m.Name)
		}
		names[m.Name] = true
		if m.Color < 0 {
			t.Errorf("model %s has colour slot %d, want 0 or more", m.Name, m.Color)
		}
		if other, ok := colours[m.Color]; ok {
			t.Errorf("models %s and %s share colour %d", m.Name, other, m.Color)
		}
		colours[m.Color] = m.Name
		if m.Summary == "" || m.Flags == nil {
			t.Errorf("model %s has no summary or no flags", m.Name)
		}
		known := false
		for _, f := range Families {
			known = known || f == m.Family
		}
		if !known {
			t.Errorf("model %s: family %q not in %v", m.Name, m.Family, Families)
		}
		for _, c := range m.Configs {
			if c.Name != m.Name && !strings.HasPrefix(c.Name, m.Name+"/") || configs[c.Name] {
				t.Errorf("model %s: configuration %q not named after it, or twice", m.Name, c.Name)
			}
			configs[c.Name] = true
		}
	}
}
