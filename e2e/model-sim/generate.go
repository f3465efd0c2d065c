package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The tokenizer is a whitespace word splitter: one word = one token. A list of token ids counts
// one token per id. Every output token is one word, so a client that re-counts words gets the
// same number the server reports in usage.

func countTokens(text string) int {
	n := 0
	inWord := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		space := c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

var wordPool = strings.Fields(`Today is a fine day to simulate a large language model and the simulator answers ` +
	`every request with words from this small pool so that token counting stays trivial while the ` +
	`timing of each streamed event follows the configured time to first token and inter token latency ` +
	`exactly as a benchmark expects from a real server under test`)

// prompt holds what the server needs from a request's input.
type prompt struct {
	tokens   int
	echoText string // text used by echo mode
	echoIDs  []int64
	texts    []string // every message's text of a chat, in order (the prefix cache reads them)
}

// generationRequest is the protocol-independent view of one request.
type generationRequest struct {
	model          string
	prompt         prompt
	maxTokens      int  // 0 = not set
	ignoreEOS      bool // output exactly maxTokens tokens
	stream         bool
	includeUsage   bool
	continuousUsge bool
}

type completionsBody struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type apiError struct {
	status  int
	message string
	typ     string
	param   string
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: 400, message: fmt.Sprintf(format, args...), typ: "BadRequestError"}
}

func parseCompletions(body []byte, chat bool) (*generationRequest, *apiError) {
	var b completionsBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, badRequest("request body is not valid JSON: %v", err)
	}
	r := &generationRequest{model: b.Model, ignoreEOS: b.IgnoreEOS, stream: b.Stream}
	if b.StreamOptions != nil {
		if !b.Stream {
			return nil, badRequest("stream_options can only be set when stream is true")
		}
		r.includeUsage = b.StreamOptions.IncludeUsage
		r.continuousUsge = b.StreamOptions.ContinuousUsageStats
	}
	switch {
	case b.MaxCompletionTokens != nil:
		r.maxTokens = *b.MaxCompletionTokens
	case b.MaxTokens != nil:
		r.maxTokens = *b.MaxTokens
	}
	if (b.MaxCompletionTokens != nil || b.MaxTokens != nil) && r.maxTokens < 1 {
		return nil, &apiError{status: 400, message: fmt.Sprintf("max_tokens must be at least 1, got %d.", r.maxTokens), typ: "BadRequestError", param: "max_tokens"}
	}
	var err *apiError
	if chat {
		r.prompt, err = parseMessages(b.Messages)
	} else {
		r.prompt, err = parsePrompt(b.Prompt)
	}
	return r, err
}

func parsePrompt(raw json.RawMessage) (prompt, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return prompt{}, &apiError{status: 400, message: "prompt is required", typ: "BadRequestError", param: "prompt"}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return prompt{tokens: countTokens(s), echoText: s}, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return prompt{tokens: len(ids), echoIDs: ids}, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil && len(texts) > 0 {
		// Batched prompts: the simulator answers with one choice for the first prompt.
		return prompt{tokens: countTokens(texts[0]), echoText: texts[0]}, nil
	}
	var idLists [][]int64
	if json.Unmarshal(raw, &idLists) == nil && len(idLists) > 0 {
		return prompt{tokens: len(idLists[0]), echoIDs: idLists[0]}, nil
	}
	return prompt{}, &apiError{status: 400, message: "prompt must be a string, a list of strings or a list of token ids", typ: "BadRequestError", param: "prompt"}
}

func parseMessages(msgs []chatMessage) (prompt, *apiError) {
	if len(msgs) == 0 {
		return prompt{}, &apiError{status: 400, message: "messages must be a non-empty list", typ: "BadRequestError", param: "messages"}
	}
	var p prompt
	for _, m := range msgs {
		text, err := messageText(m.Content)
		if err != nil {
			return prompt{}, &apiError{status: 400, message: err.Error(), typ: "BadRequestError", param: "messages"}
		}
		p.tokens += countTokens(text)
		p.texts = append(p.texts, text)
		if m.Role == "user" || p.echoText == "" {
			p.echoText = text
		}
	}
	return p, nil
}

func messageText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
				b.WriteByte(' ')
			}
		}
		return b.String(), nil
	}
	return "", errors.New("message content must be a string or a list of content parts")
}

