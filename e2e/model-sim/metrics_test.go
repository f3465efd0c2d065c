package main

import (
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

const lbl = `{model_name="test-model"}`

func TestRealMetricsCountWhatWasServed(t *testing.T) {
	ts, _ := startSim(t, "--time-to-first-token", "10", "--inter-token-latency", "2")
	before := scrape(t, ts.URL)
	if before["vllm:num_requests_running"+lbl] != 0 || before["vllm:num_requests_waiting"+lbl] != 0 {
		t.Fatalf("gauges must start at 0: %v", before)
	}
	if _, ok := before["vllm:time_to_first_token_seconds_count"+lbl]; ok {
		t.Error("histogram series must appear only after the first observation")
	}
	// What the client saw bounds what the server may report: the server's clock starts after the
	// request was sent and stops before the client reads the bytes.
	var clientTTFT, clientE2E float64
	quickFirstTokens := 0
	for i := 0; i < 4; i++ {
		start := time.Now()
		resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"a b c","max_tokens":10,"ignore_eos":true,"stream":true}`)
		first := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, first); err != nil {
			t.Fatal(err)
		}
		ttft := time.Since(start).Seconds()
		readAll(t, resp)
		clientTTFT += ttft
		clientE2E += time.Since(start).Seconds()
		if ttft <= 0.02 {
			quickFirstTokens++
		}
	}
	m := scrape(t, ts.URL)
	checks := map[string]float64{
		"vllm:prompt_tokens_total" + lbl:                                               12,
		"vllm:generation_tokens_total" + lbl:                                           40,
		`vllm:request_success_total{model_name="test-model",finished_reason="length"}`: 4,
		"vllm:time_to_first_token_seconds_count" + lbl:                                 4,
		"vllm:inter_token_latency_seconds_count" + lbl:                                 36,
		"vllm:time_per_output_token_seconds_count" + lbl:                               36,
		"vllm:e2e_request_latency_seconds_count" + lbl:                                 4,
		"vllm:request_queue_time_seconds_count" + lbl:                                  4,
		"vllm:request_prompt_tokens_sum" + lbl:                                         12,
		"vllm:request_generation_tokens_sum" + lbl:                                     40,
		`vllm:request_generation_tokens_bucket{model_name="test-model",le="5"}`:        0,
		`vllm:request_generation_tokens_bucket{model_name="test-model",le="10"}`:       4,
		`vllm:request_params_max_tokens_bucket{model_name="test-model",le="10"}`:       4,
		"vllm:num_requests_running" + lbl:                                              0,
		"vllm:kv_cache_usage_perc" + lbl:                                               0,
	}
	for k, want := range checks {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	// 4 TTFTs of at least 10 ms: none in the le=0.01 bucket; every one the client saw within
	// 20 ms is in the le=0.02 bucket (on a quiet machine, all four).
	if m[`vllm:time_to_first_token_seconds_bucket{model_name="test-model",le="0.01"}`] != 0 ||
		m[`vllm:time_to_first_token_seconds_bucket{model_name="test-model",le="0.02"}`] < float64(quickFirstTokens) {
		t.Errorf("ttft buckets %v, %d first tokens within 20 ms at the client", m, quickFirstTokens)
	}
	// Sums are bounded below by the schedule (never early) and above by what the client observed;
	// the exactness of the delays themselves is TestStreamTimingFollowsInjectedDelays.
	ttftSum := m["vllm:time_to_first_token_seconds_sum"+lbl]
	if ttftSum < 4*0.010 || ttftSum > clientTTFT {
		t.Errorf("ttft sum %v for 4 requests with TTFT 10 ms; the client saw %v", ttftSum, clientTTFT)
	}
	if total := ttftSum + m["vllm:inter_token_latency_seconds_sum"+lbl]; total < 4*0.028 || total > clientE2E {
		t.Errorf("ttft+itl sum %v for 4 requests of 10 ms + 9 x 2 ms; the client saw %v", total, clientE2E)
	}
	if _, ok := m[`vllm:lora_requests_info{max_lora="1",running_lora_adapters="",waiting_lora_adapters=""}`]; !ok {
		t.Error("lora_requests_info missing")
	}
}

func TestFakeMetricsAreReportedExactly(t *testing.T) {
	ts, _ := startSim(t, "--fake-metrics", `{"running-requests":7,"waiting-requests":3,"kv-cache-usage":0.42,
		"ttft-buckets-values":[1,2,3],"tpot-buckets-values":[0,5],"e2erl-buckets-values":[0,0,4],
		"request-prompt-tokens":[10,20],"request-generation-tokens":[5],"request-success-total":{"stop":9,"length":1},
		"loras":[{"running":"lora1","waiting":"lora2","timestamp":1700000000}]}`)
	// Real traffic must not disturb fake values.
	readAll(t, post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"a","max_tokens":3}`))
	m := scrape(t, ts.URL)
	checks := map[string]float64{
		"vllm:num_requests_running" + lbl:                                                                   7,
		"vllm:num_requests_waiting" + lbl:                                                                   3,
		"vllm:kv_cache_usage_perc" + lbl:                                                                    0.42,
		"vllm:gpu_cache_usage_perc" + lbl:                                                                   0.42,
		`vllm:time_to_first_token_seconds_bucket{model_name="test-model",le="0.001"}`:                       1,
		`vllm:time_to_first_token_seconds_bucket{model_name="test-model",le="0.005"}`:                       3,
		`vllm:time_to_first_token_seconds_bucket{model_name="test-model",le="0.01"}`:                        6,
		`vllm:time_to_first_token_seconds_bucket{model_name="test-model",le="+Inf"}`:                        6,
		"vllm:time_to_first_token_seconds_count" + lbl:                                                      6,
		"vllm:time_to_first_token_seconds_sum" + lbl:                                                        1*0.001 + 2*0.005 + 3*0.01,
		`vllm:inter_token_latency_seconds_bucket{model_name="test-model",le="0.025"}`:                       5,
		"vllm:time_per_output_token_seconds_count" + lbl:                                                    5,
		"vllm:e2e_request_latency_seconds_sum" + lbl:                                                        4 * 0.8,
		"vllm:prompt_tokens_total" + lbl:                                                                    30,
		"vllm:generation_tokens_total" + lbl:                                                                5,
		"vllm:request_prompt_tokens_count" + lbl:                                                            2,
		`vllm:request_success_total{model_name="test-model",finished_reason="stop"}`:                        9,
		`vllm:request_success_total{model_name="test-model",finished_reason="length"}`:                      1,
		`vllm:lora_requests_info{max_lora="1",running_lora_adapters="lora1",waiting_lora_adapters="lora2"}`: 1700000000,
	}
	for k, want := range checks {
		if got, ok := m[k]; !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
}

