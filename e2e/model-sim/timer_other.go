//go:build !linux

package main

import "time"

type sleeper struct{ fallback }

func newSleeper() *sleeper { return &sleeper{} }

func (s *sleeper) sleep(d time.Duration) { s.fallback.sleep(d) }

func (s *sleeper) close() { s.fallback.close() }
