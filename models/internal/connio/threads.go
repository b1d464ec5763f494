package connio

import "sync"

// StartThreads starts run for each of threads on its own goroutine,
// counted in wg until run returns, and waits until every one has said on
// its channel whether it is ready (nil) or failed to start (its error,
// after which it returns); it returns the first error that arrived, or
// nil. run sends exactly once. It is the start-up of the models whose
// threads set themselves up before they serve (Leader/Followers: the
// threads' priorities; the proactor: their rings), so that Start fails,
// and the caller closes what it started, when any thread cannot run.
func StartThreads[T any](wg *sync.WaitGroup, threads []T, run func(T, chan<- error)) error {
	ready := make(chan error, len(threads))
	for _, th := range threads {
		wg.Go(func() { run(th, ready) })
	}
	var first error
	for range threads {
		if err := <-ready; err != nil && first == nil {
			first = err
		}
	}
	return first
}
