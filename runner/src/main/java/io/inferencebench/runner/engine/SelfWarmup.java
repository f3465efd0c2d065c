package io.inferencebench.runner.engine;

import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.http.HttpTransport;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the whole client path — dispatcher, event loops, HTTP client, SSE parsing, recording —
 * against a throw-away streaming server on loopback before the first stage.
 *
 * <p>Why: a fresh JVM loads hundreds of classes and interprets the request path for its first
 * requests; peers' and our own measurements showed the first requests of a short stage lagging
 * their schedule by 100+ ms, which alone decides p99 at low rates. Warming against a local server
 * costs about a second and sends nothing to the target.
 */
public final class SelfWarmup {

    private SelfWarmup() {}

    /** Stops a warm-up from another thread (Ctrl-C): it returns as soon as its stage aborts. */
    public static final class Cancel {
        private volatile boolean cancelled;
        private volatile LoadEngine engine;

        public void cancel() {
            cancelled = true;
            LoadEngine running = engine;
            if (running != null) {
                running.cancel();
            }
        }

        public boolean cancelled() {
            return cancelled;
        }

        void running(LoadEngine e) {
            engine = e;
            if (cancelled) {
                e.cancel();
            }
        }
    }

    /** Tokens of the warm-up's whole-stream responses when the caller names none. */
    static final int DEFAULT_STREAM_TOKENS = 64;

    /** Most tokens of a warm-up response (a larger real output is warmed at this size). */
    static final int MAX_STREAM_TOKENS = 1024;

    /** A warm-up that nothing cancels. */
    public static long run(
            Protocol protocol,
            GenerationParams params,
            HttpTransport target,
            Duration budget,
            int streamTokens) {
        return run(protocol, params, target, budget, streamTokens, new Cancel());
    }

    /**
     * {@link #run(Protocol, GenerationParams, HttpTransport, Duration, int, Cancel)} at 64 tokens.
     */
    public static long run(
            Protocol protocol,
            GenerationParams params,
            HttpTransport target,
            Duration budget,
            Cancel cancel) {
        return run(protocol, params, target, budget, DEFAULT_STREAM_TOKENS, cancel);
    }

