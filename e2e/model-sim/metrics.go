package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bucket boundaries as vLLM's V1 engine (and llm-d-inference-sim) declare them, in seconds.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	tpotBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
		20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// tokenBuckets mirrors vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, 20, 50, ... <= max.
func tokenBuckets(maxValue int) []float64 {
	var out []float64
	for exp := 1; ; exp *= 10 {
		added := false
		for _, m := range []int{1, 2, 5} {
			if v := m * exp; v <= maxValue {
				out = append(out, float64(v))
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// histogram is lock-free: per-bucket counts (not cumulative) and a sum kept as float64 bits.
type histogram struct {
	bounds  []float64
	counts  []atomic.Uint64 // len(bounds)+1, last is +Inf
	sumBits atomic.Uint64
	used    atomic.Bool // series appear only after the first observation, as in Prometheus clients
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: Prometheus buckets are "le"
	h.counts[i].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	h.used.Store(true)
}

// setFake replaces the content with bucketCounts[i] observations at each bucket's upper bound
// (last bound + 1 for the +Inf bucket), the same convention llm-d-inference-sim uses, so the
// resulting _sum is known exactly. Returns that sum.
func (h *histogram) setFake(bucketCounts []int) float64 {
	sum := 0.0
	for i := range h.counts {
		var n int
		if i < len(bucketCounts) {
			n = bucketCounts[i]
		}
		h.counts[i].Store(uint64(n))
		sum += float64(n) * fakeObservation(h.bounds, i)
	}
	h.sumBits.Store(math.Float64bits(sum))
	h.used.Store(len(bucketCounts) > 0)
	return sum
}

// setFakeSamples observes each sample once.
func (h *histogram) setFakeSamples(samples []int) float64 {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.sumBits.Store(0)
	sum := 0.0
	for _, s := range samples {
		h.observe(float64(s))
		sum += float64(s)
	}
	return sum
}

func fakeObservation(bounds []float64, i int) float64 {
	if i < len(bounds) {
		return bounds[i]
	}
	return bounds[len(bounds)-1] + 1
}

type counter struct {
	bits atomic.Uint64
	used atomic.Bool
}

func (c *counter) add(v float64) {
	for {
		old := c.bits.Load()
		if c.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	c.used.Store(true)
}

func (c *counter) set(v float64) {
	c.bits.Store(math.Float64bits(v))
	c.used.Store(true)
}

func (c *counter) value() float64 { return math.Float64frombits(c.bits.Load()) }

// Metrics is the simulator's vLLM-compatible Prometheus surface.
type Metrics struct {
	modelName string
	maxLoras  int
	// runningLoras lists the LoRA adapters with a request in progress (nil: none served).
	runningLoras func() string
	fake         *FakeMetrics
	started      time.Time

	running      atomic.Int64
	waiting      atomic.Int64
	kvTokens     atomic.Int64 // tokens held by running requests
	kvCapacity   float64
	successMu    sync.Mutex
	success      map[string]*counter // by finished_reason
	promptTotal  counter
	genTotal     counter
	ttft         *histogram
	itl          *histogram
	tpot         *histogram // legacy name, same observations as itl
	reqTpot      *histogram
	e2e          *histogram
	queue        *histogram
	inference    *histogram
	prefill      *histogram
	decode       *histogram
	promptTokens *histogram
	genTokens    *histogram
	maxTokens    *histogram

	prefix        *prefixCache
	prefixCaching bool
}

func newMetrics(cfg *Config) *Metrics {
	tb := tokenBuckets(cfg.MaxModelLen)
	m := &Metrics{
		modelName:    cfg.ServedModelNames[0],
		maxLoras:     cfg.MaxLoras,
		fake:         cfg.FakeMetrics,
		started:      time.Now(),
		kvCapacity:   float64(cfg.MaxNumSeqs) * float64(cfg.MaxModelLen),
		success:      map[string]*counter{},
		ttft:         newHistogram(ttftBuckets),
		itl:          newHistogram(tpotBuckets),
		tpot:         newHistogram(tpotBuckets),
		reqTpot:      newHistogram(tpotBuckets),
		e2e:          newHistogram(requestLatencyBuckets),
		queue:        newHistogram(requestLatencyBuckets),
		inference:    newHistogram(requestLatencyBuckets),
		prefill:      newHistogram(requestLatencyBuckets),
		decode:       newHistogram(requestLatencyBuckets),
		promptTokens: newHistogram(tb),
		genTokens:    newHistogram(tb),
		maxTokens:    newHistogram(tb),
	}
	if m.fake != nil {
		m.applyFake(m.fake)
	}
	return m
}

func (m *Metrics) applyFake(f *FakeMetrics) {
	m.ttft.setFake(f.TTFTBuckets)
	m.itl.setFake(f.TPOTBuckets)
	m.tpot.setFake(f.TPOTBuckets)
	m.e2e.setFake(f.E2EBuckets)
	m.queue.setFake(f.QueueTimeBuckets)
	m.inference.setFake(f.InferenceTimeBuckets)
	m.prefill.setFake(f.PrefillTimeBuckets)
	m.decode.setFake(f.DecodeTimeBuckets)
	promptSum := m.promptTokens.setFakeSamples(f.RequestPromptTokens)
	genSum := m.genTokens.setFakeSamples(f.RequestGenerationTokens)
	m.maxTokens.setFakeSamples(f.RequestParamsMaxTokens)
	if f.TotalPromptTokens != nil {
		promptSum = float64(*f.TotalPromptTokens)
	}
	if f.TotalGenerationTokens != nil {
		genSum = float64(*f.TotalGenerationTokens)
	}
	if f.RequestPromptTokens != nil || f.TotalPromptTokens != nil {
		m.promptTotal.set(promptSum)
	}
	if f.RequestGenerationTokens != nil || f.TotalGenerationTokens != nil {
		m.genTotal.set(genSum)
	}
	for reason, n := range f.RequestSuccessTotal {
		c := &counter{}
		c.set(float64(n))
		m.success[reason] = c
	}
}

func (m *Metrics) isFake() bool { return m.fake != nil }

func (m *Metrics) requestQueued() { m.waiting.Add(1) }

func (m *Metrics) requestDequeued(queueTime time.Duration) {
	m.waiting.Add(-1)
	m.running.Add(1)
	if !m.isFake() {
		m.queue.observe(queueTime.Seconds())
	}
}

func (m *Metrics) requestAbandonedInQueue() { m.waiting.Add(-1) }

func (m *Metrics) kvAdd(tokens int) { m.kvTokens.Add(int64(tokens)) }

func (m *Metrics) firstToken(ttft time.Duration) {
	if !m.isFake() {
		m.ttft.observe(ttft.Seconds())
	}
}

func (m *Metrics) interToken(gap time.Duration) {
	if !m.isFake() {
		s := gap.Seconds()
		m.itl.observe(s)
		m.tpot.observe(s)
	}
}

type finishedRequest struct {
	reason                       string
	promptTokens, outputTokens   int
	maxTokens                    int // 0 when the request did not set it
	e2e, inference, prefill, dec time.Duration
	kvTokens                     int
}

func (m *Metrics) requestFinished(r finishedRequest) {
	m.running.Add(-1)
	m.kvTokens.Add(-int64(r.kvTokens))
	if m.isFake() {
		return
	}
	m.successCounter(r.reason).add(1)
	m.promptTotal.add(float64(r.promptTokens))
	m.genTotal.add(float64(r.outputTokens))
	m.promptTokens.observe(float64(r.promptTokens))
	m.genTokens.observe(float64(r.outputTokens))
	if r.maxTokens > 0 {
		m.maxTokens.observe(float64(r.maxTokens))
	}
	m.e2e.observe(r.e2e.Seconds())
	m.inference.observe(r.inference.Seconds())
	m.prefill.observe(r.prefill.Seconds())
	m.decode.observe(r.dec.Seconds())
	if r.outputTokens > 1 {
		m.reqTpot.observe(r.dec.Seconds() / float64(r.outputTokens-1))
	}
}

func (m *Metrics) successCounter(reason string) *counter {
	m.successMu.Lock()
	defer m.successMu.Unlock()
	c := m.success[reason]
	if c == nil {
		c = &counter{}
		m.success[reason] = c
	}
	return c
}

// render writes the Prometheus text exposition format 0.0.4.
func (m *Metrics) render(now time.Time) []byte {
	var b []byte
	label := `{model_name="` + escapeLabel(m.modelName) + `"}`
	gauge := func(name, help string, v float64) {
		b = appendHeader(b, name, help, "gauge")
		b = append(b, name...)
		b = append(b, label...)
		b = append(b, ' ')
		b = appendFloat(b, v)
		b = append(b, '\n')
	}
	running, waiting := float64(m.running.Load()), float64(m.waiting.Load())
	kv := 0.0
	if m.kvCapacity > 0 {
		kv = math.Min(1, float64(m.kvTokens.Load())/m.kvCapacity)
	}
	if f := m.fake; f != nil {
		elapsed := now.Sub(m.started)
		running = math.Trunc(f.RunningRequests.at(elapsed))
		waiting = math.Trunc(f.WaitingRequests.at(elapsed))
		kv = f.KVCacheUsage.at(elapsed)
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running)
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting)
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", kv)
	gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage (deprecated name of vllm:kv_cache_usage_perc).", kv)

	b = appendHeader(b, "vllm:lora_requests_info", "Running stats on lora requests.", "gauge")
	loras := []LoraMetrics{{Timestamp: float64(m.started.Unix())}}
	if m.runningLoras != nil {
		loras[0].Running = m.runningLoras()
		loras[0].Timestamp = float64(now.UnixNano()) / 1e9
	}
	if m.fake != nil && len(m.fake.Loras) > 0 {
		loras = m.fake.Loras
	}
	for _, l := range loras {
		b = append(b, `vllm:lora_requests_info{max_lora="`...)
		b = strconv.AppendInt(b, int64(m.maxLoras), 10)
		b = append(b, `",running_lora_adapters="`...)
		b = append(b, escapeLabel(l.Running)...)
		b = append(b, `",waiting_lora_adapters="`...)
		b = append(b, escapeLabel(l.Waiting)...)
		b = append(b, `"} `...)
		b = appendFloat(b, l.Timestamp)
		b = append(b, '\n')
	}

	counterLine := func(name, help string, c *counter) {
		b = appendHeader(b, name, help, "counter")
		if c.used.Load() {
			b = append(b, name...)
			b = append(b, label...)
			b = append(b, ' ')
			b = appendFloat(b, c.value())
			b = append(b, '\n')
		}
	}
	if m.prefixCaching {
		counterLine("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", &m.prefix.queries)
		counterLine("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", &m.prefix.hits)
	}
	if m.prefix != nil && m.prefix.resets.used.Load() {
		counterLine("modelsim_prefix_cache_resets_total", "Times the prefix cache was reset (POST /reset_prefix_cache or /flush_cache).", &m.prefix.resets)
	}
	if m.prefix != nil && m.prefix.refused.used.Load() {
		counterLine("modelsim_prefix_cache_resets_refused_total", "Reset requests answered 404 (--refuse-cache-reset).", &m.prefix.refused)
	}
	counterLine("vllm:prompt_tokens_total", "Number of prefill tokens processed.", &m.promptTotal)
	counterLine("vllm:generation_tokens_total", "Number of generation tokens processed.", &m.genTotal)

	b = appendHeader(b, "vllm:request_success_total", "Count of successfully processed requests.", "counter")
	m.successMu.Lock()
	reasons := make([]string, 0, len(m.success))
	for r := range m.success {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		b = append(b, `vllm:request_success_total{model_name="`...)
		b = append(b, escapeLabel(m.modelName)...)
		b = append(b, `",finished_reason="`...)
		b = append(b, escapeLabel(r)...)
		b = append(b, `"} `...)
		b = appendFloat(b, m.success[r].value())
		b = append(b, '\n')
	}
	m.successMu.Unlock()

	hist := func(name, help string, h *histogram) {
		b = appendHeader(b, name, help, "histogram")
		if !h.used.Load() {
			return
		}
		var cum uint64
		for i := range h.counts {
			cum += h.counts[i].Load()
			b = append(b, name...)
			b = append(b, `_bucket{model_name="`...)
			b = append(b, escapeLabel(m.modelName)...)
			b = append(b, `",le="`...)
			if i < len(h.bounds) {
				b = appendFloat(b, h.bounds[i])
			} else {
				b = append(b, "+Inf"...)
			}
			b = append(b, `"} `...)
			b = strconv.AppendUint(b, cum, 10)
			b = append(b, '\n')
		}
		b = append(b, name...)
		b = append(b, "_sum"...)
		b = append(b, label...)
		b = append(b, ' ')
		b = appendFloat(b, math.Float64frombits(h.sumBits.Load()))
		b = append(b, '\n')
		b = append(b, name...)
		b = append(b, "_count"...)
		b = append(b, label...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, cum, 10)
		b = append(b, '\n')
	}
	hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m.ttft)
	hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m.itl)
	hist("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds (deprecated name of vllm:inter_token_latency_seconds).", m.tpot)
	hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", m.reqTpot)
	hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m.e2e)
	hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m.queue)
	hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", m.inference)
	hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", m.prefill)
	hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", m.decode)
	hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", m.promptTokens)
	hist("vllm:request_generation_tokens", "Number of generation tokens processed.", m.genTokens)
	hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", m.maxTokens)
	return b
}

func appendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

// appendFloat formats like the Go Prometheus client: shortest representation, so integers print
// without a fractional part.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return r.Replace(s)
}

// FakeMetrics is llm-d-inference-sim's --fake-metrics document. When set, the simulator
// reports these values instead of what it measures, so tests know every value exactly.
type FakeMetrics struct {
	RunningRequests         fakeValue        `json:"running-requests"`
	WaitingRequests         fakeValue        `json:"waiting-requests"`
	KVCacheUsage            fakeValue        `json:"kv-cache-usage"`
	Loras                   []LoraMetrics    `json:"loras"`
	TTFTBuckets             []int            `json:"ttft-buckets-values"`
	TPOTBuckets             []int            `json:"tpot-buckets-values"`
	E2EBuckets              []int            `json:"e2erl-buckets-values"`
	QueueTimeBuckets        []int            `json:"queue-time-buckets-values"`
	InferenceTimeBuckets    []int            `json:"inf-time-buckets-values"`
	PrefillTimeBuckets      []int            `json:"prefill-time-buckets-values"`
	DecodeTimeBuckets       []int            `json:"decode-time-buckets-values"`
	RequestPromptTokens     []int            `json:"request-prompt-tokens"`
	RequestGenerationTokens []int            `json:"request-generation-tokens"`
	RequestParamsMaxTokens  []int            `json:"request-params-max-tokens"`
	RequestMaxGenTokens     []int            `json:"request-max-generation-tokens"`
	RequestSuccessTotal     map[string]int64 `json:"request-success-total"`
	TotalPromptTokens       *int64           `json:"total-prompt-tokens"`
	TotalGenerationTokens   *int64           `json:"total-generation-tokens"`
	PrefixCacheHits         *int64           `json:"prefix-cache-hits"`
	PrefixCacheQueries      *int64           `json:"prefix-cache-queries"`
}