// tgiBody is Text Generation Inference's native /generate and /generate_stream request.
type tgiBody struct {
	Inputs     string `json:"inputs"`
	Stream     bool   `json:"stream"`
	Parameters struct {
		MaxNewTokens   *int `json:"max_new_tokens"`
		Details        bool `json:"details"`
		IgnoreEOS      bool `json:"ignore_eos"`
		IgnoreEOSToken bool `json:"ignore_eos_token"`
	} `json:"parameters"`
}

func parseTGI(body []byte) (*generationRequest, bool, *apiError) {
	var b tgiBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, false, &apiError{status: 422, message: fmt.Sprintf("Failed to deserialize the JSON body: %v", err), typ: "validation"}
	}
	if b.Inputs == "" {
		return nil, false, &apiError{status: 422, message: "`inputs` must not be empty", typ: "validation"}
	}
	r := &generationRequest{
		prompt:    prompt{tokens: countTokens(b.Inputs), echoText: b.Inputs},
		ignoreEOS: b.Parameters.IgnoreEOS || b.Parameters.IgnoreEOSToken,
		stream:    b.Stream,
	}
	if b.Parameters.MaxNewTokens != nil {
		if *b.Parameters.MaxNewTokens < 1 {
			return nil, false, &apiError{status: 422, message: "`max_new_tokens` must be strictly positive", typ: "validation"}
		}
		r.maxTokens = *b.Parameters.MaxNewTokens
	} else {
		r.maxTokens = 100 // TGI's default max_new_tokens
	}
	return r, b.Parameters.Details, nil
}

// plan decides the output: the token texts and the finish reason.
type plan struct {
	tokens       []string
	finishReason string
}

func (s *server) planOutput(r *generationRequest, rng *rand.Rand) (plan, *apiError) {
	maxLen := s.cfg.MaxModelLen
	if r.maxTokens > 0 && r.prompt.tokens+r.maxTokens > maxLen {
		return plan{}, &apiError{status: 400, typ: "BadRequestError", param: "max_tokens", message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			maxLen, r.prompt.tokens+r.maxTokens, r.prompt.tokens, r.maxTokens)}
	}
	if r.prompt.tokens > maxLen {
		return plan{}, &apiError{status: 400, typ: "BadRequestError", param: "messages", message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.",
			maxLen, r.prompt.tokens)}
	}
	limit := r.maxTokens
	if limit == 0 {
		limit = maxLen - r.prompt.tokens
	}
	var words []string
	if s.cfg.Mode == modeEcho {
		if r.prompt.echoIDs != nil {
			for _, id := range r.prompt.echoIDs {
				words = append(words, strconv.FormatInt(id, 10))
			}
		} else {
			words = strings.Fields(r.prompt.echoText)
		}
		if len(words) == 0 {
			words = []string{"echo"}
		}
	}
	var n int
	switch {
	case r.ignoreEOS && r.maxTokens > 0:
		n = r.maxTokens
	case s.cfg.Mode == modeEcho:
		n = min(len(words), limit)
	default:
		// Without ignore_eos a real model stops at an end-of-sequence token somewhere.
		n = 1 + rng.IntN(max(1, min(limit, 256)))
	}
	n = max(1, min(n, limit))
	out := make([]string, n)
	for i := range out {
		var w string
		if words != nil {
			w = words[i%len(words)]
		} else {
			w = wordPool[rng.IntN(len(wordPool))]
		}
		if i > 0 {
			w = " " + w
		}
		out[i] = w
	}
	reason := "stop"
	if r.maxTokens > 0 && n == r.maxTokens {
		reason = "length"
	}
	return plan{tokens: out, finishReason: reason}, nil
}

// delays draws the schedule offsets (from the start of processing) of each output token:
// first at TTFT, then one inter-token latency apart, each drawn from a normal distribution
// clamped to +/-70% of the mean as llm-d-inference-sim does.
func (s *server) schedule(n int, rng *rand.Rand) []time.Duration {
	offsets := make([]time.Duration, n)
	if s.cfg.TTFT == 0 && s.cfg.ITL == 0 {
		return offsets
	}
	t := draw(s.cfg.TTFT, s.cfg.TTFTStdDev, rng)
	for i := range offsets {
		if i > 0 {
			t += draw(s.cfg.ITL, s.cfg.ITLStdDev, rng)
		}
		offsets[i] = t
	}
	return offsets
}

func draw(mean, sd time.Duration, rng *rand.Rand) time.Duration {
	if sd == 0 {
		return mean
	}
	v := float64(mean) + rng.NormFloat64()*float64(sd)
	lo, hi := 0.3*float64(mean), 1.7*float64(mean)
	return time.Duration(math.Max(lo, math.Min(hi, v)))
}
