package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// --lora-modules serves each adapter as a model: listed with the base model as parent, answered by
// name, and shown in vllm:lora_requests_info while one of its requests is in progress.
func TestLoraModulesAreServedListedAndShownWhileRunning(t *testing.T) {
	ts, _ := startSim(t, "--lora-modules", "sql-lora=/adapters/sql",
		`{"name": "chat-lora", "path": "/adapters/chat"}`, "--time-to-first-token", "400ms")
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID     string  `json:"id"`
			Parent *string `json:"parent"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(list.Data) != 3 || list.Data[1].ID != "sql-lora" || list.Data[2].ID != "chat-lora" ||
		list.Data[1].Parent == nil || *list.Data[1].Parent != list.Data[0].ID {
		t.Fatalf("models %+v, want the base model then both adapters with it as parent", list.Data)
	}
	done := make(chan int)
	go func() {
		r := post(t, ts.URL+"/v1/completions", `{"model":"sql-lora","prompt":"a b","max_tokens":1}`)
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		done <- r.StatusCode
	}()
	deadline := time.Now().Add(5 * time.Second)
	seen := false
	for time.Now().Before(deadline) && !seen {
		seen = strings.Contains(metricsPage(t, ts.URL), `running_lora_adapters="sql-lora"`)
		time.Sleep(20 * time.Millisecond)
	}
	if !seen {
		t.Errorf("sql-lora never shown running in vllm:lora_requests_info")
	}
	if code := <-done; code != 200 {
		t.Fatalf("adapter request answered %d, want 200", code)
	}
	if page := metricsPage(t, ts.URL); !strings.Contains(page, `running_lora_adapters=""`) {
		t.Errorf("no adapter should be running after the request:\n%s", page)
	}
	r := post(t, ts.URL+"/v1/completions", `{"model":"other-lora","prompt":"a","max_tokens":1}`)
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("an adapter not served answered %d, want 404", r.StatusCode)
	}
}

func TestLoraModulesNeedAName(t *testing.T) {
	for _, bad := range []string{"no-path", "=/x", `{"path": "/x"}`} {
		if _, _, err := parseArgs([]string{"--model", "m", "--lora-modules", bad}); err == nil {
			t.Errorf("--lora-modules %q accepted", bad)
		}
	}
}

func metricsPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
