package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config holds everything the simulator was started with. Flag names follow llm-d-inference-sim
// so that manifests and scripts written for it work unchanged.
type Config struct {
	Host               string
	Port               int
	Model              string
	ServedModelNames   []string
	TTFT               time.Duration
	TTFTStdDev         time.Duration
	ITL                time.Duration
	ITLStdDev          time.Duration
	MaxNumSeqs         int
	MaxWaitingQueueLen int
	MaxModelLen        int
	Mode               string
	Seed               int64
	FakeMetrics        *FakeMetrics
	FailureRate        float64
	FailureTypes       []string
	StartupDuration    time.Duration
	MaxLoras           int
	LoraModules        []string // LoRA adapter names served beside the base model
	// StrictOpenAI refuses request fields outside OpenAI's API with HTTP 422, as strict servers
	// such as Hugging Face's transformers serve do.
	StrictOpenAI bool
	// PrefixCaching counts prefix-cache queries and hits over full blocks of BlockSize tokens, as
	// vLLM does (vllm:prefix_cache_queries_total, vllm:prefix_cache_hits_total).
	PrefixCaching bool
	BlockSize     int
	// RefuseCacheReset answers 404 at /reset_prefix_cache and /flush_cache, as vLLM does when
	// started without VLLM_SERVER_DEV_MODE=1.
	RefuseCacheReset bool
	// CachedPrefillFactor scales the share of the time to first token that cached prompt tokens
	// would take: 1 (default) leaves TTFT as configured, 0 makes cached tokens free.
	CachedPrefillFactor float64
	// RequestLog, when set, is a file the server appends one JSON line to per generation request
	// it accepts: when it arrived and its prompt and max tokens, so a test can compare a client's
	// schedule with what the server observed.
	RequestLog string
}

const (
	modeRandom = "random"
	modeEcho   = "echo"
)

// flagKind says how many values a flag takes on the command line.
type flagKind int

const (
	oneValue   flagKind = iota
	noValue             // boolean switch; "--x=false" is also accepted
	manyValues          // values until the next "--flag" (llm-d style), commas also split
)

type flagSpec struct {
	kind flagKind
	set  func(c *Config, values []string) error
	help string
	// ignored flags are accepted for compatibility with llm-d-inference-sim and have no effect.
	ignored bool
}

func defaultConfig() *Config {
	return &Config{
		Host:                "0.0.0.0",
		Port:                8000,
		MaxNumSeqs:          5,
		MaxWaitingQueueLen:  1000,
		MaxModelLen:         1024,
		Mode:                modeRandom,
		Seed:                time.Now().UnixNano(),
		MaxLoras:            1,
		BlockSize:           16,
		CachedPrefillFactor: 1,
	}
}

var failureTypeNames = []string{
	"rate_limit", "invalid_api_key", "context_length", "server_error", "invalid_request", "model_not_found",
}

