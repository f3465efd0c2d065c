package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFlagsInLlmdStyle(t *testing.T) {
	cfg, warnings, err := parseArgs([]string{
		"--model", "meta/llama", "--served-model-name", "a", "b", "--served-model-name=c,d",
		"--port=9000", "--host", "127.0.0.2", "--time-to-first-token", "20", "--inter-token-latency", "1500us",
		"--time-to-first-token-std-dev", "5ms", "--max-num-seqs", "7", "--max-model-len", "2048",
		"--mode", "echo", "--force-dummy-tokenizer", "--seed", "9", "--failure-injection-rate", "12.5",
		"--failure-types", "rate_limit", "server_error", "--enable-kvcache", "--kv-cache-size", "64",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.ServedModelNames, []string{"a", "b", "c", "d"}) {
		t.Errorf("served names %v", cfg.ServedModelNames)
	}
	if cfg.Port != 9000 || cfg.Host != "127.0.0.2" || cfg.MaxNumSeqs != 7 || cfg.MaxModelLen != 2048 {
		t.Errorf("scalars %+v", cfg)
	}
	if cfg.TTFT != 20*time.Millisecond || cfg.ITL != 1500*time.Microsecond || cfg.TTFTStdDev != 5*time.Millisecond {
		t.Errorf("latencies %v %v %v", cfg.TTFT, cfg.ITL, cfg.TTFTStdDev)
	}
	if cfg.Mode != modeEcho || cfg.Seed != 9 || cfg.FailureRate != 12.5 {
		t.Errorf("mode/seed/rate %v %v %v", cfg.Mode, cfg.Seed, cfg.FailureRate)
	}
	if !reflect.DeepEqual(cfg.FailureTypes, []string{"rate_limit", "server_error"}) {
		t.Errorf("failure types %v", cfg.FailureTypes)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "--enable-kvcache") {
		t.Errorf("ignored flags must be reported: %v", warnings)
	}
}

func TestDefaultsMatchLlmd(t *testing.T) {
	cfg, _, err := parseArgs([]string{"--model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 8000 || cfg.Host != "0.0.0.0" || cfg.MaxNumSeqs != 5 || cfg.MaxModelLen != 1024 ||
		cfg.TTFT != 0 || cfg.ITL != 0 || cfg.Mode != modeRandom || cfg.ServedModelNames[0] != "m" {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestBadFlagsNameTheFlag(t *testing.T) {
	cases := map[string][]string{
		"--model is required":            {"--port", "1"},
		"unknown flag --nope":            {"--model", "m", "--nope", "1"},
		"--max-num-seqs must be":         {"--model", "m", "--max-num-seqs", "0"},
		"--mode must be echo or random":  {"--model", "m", "--mode", "x"},
		"--time-to-first-token:":         {"--model", "m", "--time-to-first-token", "soon"},
		"at most 30% of --inter-token":   {"--model", "m", "--inter-token-latency", "10", "--inter-token-latency-std-dev", "4"},
		"--failure-types: unknown type":  {"--model", "m", "--failure-types", "boom"},
		"--failure-injection-rate must":  {"--model", "m", "--failure-injection-rate", "101"},
		"--fake-metrics: invalid JSON":   {"--model", "m", "--fake-metrics", "{"},
		"kv-cache-usage must be between": {"--model", "m", "--fake-metrics", `{"kv-cache-usage": 2}`},
		"--port needs a value":           {"--model", "m", "--port"},
		"--config (YAML file) is not":    {"--model", "m", "--config", "x.yaml"},
	}
	for want, args := range cases {
		_, _, err := parseArgs(args)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: got %v, want message containing %q", args, err, want)
		}
	}
}

func TestTokenBucketsFollowVllm(t *testing.T) {
	got := tokenBuckets(1024)
	want := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
}

func TestJSONStringEscaping(t *testing.T) {
	got := string(appendJSONString(nil, "a\"b\\c\nd\te\x01é\xff"))
	want := `"a\"b\\c\nd\te\u0001é\ufffd"`
	if got != want {
		t.Errorf("got %s want %s", got, want)
	}
}
