package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func ids(from, to int, extra ...int) string {
	var parts []string
	for i := from; i <= to; i++ {
		parts = append(parts, fmt.Sprint(i))
	}
	for _, e := range extra {
		parts = append(parts, fmt.Sprint(e))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func complete(t *testing.T, base, promptJSON string) {
	t.Helper()
	resp := post(t, base+"/v1/completions", `{"model":"test-model","prompt":`+promptJSON+`,"max_tokens":2,"ignore_eos":true}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d for %s", resp.StatusCode, promptJSON)
	}
}

// The counters are vLLM's: queries count every prompt token, hits the tokens of the longest cached
// prefix of full blocks, at most all but the last token; blocks match only after the same prefix.
func TestPrefixCacheCountsQueriesAndHitsAsVllmDoes(t *testing.T) {
	ts, _ := startSim(t, "--enable-prefix-caching", "--block-size", "4")
	complete(t, ts.URL, ids(1, 10))            // 10 tokens, nothing cached; caches 2 blocks
	complete(t, ts.URL, ids(1, 8, 99, 100))    // the 2 blocks hit: 8
	complete(t, ts.URL, ids(1, 8))             // 8 tokens: only the first block may hit (not the last token): 4
	complete(t, ts.URL, ids(5, 8, 1, 2, 3, 4)) // block [5..8] first: another chain, no hit
	complete(t, ts.URL, `"w1 w2 w3 w4 w5"`)    // text: words are tokens; caches 1 block
	complete(t, ts.URL, `"w1 w2  w3\tw4 other"`)
	m := scrape(t, ts.URL)
	if got := m["vllm:prefix_cache_queries_total"+lbl]; got != 10+10+8+8+5+5 {
		t.Errorf("queries %v, want 46", got)
	}
	if got := m["vllm:prefix_cache_hits_total"+lbl]; got != 0+8+4+0+0+4 {
		t.Errorf("hits %v, want 16", got)
	}

	// a reset empties it: the first prompt misses again, and the reset is counted
	resp := post(t, ts.URL+"/reset_prefix_cache", "")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reset: HTTP %d", resp.StatusCode)
	}
	complete(t, ts.URL, ids(1, 10))
	m = scrape(t, ts.URL)
	if got := m["vllm:prefix_cache_hits_total"+lbl]; got != 16 {
		t.Errorf("hits after the reset %v, want still 16", got)
	}
	if got := m["modelsim_prefix_cache_resets_total"+lbl]; got != 1 {
		t.Errorf("resets %v, want 1", got)
	}
	// SGLang's name for it too
	resp = post(t, ts.URL+"/flush_cache", "")
	resp.Body.Close()
	if got := scrape(t, ts.URL)["modelsim_prefix_cache_resets_total"+lbl]; got != 2 {
		t.Errorf("resets %v, want 2", got)
	}
	if r, _ := http.Get(ts.URL + "/reset_prefix_cache"); r.StatusCode != 405 {
		t.Errorf("GET /reset_prefix_cache: HTTP %d, want 405", r.StatusCode)
	}
}

// A chat's messages are looked up in order, all of them: a shared system prompt hits.
func TestPrefixCacheOfChatsSharingASystemPrompt(t *testing.T) {
	ts, _ := startSim(t, "--enable-prefix-caching", "--block-size", "4")
	system := strings.Repeat("rule ", 8) // 8 tokens: 2 blocks
	for i := 0; i < 3; i++ {
		body, _ := json.Marshal(map[string]any{
			"model":      "test-model",
			"max_tokens": 1,
			"messages": []map[string]string{
				{"role": "system", "content": system},
				{"role": "user", "content": fmt.Sprintf("question %d please", i)},
			},
		})
		resp := post(t, ts.URL+"/v1/chat/completions", string(body))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	m := scrape(t, ts.URL)
	if got := m["vllm:prefix_cache_queries_total"+lbl]; got != 3*11 {
		t.Errorf("queries %v, want 33", got)
	}
	// the second and third share the system prompt's 2 blocks
	if got := m["vllm:prefix_cache_hits_total"+lbl]; got != 2*8 {
		t.Errorf("hits %v, want 16", got)
	}
}

// Without --enable-prefix-caching the page has no prefix-cache counters (vLLM's page of a server
// without it), and a reset is still counted.
func TestNoPrefixCacheByDefault(t *testing.T) {
	ts, _ := startSim(t)
	complete(t, ts.URL, ids(1, 10))
	m := scrape(t, ts.URL)
	if _, ok := m["vllm:prefix_cache_queries_total"+lbl]; ok {
		t.Error("no prefix-cache counters without --enable-prefix-caching")
	}
	if _, ok := m["modelsim_prefix_cache_resets_total"+lbl]; ok {
		t.Error("no resets counter before a reset")
	}
}

// Cached tokens take (1 - factor) of their share off the time to first token.
func TestCachedTokensShortenTheTimeToFirstToken(t *testing.T) {
	ts, _ := startSim(t, "--enable-prefix-caching", "--block-size", "4",
		"--time-to-first-token", "300", "--cached-prefill-factor", "0")
	ttft := func() time.Duration {
		start := time.Now()
		resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":`+ids(1, 8, 9)+`,"max_tokens":1,"stream":true}`)
		first := make([]byte, 1)
		io.ReadFull(resp.Body, first)
		d := time.Since(start)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return d
	}
	cold := ttft()
	warm := ttft() // 8 of 9 tokens cached: 300 ms * 1/9 = 33 ms
	if cold < 300*time.Millisecond {
		t.Errorf("cold TTFT %v, want at least 300ms", cold)
	}
	if warm < 33*time.Millisecond || warm > 200*time.Millisecond {
		t.Errorf("warm TTFT %v, want about 33ms (8 of 9 tokens cached, factor 0)", warm)
	}
}

func TestPrefixCacheFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{{"--block-size", "0"}, {"--cached-prefill-factor", "1.5"}} {
		if _, _, err := parseArgs(append([]string{"--model", "m"}, args...)); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: error %v, want one naming %s", args, err, args[0])
		}
	}
}

// --refuse-cache-reset is a vLLM started without VLLM_SERVER_DEV_MODE=1: neither path exists, the
// cache stays, and the refusals are counted so a test can see every replica was asked.
func TestRefusedCacheResetsLeaveTheCacheAndAreCounted(t *testing.T) {
	ts, _ := startSim(t, "--enable-prefix-caching", "--block-size", "4", "--refuse-cache-reset")
	complete(t, ts.URL, ids(1, 10))
	for _, path := range []string{"/reset_prefix_cache", "/flush_cache"} {
		resp := post(t, ts.URL+path, "")
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("POST %s: HTTP %d, want 404", path, resp.StatusCode)
		}
	}
	complete(t, ts.URL, ids(1, 10))
	m := scrape(t, ts.URL)
	if got := m["vllm:prefix_cache_hits_total"+lbl]; got != 8 {
		t.Errorf("hits %v, want 8 (the cache was kept)", got)
	}
	if got := m["modelsim_prefix_cache_resets_refused_total"+lbl]; got != 2 {
		t.Errorf("refused resets %v, want 2", got)
	}
	if _, ok := m["modelsim_prefix_cache_resets_total"+lbl]; ok {
		t.Error("no resets counted")
	}
}