func flagSpecs() map[string]flagSpec {
	intFlag := func(name string, dst func(c *Config) *int, min int) func(c *Config, v []string) error {
		return func(c *Config, v []string) error {
			n, err := strconv.Atoi(v[0])
			if err != nil || n < min {
				return fmt.Errorf("--%s must be an integer >= %d, got %q", name, min, v[0])
			}
			*dst(c) = n
			return nil
		}
	}
	durFlag := func(name string, dst func(c *Config) *time.Duration) func(c *Config, v []string) error {
		return func(c *Config, v []string) error {
			d, err := parseLatency(v[0])
			if err != nil {
				return fmt.Errorf("--%s: %v", name, err)
			}
			*dst(c) = d
			return nil
		}
	}
	ignore := func(kind flagKind) flagSpec {
		return flagSpec{kind: kind, ignored: true, set: func(*Config, []string) error { return nil }}
	}
	specs := map[string]flagSpec{
		"host": {help: "bind address (default 0.0.0.0)", set: func(c *Config, v []string) error {
			c.Host = v[0]
			return nil
		}},
		"port":                        {help: "listen port, 0 picks a free one (default 8000)", set: intFlag("port", func(c *Config) *int { return &c.Port }, 0)},
		"model":                       {help: "base model name (required)", set: func(c *Config, v []string) error { c.Model = v[0]; return nil }},
		"served-model-name":           {kind: manyValues, help: "names exposed by the API (space or comma separated)", set: func(c *Config, v []string) error { c.ServedModelNames = v; return nil }},
		"time-to-first-token":         {help: "time to first token: milliseconds or a duration such as 20ms", set: durFlag("time-to-first-token", func(c *Config) *time.Duration { return &c.TTFT })},
		"time-to-first-token-std-dev": {help: "standard deviation of the time to first token", set: durFlag("time-to-first-token-std-dev", func(c *Config) *time.Duration { return &c.TTFTStdDev })},
		"inter-token-latency":         {help: "time between output tokens: milliseconds or a duration", set: durFlag("inter-token-latency", func(c *Config) *time.Duration { return &c.ITL })},
		"inter-token-latency-std-dev": {help: "standard deviation of the inter-token latency", set: durFlag("inter-token-latency-std-dev", func(c *Config) *time.Duration { return &c.ITLStdDev })},
		"max-num-seqs":                {help: "requests processed at once; more wait in a queue (default 5)", set: intFlag("max-num-seqs", func(c *Config) *int { return &c.MaxNumSeqs }, 1)},
		"max-waiting-queue-length":    {help: "waiting requests beyond which new ones get HTTP 429 (default 1000)", set: intFlag("max-waiting-queue-length", func(c *Config) *int { return &c.MaxWaitingQueueLen }, 1)},
		"max-model-len":               {help: "context window: prompt + output tokens (default 1024)", set: intFlag("max-model-len", func(c *Config) *int { return &c.MaxModelLen }, 1)},
		"max-loras":                   {help: "reported in vllm:lora_requests_info (default 1)", set: intFlag("max-loras", func(c *Config) *int { return &c.MaxLoras }, 1)},
		"lora-modules": {kind: manyValues, help: "LoRA adapters served as models, vLLM's syntax: name=path or a JSON object with a name (no weights are loaded)", set: func(c *Config, v []string) error {
			for _, m := range v {
				name, err := loraName(m)
				if err != nil {
					return err
				}
				c.LoraModules = append(c.LoraModules, name)
			}
			return nil
		}},
		"mode": {help: "echo|random (default random)", set: func(c *Config, v []string) error {
			if v[0] != modeEcho && v[0] != modeRandom {
				return fmt.Errorf("--mode must be echo or random, got %q", v[0])
			}
			c.Mode = v[0]
			return nil
		}},
		"seed": {help: "random seed (default: current time)", set: func(c *Config, v []string) error {
			n, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return fmt.Errorf("--seed must be an integer, got %q", v[0])
			}
			c.Seed = n
			return nil
		}},
		"fake-metrics": {kind: oneValue, help: "JSON: fixed values reported on /metrics instead of real ones", set: func(c *Config, v []string) error {
			fm, err := parseFakeMetrics(v[0])
			if err != nil {
				return fmt.Errorf("--fake-metrics: %v", err)
			}
			c.FakeMetrics = fm
			return nil
		}},
		"failure-injection-rate": {help: "percentage 0-100 of requests answered with an injected error", set: func(c *Config, v []string) error {
			f, err := strconv.ParseFloat(v[0], 64)
			if err != nil || f < 0 || f > 100 || math.IsNaN(f) {
				return fmt.Errorf("--failure-injection-rate must be a number from 0 to 100, got %q", v[0])
			}
			c.FailureRate = f
			return nil
		}},
		"failure-types": {kind: manyValues, help: "injected error kinds: " + strings.Join(failureTypeNames, ", ") + " (default all)", set: func(c *Config, v []string) error {
			for _, t := range v {
				if _, ok := predefinedFailures[t]; !ok {
					return fmt.Errorf("--failure-types: unknown type %q, allowed: %s", t, strings.Join(failureTypeNames, ", "))
				}
			}
			c.FailureTypes = v
			return nil
		}},
		"startup-duration": {help: "time during which /ready answers 503", set: durFlag("startup-duration", func(c *Config) *time.Duration { return &c.StartupDuration })},
		"strict-openai": {kind: noValue, help: "refuse /v1/completions and /v1/chat/completions fields outside OpenAI's API (e.g. ignore_eos) with HTTP 422 and a pydantic error body, as transformers serve does", set: func(c *Config, v []string) error {
			c.StrictOpenAI = len(v) == 0 || v[0] == "1" || strings.EqualFold(v[0], "true") || strings.EqualFold(v[0], "t")
			return nil
		}},
		"enable-prefix-caching": {kind: noValue, help: "count prefix-cache queries and hits over full blocks of --block-size tokens as vLLM does; POST /reset_prefix_cache (or SGLang's /flush_cache) empties the cache", set: func(c *Config, v []string) error {
			c.PrefixCaching = len(v) == 0 || v[0] == "1" || strings.EqualFold(v[0], "true") || strings.EqualFold(v[0], "t")
			return nil
		}},
		"no-enable-prefix-caching": {kind: noValue, help: "no prefix cache (the default)", set: func(c *Config, v []string) error {
			c.PrefixCaching = false
			return nil
		}},
		"refuse-cache-reset": {kind: noValue, help: "answer 404 at /reset_prefix_cache and /flush_cache, as vLLM does without VLLM_SERVER_DEV_MODE=1 (the refusals are counted)", set: func(c *Config, v []string) error {
			c.RefuseCacheReset = len(v) == 0 || v[0] == "1" || strings.EqualFold(v[0], "true") || strings.EqualFold(v[0], "t")
			return nil
		}},
		"request-log": {help: "append one JSON line per accepted generation request to this file: arrival_unix_ns, prompt_tokens, max_tokens, model", set: func(c *Config, v []string) error {
			if v[0] == "" {
				return fmt.Errorf("--request-log needs a file name")
			}
			c.RequestLog = v[0]
			return nil
		}},
		"block-size": {help: "tokens per prefix-cache block (default 16)", set: intFlag("block-size", func(c *Config) *int { return &c.BlockSize }, 1)},
		"cached-prefill-factor": {help: "0 to 1: how much of the time to first token cached prompt tokens still take (default 1)", set: func(c *Config, v []string) error {
			f, err := strconv.ParseFloat(v[0], 64)
			if err != nil || f < 0 || f > 1 || math.IsNaN(f) {
				return fmt.Errorf("--cached-prefill-factor must be a number from 0 to 1, got %q", v[0])
			}
			c.CachedPrefillFactor = f
			return nil
		}},
		"force-dummy-tokenizer": {kind: noValue, help: "accepted; the simulator always uses its word tokenizer", set: func(*Config, []string) error { return nil }},
		"config": {help: "not supported: pass flags instead", set: func(*Config, []string) error {
			return errors.New("--config (YAML file) is not supported by model-sim; pass the settings as flags")
		}},
	}
	for _, name := range []string{"tokenizer", "tokenizers-cache-dir", "kv-cache-transfer-latency",
		"kv-cache-transfer-latency-std-dev", "kv-cache-transfer-time-per-token", "kv-cache-transfer-time-std-dev",
		"prefill-overhead", "prefill-time-per-token", "prefill-time-std-dev", "time-factor-under-load",
		"kv-cache-size", "hash-seed", "zmq-endpoint", "event-batch-size", "max-cpu-loras",
		"data-parallel-size", "data-parallel-rank", "dataset-path", "dataset-url", "latency-calculator",
		"global-cache-hit-threshold", "max-request-body-size-mb", "fake-metrics-refresh-interval",
		"max-tool-call-integer-param", "min-tool-call-integer-param", "tensor-parallel-size",
		"max-tool-call-number-param", "min-tool-call-number-param", "tool-call-not-required-param-probability",
		"max-tool-call-array-param-length", "min-tool-call-array-param-length",
		"object-tool-call-not-required-field-probability", "ssl-certfile", "ssl-keyfile"} {
		specs[name] = ignore(oneValue)
	}
	for _, name := range []string{"enable-kvcache", "enable-sleep-mode", "enable-request-id-headers",
		"dataset-in-memory", "self-signed-certs", "log-http", "strict", "enforce-eager",
		"no-enable-sleep-mode", "no-enforce-eager", "skip-tool-validation"} {
		specs[name] = ignore(noValue)
	}
	return specs
}