// LoraMetrics is one vllm:lora_requests_info series.
type LoraMetrics struct {
	Running   string  `json:"running"`
	Waiting   string  `json:"waiting"`
	Timestamp float64 `json:"timestamp"`
}

// fakeValue is a number or "func:start:end:period" with func one of oscillate, ramp, rampreset,
// squarewave (llm-d-inference-sim's generator syntax).
type fakeValue struct {
	fixed      float64
	fn         string
	start, end float64
	period     time.Duration
	isFn       bool
	provided   bool
}

func (f *fakeValue) UnmarshalJSON(data []byte) error {
	f.provided = true
	var n float64
	if err := json.Unmarshal(data, &n); err == nil {
		f.fixed = n
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New("a fake gauge must be a number or \"func:start:end:period\"")
	}
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return fmt.Errorf("fake gauge %q: expected func:start:end:period", s)
	}
	switch parts[0] {
	case "oscillate", "ramp", "rampreset", "squarewave":
	default:
		return fmt.Errorf("fake gauge %q: function must be oscillate, ramp, rampreset or squarewave", s)
	}
	var err error
	if f.start, err = strconv.ParseFloat(parts[1], 64); err != nil {
		return fmt.Errorf("fake gauge %q: bad start", s)
	}
	if f.end, err = strconv.ParseFloat(parts[2], 64); err != nil {
		return fmt.Errorf("fake gauge %q: bad end", s)
	}
	if f.period, err = time.ParseDuration(parts[3]); err != nil || f.period <= 0 {
		return fmt.Errorf("fake gauge %q: period must be a positive duration", s)
	}
	f.fn, f.isFn = parts[0], true
	return nil
}

