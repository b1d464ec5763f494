//go:build !linux

package activeobject

// gettid returns 0: thread ids are Linux's. The model does not start
// elsewhere (handleset.New returns ErrUnsupported).
func gettid() int { return 0 }