func TestFakeGaugeFunctions(t *testing.T) {
	fm, err := parseFakeMetrics(`{"running-requests":"ramp:0:10:10s","waiting-requests":"squarewave:1:5:2s","kv-cache-usage":"oscillate:0:1:4s"}`)
	if err != nil {
		t.Fatal(err)
	}
	if v := fm.RunningRequests.at(5 * time.Second); v != 5 {
		t.Errorf("ramp at half period %v", v)
	}
	if v := fm.RunningRequests.at(30 * time.Second); v != 10 {
		t.Errorf("ramp after period %v", v)
	}
	if a, b := fm.WaitingRequests.at(500*time.Millisecond), fm.WaitingRequests.at(1500*time.Millisecond); a != 1 || b != 5 {
		t.Errorf("squarewave %v %v", a, b)
	}
	if v := fm.KVCacheUsage.at(2 * time.Second); math.Abs(v-1) > 1e-9 {
		t.Errorf("oscillate at half period %v", v)
	}
}

// Requests beyond --max-num-seqs wait in a FIFO queue that shows in the gauges.
func TestQueueingBeyondMaxNumSeqs(t *testing.T) {
	ts, _ := startSim(t, "--max-num-seqs", "2", "--time-to-first-token", "400")
	var wg sync.WaitGroup
	durations := make([]time.Duration, 5)
	start := time.Now()
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := http.Post(ts.URL+"/v1/completions", "application/json",
				strings.NewReader(`{"model":"test-model","prompt":"p","max_tokens":1,"stream":true}`))
			if err != nil {
				t.Error(err)
				return
			}
			readEvents(t, resp.Body)
			resp.Body.Close()
			durations[i] = time.Since(start)
		}(i)
	}
	time.Sleep(200 * time.Millisecond)
	m := scrape(t, ts.URL)
	if m["vllm:num_requests_running"+lbl] != 2 || m["vllm:num_requests_waiting"+lbl] != 3 {
		t.Errorf("running %v waiting %v, want 2 and 3", m["vllm:num_requests_running"+lbl], m["vllm:num_requests_waiting"+lbl])
	}
	if kv := m["vllm:kv_cache_usage_perc"+lbl]; kv <= 0 {
		t.Errorf("kv cache usage with running requests: %v", kv)
	}
	wg.Wait()
	// Three waves of 400 ms: two, two, one.
	var late int
	for _, d := range durations {
		if d > 1100*time.Millisecond {
			late++
		}
	}
	if late != 1 {
		t.Errorf("completion times %v: want exactly one request in the third wave", durations)
	}
	m = scrape(t, ts.URL)
	if m["vllm:num_requests_running"+lbl] != 0 || m["vllm:num_requests_waiting"+lbl] != 0 {
		t.Errorf("gauges after the run: %v %v", m["vllm:num_requests_running"+lbl], m["vllm:num_requests_waiting"+lbl])
	}
	if q := m["vllm:request_queue_time_seconds_sum"+lbl]; q < 0.4*2+0.8-0.05 {
		t.Errorf("queue time sum %v, want about 1.6 s", q)
	}
}

