// Package hostile measures what hostile clients cost a concbench server,
// configuration by configuration: the memory amplification of clients
// that pipeline requests for large bodies and never read (against
// models.ConnMemoryBound), and slow headers that hold connections until
// the server's header timeout closes them, each beside a victim client's
// p99. The attacks are described in "concbench help hostile" and
// docs/usage.md ("hostile").
package hostile
