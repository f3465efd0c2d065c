package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

type server struct {
	cfg       *Config
	metrics   *Metrics
	slots     chan struct{} // one per request being processed (max-num-seqs)
	requests  atomic.Uint64
	failures  atomic.Uint64
	startedAt time.Time
	served    map[string]bool
	loras     map[string]*atomic.Int64 // requests in progress per LoRA adapter
	prefix    *prefixCache
	log       *requestLog // nil without --request-log
}

// requestLog appends one JSON line per accepted request, written whole under a lock.
type requestLog struct {
	mu   sync.Mutex
	file *os.File
}

func (l *requestLog) record(arrival time.Time, promptTokens, maxTokens int, model string) {
	name, _ := json.Marshal(model)
	line := fmt.Sprintf("{\"arrival_unix_ns\":%d,\"prompt_tokens\":%d,\"max_tokens\":%d,\"model\":%s}\n",
		arrival.UnixNano(), promptTokens, maxTokens, name)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.file.WriteString(line)
}

func newServer(cfg *Config) *server {
	s := &server{
		cfg:       cfg,
		metrics:   newMetrics(cfg),
		slots:     make(chan struct{}, cfg.MaxNumSeqs),
		startedAt: time.Now(),
		served:    map[string]bool{},
		prefix:    newPrefixCache(cfg.BlockSize),
	}
	if cfg.RequestLog != "" {
		f, err := os.OpenFile(cfg.RequestLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "model-sim: --request-log: %v\n", err)
			os.Exit(2)
		}
		s.log = &requestLog{file: f}
	}
	s.metrics.prefix = s.prefix
	s.metrics.prefixCaching = cfg.PrefixCaching
	s.served[cfg.Model] = true
	for _, n := range cfg.ServedModelNames {
		s.served[n] = true
	}
	s.loras = map[string]*atomic.Int64{}
	for _, n := range cfg.LoraModules {
		s.served[n] = true
		s.loras[n] = new(atomic.Int64)
	}
	s.metrics.runningLoras = s.runningLoras
	return s
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxBody = 16 << 20

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/completions":
		s.post(w, r, kindCompletions)
	case "/v1/chat/completions":
		s.post(w, r, kindChat)
	case "/generate":
		s.post(w, r, kindTGI)
	case "/generate_stream":
		s.post(w, r, kindTGIStream)
	case "/":
		if r.Method == http.MethodPost {
			s.post(w, r, kindTGIAuto)
			return
		}
		writeOpenAIError(w, &apiError{status: 404, message: "Not Found", typ: "NotFoundError"})
	case "/reset_prefix_cache", "/flush_cache":
		// vLLM's and SGLang's endpoints: empty the cache (counted even without one, so that a
		// test can see every replica was asked)
		if s.cfg.RefuseCacheReset {
			s.prefix.refused.add(1)
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeOpenAIError(w, &apiError{status: 405, message: "Method Not Allowed", typ: "BadRequestError"})
			return
		}
		s.prefix.reset()
		w.WriteHeader(http.StatusOK)
	case "/v1/models":
		s.models(w)
	case "/health":
		w.WriteHeader(http.StatusOK)
	case "/ready", "/health/ready":
		if time.Since(s.startedAt) < s.cfg.StartupDuration {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	case "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(s.metrics.render(time.Now()))
	case "/version":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"version":"model-sim"}`))
	default:
		writeOpenAIError(w, &apiError{status: 404, message: "Not Found", typ: "NotFoundError"})
	}
}

type requestKind int

const (
	kindCompletions requestKind = iota
	kindChat
	kindTGI
	kindTGIStream
	kindTGIAuto
)

func (s *server) post(w http.ResponseWriter, r *http.Request, kind requestKind) {
	arrival := time.Now()
	tgi := kind >= kindTGI
	fail := writeOpenAIError
	if tgi {
		fail = writeTGIError
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		fail(w, &apiError{status: 405, message: "Method Not Allowed", typ: "BadRequestError"})
		return
	}
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodyPool.Put(buf)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		fail(w, badRequest("cannot read request body: %v", err))
		return
	}
	var req *generationRequest
	var details bool
	var perr *apiError
	switch kind {
	case kindCompletions, kindChat:
		if s.cfg.StrictOpenAI {
			if extra := strictViolations(buf.Bytes(), kind == kindChat); len(extra) > 0 {
				writeValidationError(w, extra)
				return
			}
		}
		req, perr = parseCompletions(buf.Bytes(), kind == kindChat)
	default:
		req, details, perr = parseTGI(buf.Bytes())
	}
	if perr != nil {
		fail(w, perr)
		return
	}
	switch kind {
	case kindTGIStream:
		req.stream = true
	case kindTGI:
		req.stream = false
	}
	if req.model == "" {
		req.model = s.cfg.ServedModelNames[0]
	} else if !s.served[req.model] {
		fail(w, &apiError{status: 404, typ: "NotFoundError", param: "model",
			message: "The model `" + req.model + "` does not exist."})
		return
	}
	if s.log != nil {
		s.log.record(arrival, req.prompt.tokens, req.maxTokens, req.model)
	}
	if c := s.loras[req.model]; c != nil {
		c.Add(1)
		defer c.Add(-1)
	}
	n := s.requests.Add(1)
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), n))
	if s.cfg.FailureRate > 0 && rng.Float64()*100 < s.cfg.FailureRate {
		s.failures.Add(1)
		fail(w, s.injectedFailure(rng))
		return
	}
	p, perr := s.planOutput(req, rng)
	if perr != nil {
		fail(w, perr)
		return
	}
	offsets := s.schedule(len(p.tokens), rng)

	if int(s.metrics.waiting.Load()) >= s.cfg.MaxWaitingQueueLen {
		fail(w, &apiError{status: 429, typ: "RateLimitError", message: "The waiting queue is full (--max-waiting-queue-length)."})
		return
	}
	s.metrics.requestQueued()
	select {
	case s.slots <- struct{}{}:
	case <-r.Context().Done():
		s.metrics.requestAbandonedInQueue()
		return
	}
	start := time.Now()
	if s.cfg.PrefixCaching {
		s.prefixHit(req.prompt, offsets)
	}
	s.metrics.requestDequeued(start.Sub(arrival))
	s.metrics.kvAdd(req.prompt.tokens)
	ex := exchange{s: s, w: w, req: req, plan: p, offsets: offsets, arrival: arrival, start: start, id: n}
	switch {
	case kind == kindCompletions || kind == kindChat:
		if req.stream {
			ex.streamOpenAI(kind == kindChat)
		} else {
			ex.respondOpenAI(kind == kindChat)
		}
	case req.stream:
		ex.streamTGI()
	default:
		ex.respondTGI(details)
	}
	<-s.slots
	end := time.Now()
	s.metrics.requestFinished(finishedRequest{
		reason: ex.finishReason, promptTokens: req.prompt.tokens, outputTokens: ex.sent,
		maxTokens: req.maxTokens, e2e: end.Sub(arrival), inference: end.Sub(start),
		prefill: ex.firstAt.Sub(start), dec: end.Sub(ex.firstAt), kvTokens: req.prompt.tokens + ex.sent,
	})
}

// exchange is one request being answered.
type exchange struct {
	s            *server
	w            http.ResponseWriter
	req          *generationRequest
	plan         plan
	offsets      []time.Duration
	arrival      time.Time
	start        time.Time
	firstAt      time.Time
	id           uint64
	sent         int
	finishReason string
	buf          []byte
	sleeper      *sleeper
}

// waitFor blocks until token i is due. Returns false when nothing had to wait.
func (e *exchange) waitFor(i int) {
	d := time.Until(e.start.Add(e.offsets[i]))
	if d <= 0 {
		return
	}
	if e.sleeper == nil {
		e.sleeper = newSleeper()
	}
	e.sleeper.sleep(d)
}

func (e *exchange) tokenEmitted(i int, now time.Time, prev time.Time) {
	if i == 0 {
		e.firstAt = now
		e.s.metrics.firstToken(now.Sub(e.arrival))
	} else {
		e.s.metrics.interToken(now.Sub(prev))
	}
	e.s.metrics.kvAdd(1)
	e.sent++
}

func (e *exchange) finish() {
	if e.sleeper != nil {
		e.sleeper.close()
	}
	if e.buf != nil {
		b := e.buf[:0]
		streamBuffers.Put(&b)
		e.buf = nil
	}
	if e.firstAt.IsZero() {
		e.firstAt = time.Now()
	}
}

// streamBuffers holds event buffers between responses: a zero-latency response builds its whole
// stream in one buffer, and a fresh one per response (grown from 4 KiB) was a sixth of the
// simulator's CPU in allocation and garbage collection at thousands of streams per second.
var streamBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// takeBuffer gives the exchange a pooled event buffer of at least size bytes.
func (e *exchange) takeBuffer(size int) {
	b := *(streamBuffers.Get().(*[]byte))
	if cap(b) < size {
		b = make([]byte, 0, size)
	}
	e.buf = b[:0]
}

// writeLast hands the stream's last events to the server without flushing them itself: the
// server flushes once more when the handler returns (the chunked body's terminator), so a
// zero-latency response costs one system call fewer.
func (e *exchange) writeLast() bool {
	if len(e.buf) == 0 {
		return true
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err == nil
}

// flush pushes buffered events to the client. Events that are already due when the previous one
// is written are sent together: a zero-latency run then costs one write per response.
func (e *exchange) flush() bool {
	if len(e.buf) > 0 {
		if _, err := e.w.Write(e.buf); err != nil {
			return false
		}
		e.buf = e.buf[:0]
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

func (e *exchange) streamOpenAI(chat bool) {
	defer e.finish()
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	e.w.WriteHeader(http.StatusOK)
	created := strconv.FormatInt(e.arrival.Unix(), 10)
	prefix := e.chunkPrefix(chat, created)
	e.takeBuffer((len(prefix) + 160) * (len(e.plan.tokens) + 3))
	var prev time.Time
	last := len(e.plan.tokens) - 1
	for i, tok := range e.plan.tokens {
		now, ok := e.reachToken(i)
		if !ok {
			return
		}
		e.tokenEmitted(i, now, prev)
		prev = now
		if chat && i == 0 {
			e.buf = append(e.buf, "data: "...)
			e.buf = append(e.buf, prefix...)
			e.buf = append(e.buf, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
			e.buf = e.appendContinuousUsage(e.buf, 0)
			e.buf = append(e.buf, "}\n\n"...)
		}
		e.buf = append(e.buf, "data: "...)
		e.buf = append(e.buf, prefix...)
		if chat {
			e.buf = append(e.buf, `{"index":0,"delta":{"content":`...)
			e.buf = appendJSONString(e.buf, tok)
			e.buf = append(e.buf, `},"logprobs":null,"finish_reason":`...)
		} else {
			e.buf = append(e.buf, `{"index":0,"text":`...)
			e.buf = appendJSONString(e.buf, tok)
			e.buf = append(e.buf, `,"logprobs":null,"finish_reason":`...)
		}
		if i == last {
			e.buf = appendJSONString(e.buf, e.plan.finishReason)
		} else {
			e.buf = append(e.buf, "null"...)
		}
		e.buf = append(e.buf, `,"stop_reason":null}]`...)
		e.buf = e.appendContinuousUsage(e.buf, i+1)
		e.buf = append(e.buf, "}\n\n"...)
	}
	e.finishReason = e.plan.finishReason
	if e.req.includeUsage {
		e.buf = append(e.buf, "data: "...)
		e.buf = append(e.buf, prefix...)
		e.buf = append(e.buf, `],"usage":`...)
		e.buf = e.appendUsage(e.buf, e.sent)
		e.buf = append(e.buf, "}\n\n"...)
	}
	e.buf = append(e.buf, "data: [DONE]\n\n"...)
	if !e.writeLast() {
		e.finishReason = "abort"
	}
}

// chunkPrefix is everything of a chunk up to and including `"choices":[`.
func (e *exchange) chunkPrefix(chat bool, created string) []byte {
	var b []byte
	if chat {
		b = append(b, `{"id":"chatcmpl-`...)
	} else {
		b = append(b, `{"id":"cmpl-`...)
	}
	b = strconv.AppendUint(b, e.id, 16)
	if chat {
		b = append(b, `","object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `","object":"text_completion","created":`...)
	}
	b = append(b, created...)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, e.req.model)
	return append(b, `,"choices":[`...)
}

