package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
)

// Strict mode (--strict-openai) answers as servers whose request schema is OpenAI's own and
// forbids anything else, e.g. Hugging Face's transformers serve (pydantic models with
// extra="forbid" behind FastAPI): any other field gets HTTP 422 with FastAPI's validation body
//
//	{"detail":[{"type":"extra_forbidden","loc":["body","ignore_eos"],"msg":"Extra inputs are not permitted","input":true}]}
//
// The lists are the request fields of OpenAI's API reference (legacy completions and chat
// completions).

var openAICompletionFields = fieldSet("model", "prompt", "best_of", "echo", "frequency_penalty",
	"logit_bias", "logprobs", "max_tokens", "n", "presence_penalty", "seed", "stop", "stream",
	"stream_options", "suffix", "temperature", "top_p", "user")

var openAIChatFields = fieldSet("messages", "model", "audio", "frequency_penalty", "function_call",
	"functions", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata",
	"modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
	"reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop",
	"store", "stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs",
	"top_p", "user", "verbosity", "web_search_options")

var openAIStreamOptionFields = fieldSet("include_usage", "include_obfuscation")

var openAIMessageFields = fieldSet("role", "content", "name", "tool_calls", "tool_call_id",
	"refusal", "audio", "function_call")

func fieldSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// extraField is one entry of FastAPI's 422 "detail" list.
type extraField struct {
	Type  string          `json:"type"`
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input"`
}

// strictViolations lists the fields of a completions or chat body outside OpenAI's API, in the
// order FastAPI reports them (by location). A body that is not a JSON object yields nothing: the
// ordinary parser reports that.
func strictViolations(body []byte, chat bool) []extraField {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil
	}
	allowed := openAICompletionFields
	if chat {
		allowed = openAIChatFields
	}
	var out []extraField
	out = appendExtra(out, top, allowed, []any{"body"})
	if raw, ok := top["stream_options"]; ok {
		var opts map[string]json.RawMessage
		if json.Unmarshal(raw, &opts) == nil {
			out = appendExtra(out, opts, openAIStreamOptionFields, []any{"body", "stream_options"})
		}
	}
	if raw, ok := top["messages"]; ok && chat {
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) == nil {
			for i, m := range msgs {
				out = appendExtra(out, m, openAIMessageFields, []any{"body", "messages", i})
			}
		}
	}
	return out
}

func appendExtra(out []extraField, fields map[string]json.RawMessage, allowed map[string]bool, at []any) []extraField {
	names := make([]string, 0, len(fields))
	for name := range fields {
		if !allowed[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		loc := append(append([]any{}, at...), name)
		out = append(out, extraField{Type: "extra_forbidden", Loc: loc, Msg: "Extra inputs are not permitted",
			Input: bytes.TrimSpace(fields[name])})
	}
	return out
}

// writeValidationError answers 422 with FastAPI's request-validation body.
func writeValidationError(w http.ResponseWriter, detail []extraField) {
	b, err := json.Marshal(map[string]any{"detail": detail})
	if err != nil {
		b = []byte(`{"detail":[]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	w.Write(b)
}