func TestFailureInjection(t *testing.T) {
	ts, _ := startSim(t, "--failure-injection-rate", "100", "--failure-types", "rate_limit")
	resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"p","max_tokens":2}`)
	body := readAll(t, resp)
	if resp.StatusCode != 429 || !strings.Contains(body, `"type":"rate_limit_exceeded"`) || !strings.Contains(body, "test-model") {
		t.Errorf("rate_limit: %d %s", resp.StatusCode, body)
	}

	ts, _ = startSim(t, "--failure-injection-rate", "100", "--failure-types", "server_error,invalid_request,model_not_found")
	seen := map[int]int{}
	for i := 0; i < 60; i++ {
		resp := post(t, ts.URL+"/v1/chat/completions", `{"model":"test-model","messages":[{"role":"user","content":"p"}],"stream":true}`)
		readAll(t, resp)
		seen[resp.StatusCode]++
	}
	if len(seen) != 3 || seen[503] == 0 || seen[400] == 0 || seen[404] == 0 {
		t.Errorf("status mix %v", seen)
	}

	ts, s := startSim(t, "--failure-injection-rate", "25")
	failed := 0
	for i := 0; i < 400; i++ {
		resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"p","max_tokens":1}`)
		readAll(t, resp)
		if resp.StatusCode != 200 {
			failed++
		}
	}
	if failed < 60 || failed > 140 || uint64(failed) != s.failures.Load() {
		t.Errorf("%d of 400 failed at 25%%", failed)
	}
	m := scrape(t, ts.URL)
	if got := m[`vllm:request_success_total{model_name="test-model",finished_reason="length"}`] +
		m[`vllm:request_success_total{model_name="test-model",finished_reason="stop"}`]; got != float64(400-failed) {
		t.Errorf("successes counted %v, want %d", got, 400-failed)
	}
}
