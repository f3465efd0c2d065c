package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --request-log writes one line per accepted generation request: when it arrived and its prompt
// and max tokens, in arrival order; refused requests are not logged.
func TestRequestLogRecordsEachAcceptedRequest(t *testing.T) {
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	ts, _ := startSim(t, "--request-log", log)
	before := time.Now()
	resp := post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":"a b c","max_tokens":2}`)
	resp.Body.Close()
	resp = post(t, ts.URL+"/v1/completions", `{"model":"test-model","prompt":[1,2,3,4,5],"max_tokens":7}`)
	resp.Body.Close()
	resp = post(t, ts.URL+"/v1/completions", `{"model":"no-such-model","prompt":"x","max_tokens":1}`)
	resp.Body.Close()
	after := time.Now()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %q", len(lines), data)
	}
	var entries []struct {
		Arrival int64  `json:"arrival_unix_ns"`
		Prompt  int    `json:"prompt_tokens"`
		Max     int    `json:"max_tokens"`
		Model   string `json:"model"`
	}
	for _, l := range lines {
		var e struct {
			Arrival int64  `json:"arrival_unix_ns"`
			Prompt  int    `json:"prompt_tokens"`
			Max     int    `json:"max_tokens"`
			Model   string `json:"model"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		entries = append(entries, e)
	}
	if entries[0].Prompt != 3 || entries[0].Max != 2 || entries[1].Prompt != 5 || entries[1].Max != 7 {
		t.Errorf("entries %+v, want prompt 3 max 2, then prompt 5 max 7", entries)
	}
	for _, e := range entries {
		if e.Arrival < before.UnixNano() || e.Arrival > after.UnixNano() {
			t.Errorf("arrival %d outside [%d, %d]", e.Arrival, before.UnixNano(), after.UnixNano())
		}
	}
	if entries[0].Model != "test-model" || entries[1].Model != "test-model" {
		t.Errorf("models %q and %q, want the model each asked for", entries[0].Model, entries[1].Model)
	}
	if entries[1].Arrival < entries[0].Arrival {
		t.Errorf("arrivals out of order: %+v", entries)
	}
}
