//go:build !linux

package leaderfollowers

import (
	"time"

	"concbench/handleset"
)

// The model is Linux-only (epoll, futex, timerfd); elsewhere handleset.New
// fails first and these are never reached.

func setNice(tid, nice int) error { return handleset.ErrUnsupported }

func threadNice(tid int) (int, error) { return 0, handleset.ErrUnsupported }

func setFIFO(tid, rtprio int) error { return handleset.ErrUnsupported }

func readRTBudget() rtBudget { return rtBudget{Err: handleset.ErrUnsupported} }

func peekFd(fd int, buf []byte) (int, error) { return 0, handleset.ErrUnsupported }

func newTimerFd() (int, error) { return -1, handleset.ErrUnsupported }

func setTimer(fd int, d time.Duration) error { return handleset.ErrUnsupported }

func drainTimer(fd int) error { return handleset.ErrUnsupported }