// parseArgs reads llm-d-inference-sim style arguments: "--name value", "--name=value",
// "-name value", and for list flags "--name a b c" or "--name a,b".
func parseArgs(args []string) (*Config, []string, error) {
	c := defaultConfig()
	specs := flagSpecs()
	var warnings []string
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-h" || arg == "--help" || arg == "help" {
			return nil, nil, errHelp
		}
		if !strings.HasPrefix(arg, "-") {
			return nil, nil, fmt.Errorf("unexpected argument %q: flags look like --name value", arg)
		}
		name := strings.TrimLeft(arg, "-")
		var inline *string
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			v := name[eq+1:]
			inline = &v
			name = name[:eq]
		}
		spec, ok := specs[name]
		if !ok {
			return nil, nil, fmt.Errorf("unknown flag --%s (run with --help for the list)", name)
		}
		var values []string
		switch spec.kind {
		case noValue:
			if inline != nil {
				if _, err := strconv.ParseBool(*inline); err != nil {
					return nil, nil, fmt.Errorf("--%s takes true or false, got %q", name, *inline)
				}
				values = []string{*inline}
			}
		case oneValue:
			if inline != nil {
				values = []string{*inline}
			} else {
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("--%s needs a value", name)
				}
				i++
				values = []string{args[i]}
			}
		case manyValues:
			var raw []string
			if inline != nil {
				raw = append(raw, *inline)
			}
			for inline == nil && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				raw = append(raw, args[i])
			}
			for _, r := range raw {
				if strings.HasPrefix(strings.TrimSpace(r), "{") {
					// A JSON object (vLLM's --lora-modules form) is one value, commas and all.
					values = append(values, r)
					continue
				}
				for _, part := range strings.FieldsFunc(r, func(r rune) bool { return r == ',' || r == ' ' }) {
					values = append(values, part)
				}
			}
			if len(values) == 0 {
				return nil, nil, fmt.Errorf("--%s needs at least one value", name)
			}
			if name == "served-model-name" || name == "failure-types" {
				if seen[name] {
					values = append(currentList(c, name), values...)
				}
			}
		}
		seen[name] = true
		if spec.ignored {
			warnings = append(warnings, fmt.Sprintf("--%s is accepted for compatibility and has no effect", name))
			continue
		}
		if err := spec.set(c, values); err != nil {
			return nil, nil, err
		}
	}
	if c.Model == "" {
		if env := os.Getenv("SIM_MODEL"); env != "" {
			c.Model = env
		} else {
			return nil, nil, errors.New("--model is required (the model name the simulator pretends to serve)")
		}
	}
	if len(c.ServedModelNames) == 0 {
		c.ServedModelNames = []string{c.Model}
	}
	if err := c.validate(); err != nil {
		return nil, nil, err
	}
	return c, warnings, nil
}