    /**
     * Warms on the event loops of {@code target} (the transport the stages will use), through a
     * transport of its own to the local server. Every other response is a whole stream of {@code
     * streamTokens} events in one write, as a server sends tokens that are all due (the size of the
     * real responses decides which buffer sizes, and so which allocator paths, the loops meet); the
     * others mix small writes, events split across writes and CRLF line ends.
     *
     * @param streamTokens output tokens of the real requests (clamped to 8..{@value
     *     #MAX_STREAM_TOKENS})
     * @return the number of warm-up exchanges completed
     */
    public static long run(
            Protocol protocol,
            GenerationParams params,
            HttpTransport target,
            Duration budget,
            int streamTokens,
            Cancel cancel) {
        if (cancel.cancelled()) {
            return 0;
        }
        warmSchedules();
        int wholeStreamTokens = Math.max(8, Math.min(MAX_STREAM_TOKENS, streamTokens));
        java.util.concurrent.atomic.AtomicLong responses =
                new java.util.concurrent.atomic.AtomicLong();
        Vertx vertx = Vertx.vertx();
        try {
            HttpServer server =
                    vertx.createHttpServer()
                            .requestHandler(
                                    req ->
                                            req.body()
                                                    .onSuccess(
                                                            body ->
                                                                    respond(
                                                                            req.response(),
                                                                            protocol.name(),
                                                                            params.stream(),
                                                                            responses
                                                                                                            .incrementAndGet()
                                                                                                    % 2
                                                                                            == 0
                                                                                    ? wholeStreamTokens
                                                                                    : 0)));
            int port =
                    server.listen(0, "127.0.0.1")
                            .toCompletionStage()
                            .toCompletableFuture()
                            .get(5, TimeUnit.SECONDS)
                            .actualPort();
            long done = 0;
            VirtualMachineError jvmError = null;
            long deadline = System.nanoTime() + budget.toNanos();
            try (HttpTransport transport =
                    new HttpTransport(
                            "http://127.0.0.1:" + port,
                            Map.of(),
                            256,
                            Duration.ofSeconds(5),
                            target)) {
                List<Prompt> prompts =
                        List.of(
                                new Prompt("warm up", new int[] {1, 2, 3}, null, 3, 8, "token_ids"),
                                new Prompt(
                                        "warm up the client path",
                                        null,
                                        null,
                                        5,
                                        8,
                                        "approximation"));
                LoadEngine engine =
                        new LoadEngine(
                                transport,
                                prompts,
                                null,
                                new EngineSettings(
                                        protocol,
                                        params,
                                        protocol.defaultPath(),
                                        new Slo(1e9, 1e9, 1e9, 0),
                                        1000,
                                        1,
                                        Duration.ofSeconds(5)),
                                StageObserver.NONE);
                engine.setSettleBeforeStage(false);
                engine.setSelfWarmup();
                cancel.running(engine);
                // Bounded by time, not count: on a loaded machine a fixed count can take many
                // seconds.
                while (System.nanoTime() < deadline - 50_000_000L && !engine.isCancelled()) {
                    long remaining = deadline - System.nanoTime();
                    done +=
                            engine.runStage(
                                            new StagePlan(
                                                    0,
                                                    Double.POSITIVE_INFINITY,
                                                    8,
                                                    2000,
                                                    Duration.ofNanos(remaining / 2),
                                                    null,
                                                    ArrivalKind.CONSTANT,
                                                    1,
                                                    null))
                                    .completed;
                    remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        break;
                    }
                    // Constant arrivals too: a schedule kind first met in a measured stage
                    // deoptimises the compiled dispatcher there (a few ms of lag).
                    done +=
                            engine.runStage(
                                            new StagePlan(
                                                    1,
                                                    2000,
                                                    null,
                                                    600,
                                                    Duration.ofNanos(remaining / 2),
                                                    64,
                                                    ArrivalKind.CONSTANT,
                                                    1,
                                                    null))
                                    .completed;
                    remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        break;
                    }
                    done +=
                            engine.runStage(
                                            new StagePlan(
                                                    2,
                                                    2000,
                                                    null,
                                                    1000,
                                                    Duration.ofNanos(remaining),
                                                    64,
                                                    ArrivalKind.POISSON,
                                                    1,
                                                    null))
                                    .completed;
                }
                jvmError = engine.jvmError();
            }
            server.close();
            if (jvmError != null) {
                // Best effort ends here: the JVM itself failed, and the run must hear it.
                throw jvmError;
            }
            awaitCompilerQuiet(COMPILER_QUIET_MAX);
            return done;
        } catch (Exception e) {
            // Warming is best effort: the benchmark itself is unaffected if it fails.
            return 0;
        } finally {
            vertx.close();
        }
    }

    /** Longest wait for the JIT compiler to finish what the warm-up queued. */
    static final Duration COMPILER_QUIET_MAX = Duration.ofSeconds(3);

    /** How long no compilation may have run for the compiler to count as done. */
    private static final long QUIET_NANOS = 150_000_000L;

    /**
     * Waits until the JIT has compiled what the warm-up asked for: no compilation time accrued for
     * {@value #QUIET_NANOS} ns, or {@code max} passed.
     *
     * <p>Why: the warm-up queues hundreds of compilations, and on one CPU the compiler thread was
     * still draining them when the first stage began (JFR at 1,600 req/s: 114 C1 compilations in
     * the stage's first 100 ms); every request due meanwhile waited for the CPU, which alone put
     * the stage's p99 schedule lag above 2 ms.
     *
     * @return how long it waited, ms
     */
    static long awaitCompilerQuiet(Duration max) {
        java.lang.management.CompilationMXBean compiler =
                java.lang.management.ManagementFactory.getCompilationMXBean();
        if (compiler == null || !compiler.isCompilationTimeMonitoringSupported()) {
            return 0;
        }
        long start = System.nanoTime();
        long deadline = start + max.toNanos();
        long last = compiler.getTotalCompilationTime();
        long quietSince = start;
        while (System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            long now = System.nanoTime();
            long total = compiler.getTotalCompilationTime();
            if (total != last) {
                last = total;
                quietSince = now;
            } else if (now - quietSince >= QUIET_NANOS) {
                break;
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** Every arrival kind's gap code, so none is first compiled inside a measured stage. */
    private static void warmSchedules() {
        long sink = 0;
        for (ArrivalKind kind : ArrivalKind.values()) {
            ArrivalSchedule schedule = new ArrivalSchedule(1000, kind, 0.7, 1);
            for (int i = 0; i < 20_000; i++) {
                sink += schedule.nextOffsetNanos();
            }
        }
        if (sink == 42) {
            // Keeps the loop from being optimised away; never true in practice.
            System.out.print("");
        }
    }

    /**
     * One warm-up response: {@code wholeStream} tokens in a single write, or (0) eight tokens
     * written in the mixed patterns.
     */
    private static void respond(
            HttpServerResponse response, String protocol, boolean stream, int wholeStream) {
        int tokens = wholeStream > 0 ? wholeStream : 8;
        if (!stream) {
            String body =
                    switch (protocol) {
                        case "openai-chat" ->
                                "{\"choices\":[{\"message\":{\"content\":\"w w w w w w w w\"}}],"
                                        + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":8}}";
                        case "tgi-generate" ->
                                "{\"generated_text\":\"w w w w w w w w\",\"details\":{\"generated_tokens\":8}}";
                        default ->
                                "{\"choices\":[{\"text\":\"w w w w w w w w\"}],"
                                        + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":8}}";
                    };
            response.putHeader("content-type", "application/json").end(body);
            return;
        }
        response.setChunked(true)
                .putHeader("content-type", "text/event-stream; charset=utf-8")
                .putHeader("cache-control", "no-cache");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < tokens; i++) {
            String event =
                    switch (protocol) {
                        case "openai-chat" ->
                                "data: {\"id\":\"chatcmpl-w\",\"object\":\"chat.completion.chunk\","
                                        + "\"created\":1795994654,\"model\":\"w\",\"choices\":[{"
                                        + "\"index\":0,\"delta\":{\"content\":\" w\"},\"logprobs\":null,"
                                        + "\"finish_reason\":"
                                        + (i == tokens - 1 ? "\"length\"" : "null")
                                        + "}],\"usage\":null}\n\n";
                        case "tgi-generate" ->
                                "data:{\"index\":"
                                        + i
                                        + ",\"token\":{\"id\":5,\"text\":\" w\",\"special\":false},"
                                        + "\"generated_text\":null,\"details\":null}\n\n";
                        default ->
                                // vLLM's shape (ids, numbers, nulls, finish/stop reasons), so the
                                // parser's branches for them are compiled before the real target.
                                "data: {\"id\":\"cmpl-w\",\"object\":\"text_completion\","
                                        + "\"created\":1795994654,\"model\":\"w\",\"choices\":[{"
                                        + "\"index\":0,\"text\":\" w\",\"logprobs\":null,"
                                        + "\"finish_reason\":"
                                        + (i == tokens - 1 ? "\"length\"" : "null")
                                        + ",\"stop_reason\":null}]}\n\n";
                    };
            if (wholeStream > 0) {
                sb.append(event);
                continue;
            }
            // Events in their own write, batched, split across two writes (a read that ends
            // mid-line) and with CRLF line ends: every read path of the parser gets compiled
            // here rather than first met, and deoptimised, inside a measured stage.
            switch (i % 4) {
                case 0 -> response.write(Buffer.buffer(event));
                case 1 -> {
                    int half = event.length() / 2;
                    response.write(Buffer.buffer(event.substring(0, half)));
                    response.write(Buffer.buffer(event.substring(half)));
                }
                case 2 -> response.write(Buffer.buffer(event.replace("\n", "\r\n")));
                default -> sb.append(event);
            }
        }
        if (protocol.equals("tgi-generate")) {
            sb.append(
                    "data:{\"token\":{\"id\":2,\"text\":\"\",\"special\":true},"
                            + "\"generated_text\":\"w\",\"details\":{\"generated_tokens\":8}}\n\n");
        } else {
            sb.append(
                    "data: {\"id\":\"cmpl-w\",\"object\":\"text_completion\",\"created\":1795994654,"
                            + "\"model\":\"w\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
                            + "\"total_tokens\":11,\"completion_tokens\":8,"
                            + "\"prompt_tokens_details\":null}}\n\n");
            sb.append("data: [DONE]\n\n");
        }
        response.end(Buffer.buffer(sb.toString()));
    }
}
