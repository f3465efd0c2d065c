package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkStreaming64Tokens measures zero-latency streaming completions of 64 tokens with usage,
// client and server in one process over loopback keep-alive connections:
//
//	go test -run '^$' -bench Streaming -benchtime 5s
//
// req/s is reported directly; CPU per request is the reported ns/op times GOMAXPROCS at most.
func BenchmarkStreaming64Tokens(b *testing.B) {
	cfg, _, err := parseArgs([]string{"--model", "m", "--max-num-seqs", "100000", "--seed", "1"})
	if err != nil {
		b.Fatal(err)
	}
	ts := newLoopbackServer(newServer(cfg))
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	body := `{"model":"m","prompt":"a b c d","max_tokens":64,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.HasSuffix(string(data), "data: [DONE]\n\n") {
				b.Errorf("incomplete stream: %d bytes", len(data))
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
