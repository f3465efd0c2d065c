package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func median(v []time.Duration) time.Duration {
	s := append([]time.Duration(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Event arrival times seen by a client equal the injected delays: the median error of TTFT and
// of the inter-token gaps stays well under a millisecond, and no event is ever early. The machine
// may be shared, so a measurement whose medians are late is repeated (up to three attempts);
// earliness fails at once.
func TestStreamTimingFollowsInjectedDelays(t *testing.T) {
	const ttft, itl = 20 * time.Millisecond, 5 * time.Millisecond
	ts, _ := startSim(t, "--time-to-first-token", "20", "--inter-token-latency", "5ms")
	slack := time.Millisecond
	if raceEnabled {
		slack = 3 * time.Millisecond // the race detector slows every request path several-fold
	}
	var report []string
	for attempt := 1; attempt <= 3; attempt++ {
		ttfts, gaps, first := measureStreams(t, ts.URL)
		if first < ttft {
			t.Fatalf("a first token arrived after %v, before the injected %v", first, ttft)
		}
		mt, mg := median(ttfts), median(gaps)
		if mt-ttft <= slack && (mg-itl).Abs() <= 300*time.Microsecond {
			return
		}
		report = append(report, fmt.Sprintf("attempt %d: median TTFT %v (injected %v), median ITL %v (injected %v)",
			attempt, mt, ttft, mg, itl))
	}
	t.Errorf("timing off in every attempt:\n%s", strings.Join(report, "\n"))
}

// measureStreams runs 5 completions and 5 chat streams of 20 tokens one after another and returns
// the client-side TTFTs, the gaps between content events, and the smallest TTFT.
func measureStreams(t *testing.T, base string) (ttfts, gaps []time.Duration, first time.Duration) {
	const tokens = 20
	first = time.Hour
	for r := 0; r < 5; r++ {
		for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
			body := `{"model":"test-model","prompt":"p","messages":[{"role":"user","content":"p"}],"max_tokens":20,"ignore_eos":true,"stream":true}`
			sent := time.Now()
			resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			events := readEvents(t, resp.Body)
			resp.Body.Close()
			var content []time.Time
			for _, e := range events {
				if strings.Contains(e.data, `"text"`) || strings.Contains(e.data, `"delta":{"content"`) {
					content = append(content, e.at)
				}
			}
			if len(content) != tokens {
				t.Fatalf("%s: %d content events", path, len(content))
			}
			ttfts = append(ttfts, content[0].Sub(sent))
			first = min(first, content[0].Sub(sent))
			for i := 1; i < len(content); i++ {
				gaps = append(gaps, content[i].Sub(content[i-1]))
			}
		}
	}
	return ttfts, gaps, first
}

func TestNonStreamingAnswerTakesTheWholeSchedule(t *testing.T) {
	ts, _ := startSim(t, "--time-to-first-token", "30ms", "--inter-token-latency", "10ms")
	start := time.Now()
	readAll(t, post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"p","max_tokens":8,"ignore_eos":true}`))
	took := time.Since(start)
	if want := 30*time.Millisecond + 7*10*time.Millisecond; took < want || took > want+20*time.Millisecond {
		t.Errorf("took %v, want about %v", took, want)
	}
}

func TestStdDevDrawsStayWithinBounds(t *testing.T) {
	ts, s := startSim(t, "--time-to-first-token", "100", "--time-to-first-token-std-dev", "30",
		"--inter-token-latency", "10", "--inter-token-latency-std-dev", "3")
	_ = ts
	rng := newTestRand()
	varied := false
	for i := 0; i < 200; i++ {
		off := s.schedule(5, rng)
		if off[0] < 30*time.Millisecond || off[0] > 170*time.Millisecond {
			t.Fatalf("ttft draw %v outside +/-70%%", off[0])
		}
		if off[0] != 100*time.Millisecond {
			varied = true
		}
		for j := 1; j < 5; j++ {
			if g := off[j] - off[j-1]; g < 3*time.Millisecond || g > 17*time.Millisecond {
				t.Fatalf("itl draw %v outside +/-70%%", g)
			}
		}
	}
	if !varied {
		t.Error("std-dev had no effect")
	}
}

// A client that goes away mid-stream frees its slot; the request counts as aborted.
func TestDisconnectedClientFreesTheSlot(t *testing.T) {
	ts, s := startSim(t, "--max-num-seqs", "1", "--inter-token-latency", "20")
	resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"p","max_tokens":500,"ignore_eos":true,"stream":true}`)
	buf := make([]byte, 100)
	resp.Body.Read(buf)
	resp.Body.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		readAll(t, post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"p","max_tokens":2,"ignore_eos":true}`))
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("second request never got the slot")
	}
	if got := s.metrics.successCounter("abort").value(); got != 1 {
		t.Errorf("aborted count %v", got)
	}
}
