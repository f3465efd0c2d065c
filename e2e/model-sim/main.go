// Command model-sim simulates an LLM model server (vLLM's OpenAI API, TGI's native API and vLLM's
// Prometheus metrics) with exact, configurable timing. It accepts llm-d-inference-sim's flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

func main() {
	cfg, warnings, err := parseArgs(os.Args[1:])
	if errors.Is(err, errHelp) {
		fmt.Print(usage())
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "model-sim: %v\n", err)
		os.Exit(2)
	}
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "model-sim: note: %s\n", w)
	}
	if os.Getenv("GOGC") == "" {
		// The heap is small and short-lived (request bodies, event buffers); collecting less
		// often leaves the CPU to serving (garbage collection was a sixth of it at thousands of
		// streams per second with the default of 100).
		debug.SetGCPercent(400)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "model-sim: cannot listen on %s:%d: %v\n", cfg.Host, cfg.Port, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: newServer(cfg), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 5 * time.Minute}
	fmt.Fprintf(os.Stderr, "model-sim: serving model %q as %v on http://%s (ttft=%v itl=%v max-num-seqs=%d mode=%s)\n",
		cfg.Model, cfg.ServedModelNames, ln.Addr(), cfg.TTFT, cfg.ITL, cfg.MaxNumSeqs, cfg.Mode)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(os.Stderr, "model-sim: %v\n", err)
		os.Exit(1)
	case <-stop:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
}
