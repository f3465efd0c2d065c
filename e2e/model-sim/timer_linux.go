package main

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// On Linux the Go runtime parks idle threads in epoll_wait with millisecond granularity, which
// makes time.Timer fire up to ~1 ms late. A timerfd registered with the runtime's poller becomes
// readable at the hrtimer's expiry instead, so token events leave within tens of microseconds of
// their schedule.

type sleeper struct {
	file *os.File
	fd   uintptr
	buf  [8]byte
	fallback
}

type itimerspec struct {
	interval syscall.Timespec
	value    syscall.Timespec
}

const clockMonotonic = 1

func newSleeper() *sleeper {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic,
		uintptr(syscall.O_NONBLOCK|syscall.O_CLOEXEC), 0)
	if errno != 0 {
		return &sleeper{}
	}
	return &sleeper{file: os.NewFile(fd, "timerfd"), fd: fd}
}

// sleep blocks for d (d > 0).
func (s *sleeper) sleep(d time.Duration) {
	if s.file == nil {
		s.fallback.sleep(d)
		return
	}
	spec := itimerspec{value: syscall.NsecToTimespec(int64(d))}
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, s.fd, 0,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		s.fallback.sleep(d)
		return
	}
	if _, err := s.file.Read(s.buf[:]); err != nil {
		s.fallback.sleep(d)
	}
}

func (s *sleeper) close() {
	if s.file != nil {
		s.file.Close()
	}
	s.fallback.close()
}
