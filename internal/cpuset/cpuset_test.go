package cpuset

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Set
		str     string
		wantErr string
	}{
		{in: "0", want: Set{0}, str: "0"},
		{in: "0-3", want: Set{0, 1, 2, 3}, str: "0-3"},
		{in: "5,0-1,3", want: Set{0, 1, 3, 5}, str: "0-1,3,5"},
		{in: "1,1,0", want: Set{0, 1}, str: "0-1"},
		{in: "", want: nil, str: ""},
		{in: "a", wantErr: `"a" is not a CPU number`},
		{in: "3-1", wantErr: "low <= high"},
		{in: "-1", wantErr: "not a CPU number"},
		{in: "2000", wantErr: "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || got.String() != tc.str {
				t.Fatalf("Parse(%q) = %v (%q), %v; want %v (%q)", tc.in, got, got.String(), err, tc.want, tc.str)
			}
		})
	}
}
