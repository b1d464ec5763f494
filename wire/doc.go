// Package wire defines the two protocols every model speaks: a binary framed
// protocol and HTTP/1.1 with keep-alive and pipelining, behind one Codec
// interface (placeholder doc, replaced by the codec implementation).
package wire
