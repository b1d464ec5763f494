package plots

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The checks the figures' tests share.

// checkCaption checks that f's caption contains every want.
func checkCaption(t *testing.T, f *Figure, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(f.Caption, want) {
			t.Errorf("caption %q\nwant it to contain %q", f.Caption, want)
		}
	}
}

// rendered returns f drawn in format (Figure.Render), failing the test
// if it cannot be drawn.
func rendered(t *testing.T, f *Figure, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.Render(&b, format); err != nil {
		t.Fatalf("render %s.%s: %v", f.Name, format, err)
	}
	return b.Bytes()
}

// checkRenders renders f in every format given and checks that each
// draws something, without an error; a format that fails does not stop
// the test's other checks.
func checkRenders(t *testing.T, f *Figure, formats ...string) {
	t.Helper()
	for _, format := range formats {
		var b bytes.Buffer
		switch err := f.Render(&b, format); {
		case err != nil:
			t.Errorf("render %s.%s: %v", f.Name, format, err)
		case b.Len() == 0:
			t.Errorf("render %s.%s: nothing drawn", f.Name, format)
		}
	}
}

// figureCSV returns f's CSV (Figure.WriteCSV), failing the test if it
// cannot be written.
func figureCSV(t *testing.T, f *Figure) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkNotDrawn checks that figs has no figure called name.
func checkNotDrawn(t *testing.T, figs []*Figure, name string) {
	t.Helper()
	if slices.ContainsFunc(figs, func(f *Figure) bool { return f.Name == name }) {
		t.Errorf("the %s figure is drawn", name)
	}
}

// checkNotListed checks that no line of omitted mentions what: a run
// with nothing for a figure to show does not list it as not drawn.
func checkNotListed(t *testing.T, omitted []string, what string) {
	t.Helper()
	for _, o := range omitted {
		if strings.Contains(o, what) {
			t.Errorf("omitted %q: the figure is listed as not drawn", o)
		}
	}
}
