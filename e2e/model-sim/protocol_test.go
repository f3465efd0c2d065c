package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCompletionsStreamIsVllmFramedWithExactTokenCount(t *testing.T) {
	ts, _ := startSim(t)
	resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"one two three four","max_tokens":64,
		"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(t, resp.Body)
	if events[len(events)-1].data != "[DONE]" {
		t.Fatalf("last event %q", events[len(events)-1].data)
	}
	var text strings.Builder
	contentChunks := 0
	var usage map[string]any
	for i, e := range events[:len(events)-1] {
		m := decode(t, e.data)
		if m["object"] != "text_completion" || !strings.HasPrefix(m["id"].(string), "cmpl-") || m["model"] != "test-model" {
			t.Fatalf("chunk %d header fields: %v", i, m)
		}
		choices := m["choices"].([]any)
		if len(choices) == 0 {
			usage = m["usage"].(map[string]any)
			continue
		}
		c := choices[0].(map[string]any)
		text.WriteString(c["text"].(string))
		contentChunks++
		if contentChunks < 64 && c["finish_reason"] != nil || contentChunks == 64 && c["finish_reason"] != "length" {
			t.Fatalf("chunk %d finish_reason %v", contentChunks, c["finish_reason"])
		}
	}
	if contentChunks != 64 || countTokens(text.String()) != 64 {
		t.Errorf("want 64 one-token chunks, got %d chunks and %d words", contentChunks, countTokens(text.String()))
	}
	if usage == nil || num(t, usage["prompt_tokens"]) != 4 || num(t, usage["completion_tokens"]) != 64 || num(t, usage["total_tokens"]) != 68 {
		t.Errorf("usage %v", usage)
	}
}

func TestStreamWithoutUsageOptionHasNoUsageChunk(t *testing.T) {
	ts, _ := startSim(t)
	resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"x","max_tokens":5,"ignore_eos":true,"stream":true}`)
	events := readEvents(t, resp.Body)
	if len(events) != 6 {
		t.Fatalf("want 5 token events + [DONE], got %d", len(events))
	}
	for _, e := range events[:5] {
		if strings.Contains(e.data, `"usage"`) {
			t.Errorf("unexpected usage in %s", e.data)
		}
	}
}

func TestPromptFormsAreCountedAsTokens(t *testing.T) {
	ts, _ := startSim(t)
	for prompt, want := range map[string]int{
		`"a b  c\nd"`:               4,
		`[1, 2, 3, 4, 5, 6, 7]`:     7,
		`["x y", "ignored second"]`: 2,
		`[[9, 9, 9]]`:               3,
	} {
		resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","max_tokens":2,"prompt":`+prompt+`}`)
		m := decode(t, readAll(t, resp))
		usage := m["usage"].(map[string]any)
		if got := num(t, usage["prompt_tokens"]); got != want {
			t.Errorf("prompt %s: prompt_tokens %d, want %d", prompt, got, want)
		}
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChatStreamSendsRoleThenOneTokenPerChunk(t *testing.T) {
	ts, _ := startSim(t)
	resp := post(t, ts.URL+"/v1/chat/completions", `{"model":"test-model","messages":[{"role":"system","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"hello world"}]}],"max_completion_tokens":10,"ignore_eos":true,
		"stream":true,"stream_options":{"include_usage":true}}`)
	events := readEvents(t, resp.Body)
	if len(events) != 1+10+1+1 {
		t.Fatalf("want role + 10 content + usage + [DONE], got %d events", len(events))
	}
	first := decode(t, events[0].data)["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	if first["role"] != "assistant" || first["content"] != "" {
		t.Errorf("first delta %v", first)
	}
	for i, e := range events[1:11] {
		m := decode(t, e.data)
		if m["object"] != "chat.completion.chunk" {
			t.Fatalf("object %v", m["object"])
		}
		delta := m["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
		if countTokens(delta["content"].(string)) != 1 || delta["role"] != nil {
			t.Errorf("chunk %d delta %v", i, delta)
		}
	}
	usage := decode(t, events[11].data)["usage"].(map[string]any)
	if num(t, usage["prompt_tokens"]) != 4 || num(t, usage["completion_tokens"]) != 10 {
		t.Errorf("usage %v", usage)
	}
}

func TestNonStreamingAnswers(t *testing.T) {
	ts, _ := startSim(t)
	chat := decode(t, readAll(t, post(t, ts.URL+"/v1/chat/completions",
		`{"model":"test-model","messages":[{"role":"user","content":"hi"}],"max_tokens":7,"ignore_eos":true}`)))
	choice := chat["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if chat["object"] != "chat.completion" || msg["role"] != "assistant" || countTokens(msg["content"].(string)) != 7 ||
		choice["finish_reason"] != "length" {
		t.Errorf("chat answer %v", chat)
	}
	compl := decode(t, readAll(t, post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"hi","max_tokens":3,"ignore_eos":true}`)))
	if compl["object"] != "text_completion" || num(t, compl["usage"].(map[string]any)["completion_tokens"]) != 3 {
		t.Errorf("completion answer %v", compl)
	}
}

func TestWithoutIgnoreEOSOutputStopsAtOrBeforeMaxTokens(t *testing.T) {
	ts, _ := startSim(t)
	stopped := 0
	for i := 0; i < 30; i++ {
		m := decode(t, readAll(t, post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"hi","max_tokens":20}`)))
		n := num(t, m["usage"].(map[string]any)["completion_tokens"])
		reason := m["choices"].([]any)[0].(map[string]any)["finish_reason"]
		if n < 1 || n > 20 || (n == 20) != (reason == "length") {
			t.Fatalf("%d tokens with finish_reason %v", n, reason)
		}
		if reason == "stop" {
			stopped++
		}
	}
	if stopped == 0 {
		t.Error("random mode never stopped early without ignore_eos")
	}
}