func (e *exchange) appendContinuousUsage(b []byte, completion int) []byte {
	if !e.req.continuousUsge {
		return b
	}
	b = append(b, `,"usage":`...)
	return e.appendUsage(b, completion)
}

func (e *exchange) appendUsage(b []byte, completion int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(e.req.prompt.tokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(e.req.prompt.tokens+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	return append(b, `,"prompt_tokens_details":null}`...)
}

// waitAll sleeps through the whole schedule for a non-streaming answer and records the per-token
// metrics as the schedule says.
func (e *exchange) waitAll() {
	var prev time.Time
	for i := range e.plan.tokens {
		now := time.Now()
		if now.Before(e.start.Add(e.offsets[i])) {
			e.waitFor(i)
			now = time.Now()
		}
		e.tokenEmitted(i, now, prev)
		prev = now
	}
	e.finishReason = e.plan.finishReason
}

func (e *exchange) text() []byte {
	n := 0
	for _, t := range e.plan.tokens {
		n += len(t)
	}
	b := make([]byte, 0, n)
	for _, t := range e.plan.tokens {
		b = append(b, t...)
	}
	return b
}

func (e *exchange) respondOpenAI(chat bool) {
	defer e.finish()
	e.waitAll()
	created := strconv.FormatInt(e.arrival.Unix(), 10)
	b := make([]byte, 0, 512)
	if chat {
		b = append(b, `{"id":"chatcmpl-`...)
		b = strconv.AppendUint(b, e.id, 16)
		b = append(b, `","object":"chat.completion","created":`...)
	} else {
		b = append(b, `{"id":"cmpl-`...)
		b = strconv.AppendUint(b, e.id, 16)
		b = append(b, `","object":"text_completion","created":`...)
	}
	b = append(b, created...)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, e.req.model)
	if chat {
		b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
		b = appendJSONString(b, string(e.text()))
		b = append(b, `},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":`...)
		b = appendJSONString(b, string(e.text()))
		b = append(b, `,"logprobs":null,"finish_reason":`...)
	}
	b = appendJSONString(b, e.plan.finishReason)
	b = append(b, `,"stop_reason":null}],"usage":`...)
	b = e.appendUsage(b, e.sent)
	b = append(b, "}"...)
	e.w.Header().Set("Content-Type", "application/json")
	e.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if _, err := e.w.Write(b); err != nil {
		e.finishReason = "abort"
	}
}

func tgiFinishReason(reason string) string {
	if reason == "length" {
		return "length"
	}
	return "eos_token"
}

// reachToken waits until token i is due, flushing what is buffered first so the client sees the
// earlier tokens on time; it returns when the token is emitted, or false (finish reason "abort")
// when the client has gone.
func (e *exchange) reachToken(i int) (time.Time, bool) {
	now := time.Now()
	if now.Before(e.start.Add(e.offsets[i])) {
		if !e.flush() {
			e.finishReason = "abort"
			return now, false
		}
		e.waitFor(i)
		now = time.Now()
	}
	return now, true
}

func (e *exchange) streamTGI() {
	defer e.finish()
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	e.w.WriteHeader(http.StatusOK)
	e.takeBuffer(200 * (len(e.plan.tokens) + 2))
	var prev time.Time
	last := len(e.plan.tokens) - 1
	for i, tok := range e.plan.tokens {
		now, ok := e.reachToken(i)
		if !ok {
			return
		}
		e.tokenEmitted(i, now, prev)
		prev = now
		e.buf = append(e.buf, `data:{"index":`...)
		e.buf = strconv.AppendInt(e.buf, int64(i+1), 10)
		e.buf = append(e.buf, `,"token":{"id":`...)
		e.buf = strconv.AppendInt(e.buf, int64(1000+i), 10)
		e.buf = append(e.buf, `,"text":`...)
		e.buf = appendJSONString(e.buf, tok)
		e.buf = append(e.buf, `,"logprob":-0.1,"special":false},"generated_text":`...)
		if i == last {
			e.buf = appendJSONString(e.buf, string(e.text()))
			e.buf = append(e.buf, `,"details":{"finish_reason":`...)
			e.buf = appendJSONString(e.buf, tgiFinishReason(e.plan.finishReason))
			e.buf = append(e.buf, `,"generated_tokens":`...)
			e.buf = strconv.AppendInt(e.buf, int64(len(e.plan.tokens)), 10)
			e.buf = append(e.buf, `,"seed":null,"input_length":`...)
			e.buf = strconv.AppendInt(e.buf, int64(e.req.prompt.tokens), 10)
			e.buf = append(e.buf, `}`...)
		} else {
			e.buf = append(e.buf, `null,"details":null`...)
		}
		e.buf = append(e.buf, ",\"top_tokens\":null}\n\n"...)
	}
	e.finishReason = e.plan.finishReason
	if !e.writeLast() {
		e.finishReason = "abort"
	}
}

func (e *exchange) respondTGI(details bool) {
	defer e.finish()
	e.waitAll()
	b := make([]byte, 0, 512)
	b = append(b, `{"generated_text":`...)
	b = appendJSONString(b, string(e.text()))
	if details {
		b = append(b, `,"details":{"finish_reason":`...)
		b = appendJSONString(b, tgiFinishReason(e.plan.finishReason))
		b = append(b, `,"generated_tokens":`...)
		b = strconv.AppendInt(b, int64(len(e.plan.tokens)), 10)
		b = append(b, `,"seed":null,"prefill":[],"tokens":[]}`...)
	}
	b = append(b, '}')
	e.w.Header().Set("Content-Type", "application/json")
	e.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if _, err := e.w.Write(b); err != nil {
		e.finishReason = "abort"
	}
}

// runningLoras lists the adapters with a request in progress, comma separated and sorted, as
// vLLM's vllm:lora_requests_info labels them.
func (s *server) runningLoras() string {
	var names []string
	for n, c := range s.loras {
		if c.Load() > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func (s *server) models(w http.ResponseWriter) {
	b := []byte(`{"object":"list","data":[`)
	for i, n := range s.cfg.ServedModelNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, n)
		b = append(b, `,"object":"model","created":`...)
		b = strconv.AppendInt(b, s.startedAt.Unix(), 10)
		b = append(b, `,"owned_by":"vllm","root":`...)
		b = appendJSONString(b, s.cfg.Model)
		b = append(b, `,"parent":null,"max_model_len":`...)
		b = strconv.AppendInt(b, int64(s.cfg.MaxModelLen), 10)
		b = append(b, '}')
	}
	// LoRA adapters as vLLM lists them: their own id, the base model as parent.
	for _, n := range s.cfg.LoraModules {
		b = append(b, `,{"id":`...)
		b = appendJSONString(b, n)
		b = append(b, `,"object":"model","created":`...)
		b = strconv.AppendInt(b, s.startedAt.Unix(), 10)
		b = append(b, `,"owned_by":"vllm","root":`...)
		b = appendJSONString(b, n)
		b = append(b, `,"parent":`...)
		b = appendJSONString(b, s.cfg.ServedModelNames[0])
		b = append(b, `,"max_model_len":`...)
		b = strconv.AppendInt(b, int64(s.cfg.MaxModelLen), 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// predefinedFailures are the error answers of llm-d-inference-sim's failure injection.
var predefinedFailures = map[string]apiError{
	"rate_limit":      {status: 429, typ: "rate_limit_exceeded", message: "Rate limit reached for %s in organization org-xxx on requests per min (RPM): Limit 3, Used 3, Requested 1."},
	"invalid_api_key": {status: 401, typ: "invalid_request_error", message: "Incorrect API key provided"},
	"context_length":  {status: 400, typ: "invalid_request_error", param: "messages", message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 4500 tokens."},
	"server_error":    {status: 503, typ: "server_error", message: "The server is overloaded or not ready yet."},
	"invalid_request": {status: 400, typ: "invalid_request_error", param: "model", message: "Invalid request: missing required parameter 'model'."},
	"model_not_found": {status: 404, typ: "invalid_request_error", param: "model", message: "The model '%s-nonexistent' does not exist"},
}

func (s *server) injectedFailure(rng *rand.Rand) *apiError {
	types := s.cfg.FailureTypes
	if len(types) == 0 {
		types = failureTypeNames
	}
	f := predefinedFailures[types[rng.IntN(len(types))]]
	if bytes.Contains([]byte(f.message), []byte("%s")) {
		f.message = string(bytes.Replace([]byte(f.message), []byte("%s"), []byte(s.cfg.Model), 1))
	}
	return &f
}

func writeOpenAIError(w http.ResponseWriter, e *apiError) {
	b := []byte(`{"error":{"message":`)
	b = appendJSONString(b, e.message)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, e.typ)
	b = append(b, `,"param":`...)
	if e.param == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, e.param)
	}
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	w.Write(b)
}

func writeTGIError(w http.ResponseWriter, e *apiError) {
	b := []byte(`{"error":`)
	b = appendJSONString(b, e.message)
	b = append(b, `,"error_type":`...)
	b = appendJSONString(b, e.typ)
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	w.Write(b)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal (RFC 8259 escaping, invalid UTF-8 replaced).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// prefixHit looks the admitted prompt up in the prefix cache and takes the cached tokens' share of
// the time to first token, times (1 - --cached-prefill-factor), off every output token's offset.
func (s *server) prefixHit(p prompt, offsets []time.Duration) {
	hit := s.prefix.admit(promptTokens(p))
	if hit == 0 || len(offsets) == 0 || p.tokens == 0 || s.cfg.CachedPrefillFactor >= 1 {
		return
	}
	cut := time.Duration(float64(offsets[0]) * float64(hit) / float64(p.tokens) * (1 - s.cfg.CachedPrefillFactor))
	for i := range offsets {
		offsets[i] -= cut
	}
}
