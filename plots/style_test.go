package plots

import (
	"image/color"
	"math"
	"slices"
	"testing"

	"concbench/models/registry"
)

// TestSlotColorsDistinct checks that the palette grows: every slot of a
// table far larger than today's has a colour of its own, never black (the
// colour of servers not in the table) and apart from every other slot's,
// and that the first slots are the palette's own colours.
func TestSlotColorsDistinct(t *testing.T) {
	const slots = 48
	black := palette[len(palette)-1]
	dist := func(a, b color.RGBA) float64 {
		dr, dg, db := float64(a.R)-float64(b.R), float64(a.G)-float64(b.G), float64(a.B)-float64(b.B)
		return math.Sqrt(dr*dr + dg*dg + db*db)
	}
	for i := range len(palette) - 1 {
		if slotColor(i) != palette[i] {
			t.Errorf("slot %d: %v, want the palette's %v", i, slotColor(i), palette[i])
		}
	}
	for i := range slots {
		ci := slotColor(i)
		if d := dist(ci, black); d < 40 {
			t.Errorf("slot %d: %v is %.0f from black", i, ci, d)
		}
		for j := range i {
			if d := dist(ci, slotColor(j)); d < 10 {
				t.Errorf("slots %d and %d: %v and %v, %.1f apart", j, i, slotColor(j), ci, d)
			}
		}
	}
}

// TestNewRowOwnColour adds a row to the model table in the next free slot
// and checks that its figures would draw it in a colour no other model
// has, and not in black.
func TestNewRowOwnColour(t *testing.T) {
	saved := registry.Models
	t.Cleanup(func() { registry.Models = saved })
	next := 0
	for _, m := range saved {
		next = max(next, m.Color+1)
	}
	registry.Models = append(slices.Clone(saved), registry.Model{Name: "echo", Family: registry.FamilyOther, Color: next})
	c := modelColor("echo")
	if c == palette[len(palette)-1] {
		t.Errorf("a new model in slot %d is drawn black", next)
	}
	for _, m := range saved {
		if modelColor(m.Name) == c {
			t.Errorf("a new model in slot %d shares %s's colour %v", next, m.Name, c)
		}
	}
}
