package main

import "time"

// fallback sleeps with a reusable time.Timer.
type fallback struct{ t *time.Timer }

func (f *fallback) sleep(d time.Duration) {
	if f.t == nil {
		f.t = time.NewTimer(d)
	} else {
		f.t.Reset(d)
	}
	<-f.t.C
}

func (f *fallback) close() {
	if f.t != nil {
		f.t.Stop()
	}
}