func TestEchoModeRepeatsThePrompt(t *testing.T) {
	ts, _ := startSim(t, "--mode", "echo")
	m := decode(t, readAll(t, post(t, ts.URL+"/v1/chat/completions",
		`{"model":"test-model","messages":[{"role":"system","content":"sys"},{"role":"user","content":"say \"these\" words"}]}`)))
	content := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	if content != `say "these" words` {
		t.Errorf("echo content %q", content)
	}
	m = decode(t, readAll(t, post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"a b","max_tokens":5,"ignore_eos":true}`)))
	if text := m["choices"].([]any)[0].(map[string]any)["text"]; text != "a b a b a" {
		t.Errorf("echo with ignore_eos %q", text)
	}
}

func TestTGIGenerateStream(t *testing.T) {
	ts, _ := startSim(t)
	resp := post(t, ts.URL+"/generate_stream", `{"inputs":"one two three","parameters":{"max_new_tokens":6,"ignore_eos_token":true}}`)
	events := readEvents(t, resp.Body)
	if len(events) != 6 {
		t.Fatalf("want 6 token events, got %d", len(events))
	}
	var text strings.Builder
	for i, e := range events {
		m := decode(t, e.data)
		tok := m["token"].(map[string]any)
		text.WriteString(tok["text"].(string))
		if i < 5 && (m["generated_text"] != nil || m["details"] != nil) {
			t.Errorf("event %d must not carry the final text: %v", i, m)
		}
		if i == 5 {
			details := m["details"].(map[string]any)
			if m["generated_text"] != text.String() || details["finish_reason"] != "length" ||
				num(t, details["generated_tokens"]) != 6 || num(t, details["input_length"]) != 3 {
				t.Errorf("final event %v", m)
			}
		}
	}
	raw := readAll(t, post(t, ts.URL+"/generate", `{"inputs":"x","parameters":{"max_new_tokens":4,"details":true,"ignore_eos":true}}`))
	m := decode(t, raw)
	if countTokens(m["generated_text"].(string)) != 4 || num(t, m["details"].(map[string]any)["generated_tokens"]) != 4 {
		t.Errorf("/generate %s", raw)
	}
	auto := post(t, ts.URL+"/", `{"inputs":"x","stream":true,"parameters":{"max_new_tokens":3,"ignore_eos":true}}`)
	if n := len(readEvents(t, auto.Body)); n != 3 {
		t.Errorf("POST / with stream=true: %d events, want 3", n)
	}
	bad := post(t, ts.URL+"/generate", `{"inputs":""}`)
	if bad.StatusCode != 422 || !strings.Contains(readAll(t, bad), `"error"`) {
		t.Errorf("empty inputs: status %d", bad.StatusCode)
	}
}

func TestModelsHealthAndErrors(t *testing.T) {
	ts, _ := startSim(t, "--served-model-name", "alias-1", "alias-2")
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(readAll(t, get(t, ts.URL+"/v1/models"))), &models); err != nil ||
		len(models.Data) != 2 || models.Data[0].ID != "alias-1" {
		t.Errorf("models %+v %v", models, err)
	}
	for _, p := range []string{"/health", "/ready"} {
		if r := get(t, ts.URL+p); r.StatusCode != 200 {
			t.Errorf("%s: %d", p, r.StatusCode)
		}
	}
	cases := []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/v1/completions", `{"model":"other","prompt":"x"}`, 404, "does not exist"},
		{"/v1/completions", `{"model":"alias-2","prompt":"x","max_tokens":2000}`, 400, "maximum context length is 1024"},
		{"/v1/completions", `{"model":"alias-2","prompt":"x","max_tokens":0}`, 400, "max_tokens must be at least 1"},
		{"/v1/completions", `{"model":"alias-2"}`, 400, "prompt is required"},
		{"/v1/chat/completions", `{"model":"alias-2","messages":[]}`, 400, "messages"},
		{"/v1/chat/completions", `not json`, 400, "not valid JSON"},
	}
	for _, c := range cases {
		resp := post(t, ts.URL+c.path, c.body)
		body := readAll(t, resp)
		if resp.StatusCode != c.status || !strings.Contains(body, c.msg) || !strings.Contains(body, `{"error":{"message":`) {
			t.Errorf("%s %s: %d %s", c.path, c.body, resp.StatusCode, body)
		}
	}
	if r := get(t, ts.URL+"/v1/completions"); r.StatusCode != 405 {
		t.Errorf("GET completions: %d", r.StatusCode)
	}
}

func TestReadinessWaitsForStartupDuration(t *testing.T) {
	ts, _ := startSim(t, "--startup-duration", "1h")
	if r := get(t, ts.URL+"/ready"); r.StatusCode != 503 {
		t.Errorf("/ready during startup: %d", r.StatusCode)
	}
	if r := get(t, ts.URL+"/health"); r.StatusCode != 200 {
		t.Errorf("/health during startup: %d", r.StatusCode)
	}
}

func get(t *testing.T, url string) *http.Response {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStrictOpenAIRefusesFieldsOutsideTheAPIWithAPydanticBody(t *testing.T) {
	ts, _ := startSim(t, "--strict-openai")
	for _, c := range []struct {
		path, body string
		want       [][]any
	}{
		{"/v1/completions", `{"model":"test-model","prompt":"hi","max_tokens":4,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
			[][]any{{"body", "ignore_eos"}}},
		{"/v1/chat/completions", `{"model":"test-model","messages":[{"role":"user","content":"hi","x":1}],"max_tokens":4,"top_k":5,"ignore_eos":true,
			"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`,
			[][]any{{"body", "ignore_eos"}, {"body", "top_k"}, {"body", "stream_options", "continuous_usage_stats"}, {"body", "messages", json.Number("0"), "x"}}},
	} {
		resp := post(t, ts.URL+c.path, c.body)
		if resp.StatusCode != 422 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d, content type %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		m := decode(t, readAll(t, resp))
		detail, ok := m["detail"].([]any)
		if !ok || len(detail) != len(c.want) {
			t.Fatalf("%s: detail %v, want %d entries", c.path, m["detail"], len(c.want))
		}
		for i, d := range detail {
			e := d.(map[string]any)
			if e["type"] != "extra_forbidden" || e["msg"] != "Extra inputs are not permitted" {
				t.Errorf("%s: entry %d: %v", c.path, i, e)
			}
			loc := e["loc"].([]any)
			if len(loc) != len(c.want[i]) {
				t.Fatalf("%s: entry %d loc %v, want %v", c.path, i, loc, c.want[i])
			}
			for j := range loc {
				if loc[j] != c.want[i][j] {
					t.Errorf("%s: entry %d loc %v, want %v", c.path, i, loc, c.want[i])
				}
			}
		}
	}
}

func TestStrictOpenAIServesPlainOpenAIRequests(t *testing.T) {
	ts, _ := startSim(t, "--strict-openai")
	for _, c := range []struct{ path, body string }{
		{"/v1/completions", `{"model":"test-model","prompt":[1,2,3],"max_tokens":6,"temperature":0,"top_p":1,"seed":3,
			"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/chat/completions", `{"model":"test-model","messages":[{"role":"user","content":"one two"}],"max_tokens":6,
			"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`},
	} {
		resp := post(t, ts.URL+c.path, c.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", c.path, resp.StatusCode, readAll(t, resp))
		}
		events := readEvents(t, resp.Body)
		last := decode(t, events[len(events)-2].data)
		if _, ok := last["usage"].(map[string]any); !ok {
			t.Errorf("%s: no usage event before [DONE]: %v", c.path, last)
		}
	}
	// Other routes are not OpenAI's request schema and stay as they are.
	resp := post(t, ts.URL+"/generate", `{"inputs":"hi","parameters":{"max_new_tokens":2,"ignore_eos":true}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("/generate: status %d", resp.StatusCode)
	}
	readAll(t, resp)
}

func TestWithoutStrictModeExtensionsAreAccepted(t *testing.T) {
	ts, _ := startSim(t)
	resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"hi","max_tokens":3,"ignore_eos":true,"top_k":4}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	readAll(t, resp)
	if cfg, _, err := parseArgs([]string{"--model", "m", "--strict-openai=false"}); err != nil || cfg.StrictOpenAI {
		t.Fatalf("--strict-openai=false: %v %v", cfg, err)
	}
}
