package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startSim runs the simulator on a loopback port with the given command-line flags.
func startSim(t *testing.T, args ...string) (*httptest.Server, *server) {
	t.Helper()
	cfg, _, err := parseArgs(append([]string{"--model", "test-model", "--seed", "42"}, args...))
	if err != nil {
		t.Fatalf("parseArgs: %v", err)
	}
	s := newServer(cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, s
}

func newLoopbackServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

type sseEvent struct {
	data string
	at   time.Time
}

// readEvents parses an SSE body strictly: every event must be "data:" lines ended by a blank line.
func readEvents(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	r := bufio.NewReader(body)
	var events []sseEvent
	var cur []string
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			if line != "" || len(cur) > 0 {
				t.Fatalf("stream ended inside an event: %q %q", cur, line)
			}
			return events
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if !strings.HasSuffix(line, "\n") || strings.HasSuffix(line, "\r\n") {
			t.Fatalf("bad line ending: %q", line)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if len(cur) == 0 {
				t.Fatalf("empty event")
			}
			events = append(events, sseEvent{data: strings.Join(cur, "\n"), at: time.Now()})
			cur = nil
			continue
		}
		if !strings.HasPrefix(line, "data:") {
			t.Fatalf("line is not a data line: %q", line)
		}
		cur = append(cur, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("not JSON: %q: %v", s, err)
	}
	return m
}

func num(t *testing.T, v any) int {
	t.Helper()
	n, err := strconv.Atoi(string(v.(json.Number)))
	if err != nil {
		t.Fatalf("not an integer: %v", v)
	}
	return n
}

// scrape returns every sample of /metrics as "name{labels}" -> value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("content type %q", ct)
	}
	body, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, line := range bytes.Split(body, []byte("\n")) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		i := bytes.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(string(line[i+1:]), 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[string(line[:i])] = v
	}
	return out
}
