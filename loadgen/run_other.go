//go:build !linux

package loadgen

import "context"

// Run returns ErrUnsupported: the generator's workers use epoll.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, ErrUnsupported
}
