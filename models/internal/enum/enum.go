// Package enum is the text form of the models' option enumerations
// (acceptmutex.Mode, frontend.Handoff, leaderfollowers.Promotion,
// leaderfollowers.LaneSched and sharedqueue.Completion): a value's name, parsing a name, the
// encoding.TextMarshaler pair that flag.TextVar and JSON use, and the
// check of a value out of range, with the same error messages for every
// enumeration. Each type's methods call its Names.
package enum

import (
	"fmt"
	"strconv"
	"strings"
)

// Names is an enumeration's names, indexed by value, and how its errors
// call it.
type Names[E ~int] struct {
	typ   string   // the Go type's name: a value out of range prints as typ(n)
	pkg   string   // the package, the errors' prefix
	what  string   // what the errors call a value: "accept mode"
	names []string // by value
}

// New returns the names of the enumeration typ of package pkg, whose
// errors call a value what; names[v] is value v's name.
func New[E ~int](typ, pkg, what string, names []string) *Names[E] {
	return &Names[E]{typ: typ, pkg: pkg, what: what, names: names}
}

// Valid reports whether v is a value of the enumeration.
func (n *Names[E]) Valid(v E) bool { return v >= 0 && int(v) < len(n.names) }

// List returns the names, comma-separated, for a message that says which
// are accepted.
func (n *Names[E]) List() string { return strings.Join(n.names, ", ") }

// String returns v's name, or typ(v) for a value out of range.
func (n *Names[E]) String(v E) string {
	if !n.Valid(v) {
		return n.typ + "(" + strconv.Itoa(int(v)) + ")"
	}
	return n.names[v]
}

// Parse returns the value named s; an unknown name's error lists the
// accepted ones.
func (n *Names[E]) Parse(s string) (E, error) {
	for i, name := range n.names {
		if s == name {
			return E(i), nil
		}
	}
	return 0, fmt.Errorf("%s: unknown %s %q (accepted: %s)", n.pkg, n.what, s, n.List())
}

// MarshalText is encoding.TextMarshaler for v: its name, or an error for
// a value out of range.
func (n *Names[E]) MarshalText(v E) ([]byte, error) {
	if !n.Valid(v) {
		return nil, fmt.Errorf("%s: invalid %s %d", n.pkg, n.what, int(v))
	}
	return []byte(n.names[v]), nil
}

// UnmarshalText is encoding.TextUnmarshaler for *v, with Parse.
func (n *Names[E]) UnmarshalText(b []byte, v *E) error {
	x, err := n.Parse(string(b))
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// Check returns nil for a value of the enumeration, and for a value out
// of range an error that lists the accepted names: an Options check.
func (n *Names[E]) Check(v E) error {
	if !n.Valid(v) {
		return fmt.Errorf("%s: invalid %s %d (accepted: %s)", n.pkg, n.what, int(v), n.List())
	}
	return nil
}
