package enum

import "testing"

type color int

var colors = New[color]("color", "paint", "colour", []string{"red", "green"})

func TestNames(t *testing.T) {
	for v, want := range map[color]string{0: "red", 1: "green", 2: "color(2)", -1: "color(-1)"} {
		if got := colors.String(v); got != want {
			t.Errorf("String(%d) = %q, want %q", v, got, want)
		}
	}
	if v, err := colors.Parse("green"); v != 1 || err != nil {
		t.Errorf("Parse(green) = %v, %v", v, err)
	}
	if _, err := colors.Parse("blue"); err == nil || err.Error() != `paint: unknown colour "blue" (accepted: red, green)` {
		t.Errorf("Parse(blue): %v", err)
	}
	var c color
	if err := colors.UnmarshalText([]byte("green"), &c); err != nil || c != 1 {
		t.Errorf("UnmarshalText(green): %v, %v", c, err)
	}
	if b, err := colors.MarshalText(0); string(b) != "red" || err != nil {
		t.Errorf("MarshalText(0) = %q, %v", b, err)
	}
	if _, err := colors.MarshalText(5); err == nil || err.Error() != "paint: invalid colour 5" {
		t.Errorf("MarshalText(5): %v", err)
	}
	if err := colors.Check(1); err != nil {
		t.Errorf("Check(1): %v", err)
	}
	if err := colors.Check(2); err == nil || err.Error() != "paint: invalid colour 2 (accepted: red, green)" {
		t.Errorf("Check(2): %v", err)
	}
}