func (f fakeValue) at(elapsed time.Duration) float64 {
	if !f.isFn {
		return f.fixed
	}
	p := float64(elapsed%f.period) / float64(f.period)
	switch f.fn {
	case "ramp":
		if elapsed >= f.period {
			return f.end
		}
		return f.start + (f.end-f.start)*p
	case "rampreset":
		return f.start + (f.end-f.start)*p
	case "squarewave":
		if p < 0.5 {
			return f.start
		}
		return f.end
	default: // oscillate: smooth wave from start to end and back over a period
		return f.start + (f.end-f.start)*(1-math.Cos(2*math.Pi*p))/2
	}
}

func (f *FakeMetrics) validate() error {
	if !f.RunningRequests.isFn && f.RunningRequests.fixed < 0 || !f.WaitingRequests.isFn && f.WaitingRequests.fixed < 0 {
		return errors.New("running-requests and waiting-requests cannot be negative")
	}
	kv := f.KVCacheUsage
	if !kv.isFn && (kv.fixed < 0 || kv.fixed > 1) || kv.isFn && (kv.start < 0 || kv.start > 1 || kv.end < 0 || kv.end > 1) {
		return errors.New("kv-cache-usage must be between 0 and 1")
	}
	lists := map[string]struct {
		v   []int
		max int
	}{
		"ttft-buckets-values":         {f.TTFTBuckets, len(ttftBuckets) + 1},
		"tpot-buckets-values":         {f.TPOTBuckets, len(tpotBuckets) + 1},
		"e2erl-buckets-values":        {f.E2EBuckets, len(requestLatencyBuckets) + 1},
		"queue-time-buckets-values":   {f.QueueTimeBuckets, len(requestLatencyBuckets) + 1},
		"inf-time-buckets-values":     {f.InferenceTimeBuckets, len(requestLatencyBuckets) + 1},
		"prefill-time-buckets-values": {f.PrefillTimeBuckets, len(requestLatencyBuckets) + 1},
		"decode-time-buckets-values":  {f.DecodeTimeBuckets, len(requestLatencyBuckets) + 1},
		"request-prompt-tokens":       {f.RequestPromptTokens, math.MaxInt},
		"request-generation-tokens":   {f.RequestGenerationTokens, math.MaxInt},
		"request-params-max-tokens":   {f.RequestParamsMaxTokens, math.MaxInt},
	}
	for name, l := range lists {
		if len(l.v) > l.max {
			return fmt.Errorf("%s has %d values but the histogram has only %d buckets", name, len(l.v), l.max)
		}
		for _, v := range l.v {
			if v < 0 {
				return fmt.Errorf("%s cannot contain negative values", name)
			}
		}
	}
	for reason, n := range f.RequestSuccessTotal {
		if n < 0 {
			return fmt.Errorf("request-success-total.%s cannot be negative", reason)
		}
	}
	return nil
}
