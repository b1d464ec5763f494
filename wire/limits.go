package wire

// Limits returns the binary codec's limits, defaults applied (a zero-value
// Binary uses the defaults).
func (c *Binary) Limits() Limits { return c.lim.WithDefaults() }

// Limits returns the HTTP codec's limits, defaults applied (a zero-value
// HTTP uses the defaults).
func (c *HTTP) Limits() Limits { return c.lim.WithDefaults() }