func currentList(c *Config, name string) []string {
	if name == "served-model-name" {
		return c.ServedModelNames
	}
	return c.FailureTypes
}

var errHelp = errors.New("help requested")

func (c *Config) validate() error {
	if c.Port > 65535 {
		return fmt.Errorf("--port must be 0..65535, got %d", c.Port)
	}
	check := func(name string, mean, sd time.Duration) error {
		if sd > 0 && float64(sd) > 0.3*float64(mean) {
			return fmt.Errorf("--%s-std-dev (%v) must be at most 30%% of --%s (%v)", name, sd, name, mean)
		}
		return nil
	}
	if err := check("time-to-first-token", c.TTFT, c.TTFTStdDev); err != nil {
		return err
	}
	return check("inter-token-latency", c.ITL, c.ITLStdDev)
}

// parseLatency accepts an integer or decimal number of milliseconds (the original flag format)
// or a Go duration such as "20ms", "1.5s", "250us".
func parseLatency(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("must be >= 0, got %q", s)
		}
		return time.Duration(f * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("must be milliseconds (e.g. 20) or a duration (e.g. 20ms), got %q", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("must be >= 0, got %q", s)
	}
	return d, nil
}

func usage() string {
	specs := flagSpecs()
	names := make([]string, 0, len(specs))
	for n, s := range specs {
		if !s.ignored {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("model-sim: an OpenAI/vLLM/TGI-compatible model-server simulator (llm-d-inference-sim flags)\n\n")
	b.WriteString("usage: model-sim --model NAME [--port 8000] [--time-to-first-token 20ms] [--inter-token-latency 5ms] ...\n\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  --%-30s %s\n", n, specs[n].help)
	}
	b.WriteString("\nOther llm-d-inference-sim flags (KV cache, LoRA, datasets, tools) are accepted and ignored.\n")
	return b.String()
}

// parseFakeMetrics decodes the llm-d-inference-sim --fake-metrics JSON document.
func parseFakeMetrics(s string) (*FakeMetrics, error) {
	var fm FakeMetrics
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fm); err != nil {
		return nil, fmt.Errorf("invalid JSON (keys: running-requests, waiting-requests, kv-cache-usage, "+
			"ttft-buckets-values, tpot-buckets-values, e2erl-buckets-values, queue-time-buckets-values, "+
			"inf-time-buckets-values, prefill-time-buckets-values, decode-time-buckets-values, "+
			"request-prompt-tokens, request-generation-tokens, request-params-max-tokens, "+
			"request-success-total, total-prompt-tokens, total-generation-tokens, loras): %v", err)
	}
	return &fm, fm.validate()
}

// loraName is the adapter name of one --lora-modules value: "name=path", or vLLM's JSON form
// {"name": ..., "path": ..., "base_model_name": ...}.
func loraName(value string) (string, error) {
	v := strings.TrimSpace(value)
	if strings.HasPrefix(v, "{") {
		var m struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(v), &m); err != nil || m.Name == "" {
			return "", fmt.Errorf("--lora-modules: %q is not a JSON object with a name", value)
		}
		return m.Name, nil
	}
	name, _, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return "", fmt.Errorf("--lora-modules: %q is not name=path", value)
	}
	return strings.TrimSpace(name), nil
}
