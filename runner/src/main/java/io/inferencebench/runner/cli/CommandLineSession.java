package io.inferencebench.runner.cli;

import io.inferencebench.profile.cache.CacheStateCheck;
import io.inferencebench.profile.cache.PrefixCacheReset;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.RequestFields;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.TraceFile;
import io.inferencebench.runner.engine.JitPlan;
import io.inferencebench.runner.engine.JvmErrors;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.SelfWarmup;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.http.Spread;
import io.inferencebench.runner.metrics.ServerMetricsSource;
import io.inferencebench.runner.plan.PromptSource;
import io.inferencebench.runner.plan.RunPlan;
import io.inferencebench.runner.session.PrefixWarmup;
import io.inferencebench.runner.session.RunSession;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The command line's client of one run, set up once from its {@link RunFlags}: the result directory
 * proven writable, the prompts prepared, the transport, live and server metrics, Ctrl-C handling,
 * the model, the {@link RunSession} (engine, self warm-up, warm-up requests). {@code run} runs its
 * stages on it; {@code search} runs every probe on the same one, so the probes share the prompts,
 * the connections and the warm-up.
 */
final class CommandLineSession implements AutoCloseable {

    private final RunFlags flags;

    /** The plan; a trace's stages are bound to it once it is read. */
    private RunPlan plan;

    private final String baseUrl;
    private final PrintWriter err;
    private final SelfWarmup.Cancel warmupCancel = new SelfWarmup.Cancel();
    private final AtomicReference<LoadEngine> engineRef = new AtomicReference<>();
    private ResultFiles resultFiles;
    private HfTokenizer tokenizer;
    private HttpTransport transport;
    private HostFollower hostFollower;
    private LiveMetrics metrics;
    private ServerMetricsSource serverMetrics;
    private PrefixCacheReset cacheReset;

    /** The servers whose prefix cache the stages' declared state is established on, or none. */
    private List<String> cacheTargets = List.of();

    /** Warms the reset servers before each stage ({@code --warm-prefix-cache}), or null. */
    private PrefixWarmup cacheWarmup;

    /** The hit rate a warm stage's workload implies ({@link CacheStateCheck#warmImplied}). */
    private CacheStateCheck.Implied impliedWarm;

    /** Whether the stages' prompts share no prefix (a cold cache can then hit nothing). */
    private boolean reuseFree;

    private Interrupts interrupts;
    private PreparedPrompts prepared;
    private String modelName;
    private Progress progress;
    private ErrorSampler errors;
    private RunSession session;

    /** When the run started (its set-up done), recorded in the profiles of {@code run}. */
    private Instant started;

    /** Warm-up requests not yet recorded: the next stage's profile says they were left out. */
    private long warmupUnrecorded;

    /** Whether the user was told that responses are not streamed. */
    private boolean nonStreamedWarned;

    private CommandLineSession(RunFlags flags, CommandLinePlan resolved, PrintWriter err) {
        this.flags = flags;
        this.plan = resolved.plan();
        this.baseUrl = resolved.baseUrl();
        this.err = err;
    }

    /**
     * Checks the flags that need no server, then sets the run up: nothing is sent to the target
     * when its results could not be written or its prompts not be prepared.
     *
     * @param resolved the plan of {@code flags} (for a search: of its first probe)
     * @param progressFlag the {@code --progress} mode
     * @param interruptNotice what the first Ctrl-C prints, or {@code null} for {@code run}'s
     * @throws Main.UsageError naming the flag at fault
     */
    static CommandLineSession open(
            RunFlags flags,
            CommandLinePlan resolved,
            String progressFlag,
            String interruptNotice,
            PrintWriter err)
            throws Exception {
        CommandLineSession s = new CommandLineSession(flags, resolved, err);
        try {
            s.setUp(resolved, progressFlag, interruptNotice);
            return s;
        } catch (Exception | Error e) {
            s.close();
            throw e;
        }
    }

    /** Checks the flags that need no server: before the plan, as {@code run} always did. */
    static void checkFlags(RunFlags flags) {
        flags.output.check();
        try {
            JitPlan.mode();
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
    }

    private void setUp(CommandLinePlan resolved, String progressFlag, String interruptNotice)
            throws Exception {
        // Checked first: a bad address is refused before anything is written or sent.
        Spread spread = flags.target.spread(baseUrl);
        List<String> serverMetricsProblems = flags.serverMetrics.validate(baseUrl);
        if (!serverMetricsProblems.isEmpty()) {
            throw new Main.UsageError(String.join("; ", serverMetricsProblems));
        }
        cacheTargets = flags.prefixCache.targets(baseUrl, resolved.prefixCache());
        boolean warm = flags.prefixCache.warm(resolved.prefixCache());
        if (warm && plan.dataset().prefixes() == null) {
            throw new Main.UsageError(
                    "--warm-prefix-cache: needs --dataset-name prefix_repetition, whose shared"
                            + " prefixes are what a warm cache holds; other prompts declare none");
        }
        if (warm && plan.models() != null) {
            throw new Main.UsageError(
                    "--warm-prefix-cache: not with --model-mix: a server caches each model's or"
                            + " adapter's prefixes apart, and the warming sends one");
        }
        flags.workload.checkPromptFormat();
        // Before any request is sent: a run whose results cannot be written is not started.
        resultFiles = flags.output.prepareResultFiles();
        Map<String, String> requestHeaders = resolved.requestHeaders();
        tokenizer = flags.target.loadTokenizer();
        try {
            prepared =
                    PreparedPrompts.prepare(
                            plan, baseUrl, requestHeaders, tokenizer, flags.workload, err);
        } catch (OutOfMemoryError e) {
            throw promptsTooLarge();
        }
        if (prepared.trace() != null) {
            plan = prepared.trace().bind(plan);
        }
        OutputOptions output = flags.output;
        transport =
                new HttpTransport(
                        baseUrl,
                        requestHeaders,
                        output.eventLoops(),
                        output.maxConnections(),
                        plan.requestTimeout(),
                        plan.tls(),
                        spread);
        if (flags.target.followsHost()) {
            URI uri = URI.create(baseUrl);
            hostFollower =
                    HostFollower.start(transport, uri.getHost(), TargetOptions.port(uri), err);
        }
        metrics = output.metricsPort() == null ? null : LiveMetrics.start(output.metricsPort());
        serverMetrics = openServerMetrics();
        cacheReset =
                flags.prefixCache.open(
                        baseUrl,
                        resolved.prefixCache(),
                        plan.wire().backend(),
                        requestHeaders,
                        plan.tls());
        if (metrics != null) {
            err.println("live metrics on http://127.0.0.1:" + metrics.port() + "/metrics");
        }
        if (serverMetrics != null) {
            err.println("server metrics: " + serverMetrics.describe());
        }
        reuseFree = plan.dataset().reuseFree();
        if (!cacheTargets.isEmpty()) {
            err.println(
                    "prefix cache: "
                            + (cacheReset == null
                                    ? "warmed (not reset)"
                                    : warm ? "reset and warmed" : "reset")
                            + " before every stage at "
                            + TerminalText.oneLine(String.join(", ", cacheTargets)));
        }
        // From here on Ctrl-C stops the run gracefully: during discovery and the client warm-up
        // as well as in a stage.
        Runnable stop = this::cancel;
        interrupts =
                interruptNotice == null
                        ? Interrupts.install(stop, err)
                        : Interrupts.install(stop, err, interruptNotice);
        modelName = RunSession.model(plan, transport, baseUrl, FAILURES);
        GenerationParams params = plan.generation(modelName);
        progress =
                Progress.create(
                        progressFlag,
                        err,
                        plan.stages().size(),
                        plan.dataset().conversation() == null
                                ? 0
                                : plan.dataset().conversation().turns());
        errors = new ErrorSampler(RequestFields.extensions(plan.wire().api(), params));
        if (warm) {
            cacheWarmup =
                    new PrefixWarmup(
                            PromptSource.warmingPrompts(
                                    plan.dataset(),
                                    plan.datasetSize(),
                                    PromptSource.tokens(
                                            prepared.serverTokenizer(),
                                            prepared.tokenIds(),
                                            tokenizer)),
                            plan.wire().protocol(),
                            params,
                            plan.wire().path(),
                            requestHeaders,
                            PrefixCacheOptions.sslContext(cacheTargets, plan.tls()),
                            plan.requestTimeout());
            impliedWarm =
                    CacheStateCheck.warmImplied(
                            plan.dataset().prefixes().prefixTokens(),
                            plan.dataset().prefixes().suffixTokens());
        }
        try {
            session =
                    new RunSession(
                            transport,
                            prepared.prompts(),
                            tokenizer,
                            plan.engine(params, output.sampleCap()),
                            StageObservers.of(progress, metrics, errors));
        } catch (OutOfMemoryError e) {
            throw promptsTooLarge();
        }
        LoadEngine engine = session.engine();
        engineRef.set(engine);
        if (warmupCancel.cancelled()) {
            // Interrupted during discovery or set-up: nothing is sent.
            engine.cancel();
        }
        String jitChange = session.prepareJvm();
        if (jitChange != null) {
            err.println(jitChange);
        }
        if (output.selfWarmup()) {
            selfWarmup();
        }
        started = Instant.now();
        printTarget();
        warmupUnrecorded = warmUp();
        if (!plan.wire().stream()) {
            Slo slo = plan.slo();
            err.println(
                    "note: responses are not streamed (--no-stream or workload.streaming:"
                            + " false): TTFT, ITL and TPOT are not measured"
                            + (slo.ttftMs() != null || slo.tpotMs() != null
                                    ? ", so a ttft or tpot SLO is not met"
                                    : ""));
            nonStreamedWarned = true;
        }
    }

    /** Stops what runs now and every later stage: the first Ctrl-C. */
    private void cancel() {
        warmupCancel.cancel();
        LoadEngine running = engineRef.get();
        if (running != null) {
            running.cancel();
        }
        if (serverMetrics != null) {
            // A stage that ended may be waiting for its window's server metrics (a Prometheus
            // query): not any longer.
            serverMetrics.cancel();
        }
    }

    /** The plan the session was set up with. */
    RunPlan plan() {
        return plan;
    }

    /** When the set-up was done and the run started (before its warm-up requests). */
    Instant started() {
        return started;
    }

    /** Whether the server-metric flags opened a source (the summary then prints its lines). */
    boolean collectsServerMetrics() {
        return serverMetrics != null;
    }

    /** Whether Ctrl-C (or a JVM error) stopped the engine: no later stage sends anything. */
    boolean cancelled() {
        return session.engine().isCancelled();
    }

    /**
     * Runs {@code stages} on the session's engine, each profile written as it ends; the first stage
     * run records the warm-up requests left out of it.
     *
     * @param start when the run started, recorded in the profiles
     */
    StageLoop.Outcome runStages(List<StagePlan> stages, Duration cooldown, Instant start)
            throws InterruptedException {
        return runStages(stages, cooldown, start, 1);
    }

    /**
     * As {@link #runStages(List, Duration, Instant)}, the stages being {@code repeats} runs of one
     * list (each profile then says which repeat it is).
     */
    StageLoop.Outcome runStages(
            List<StagePlan> stages, Duration cooldown, Instant start, int repeats)
            throws InterruptedException {
        long warmupSent = warmupUnrecorded;
        warmupUnrecorded = 0;
        return new StageLoop(
                        session.engine(),
                        transport,
                        serverMetrics,
                        cacheTargets,
                        cacheReset,
                        cacheWarmup,
                        reuseFree ? CacheStateCheck.COLD_REUSE_FREE : impliedWarm,
                        resultFiles,
                        context(start),
                        progress,
                        errors,
                        err)
                .run(stages, cooldown, warmupSent, nonStreamedWarned, repeats);
    }

    /** Ends the progress view (before the summary is printed). */
    void endProgress() {
        if (progress != null) {
            progress.close();
        }
    }

    @Override
    public void close() {
        try (HfTokenizer closeTokenizer = tokenizer;
                Interrupts closeInterrupts = interrupts;
                HttpTransport closeTransport = transport;
                HostFollower closeHostFollower = hostFollower;
                LiveMetrics closeMetrics = metrics;
                ServerMetricsSource closeServerMetrics = serverMetrics) {
            endProgress();
        }
    }

    /**
     * The prompts are built before any request (all of them, and each request encoded once): when
     * they do not fit, that is said up front instead of a run that dies of it.
     */
    private Main.UsageError promptsTooLarge() {
        return new Main.UsageError(
                String.format(
                        Locale.ROOT,
                        "--num-prompts: the %d distinct prompts this run prepares before it"
                                + " starts do not fit in the heap (-Xmx %s); lower --num-prompts"
                                + " or the prompt lengths (--random-input-len), or give the JVM"
                                + " more heap (java -Xmx...). At most %d distinct prompts are"
                                + " held; a stage that sends more reuses them in turn",
                        plan.datasetSize(),
                        JvmErrors.maxHeap(),
                        RunPlan.MAX_PROMPTS));
    }

    private void selfWarmup() {
        long warmStart = System.nanoTime();
        long exchanges;
        try {
            exchanges = session.selfWarmup(warmupCancel);
        } catch (VirtualMachineError e) {
            throw new Main.JvmFailure(
                    JvmErrors.describe(e) + " during the client's self warm-up; no stage ran");
        }
        err.printf(
                Locale.ROOT,
                "client warm-up: %d local exchanges in %.1f s (nothing sent to the target)%s%n",
                exchanges,
                (System.nanoTime() - warmStart) / 1e9,
                warmupCancel.cancelled() ? "; stopped by the interrupt" : "");
    }

    private void printTarget() {
        err.printf(
                Locale.ROOT,
                "target %s%s  model %s  api %s  prompts %s (%s)  stages %d%n",
                baseUrl,
                plan.wire().path(),
                TerminalText.oneLine(modelName),
                plan.wire().protocol().name(),
                plan.dataset().typeName(),
                prepared.prompts().get(0).inputSource(),
                plan.stages().size());
    }

    /** Sends the warm-up requests; returns how many were sent (excluded from the first stage). */
    private long warmUp() {
        // Ids no tokenizer vouched for may be outside a small model's vocabulary: one request
        // tells before a whole stage fails with 400s.
        boolean unverifiedIds =
                prepared.tokenIds() && prepared.serverTokenizer() == null && tokenizer == null;
        int warmups = plan.warmupRequests();
        int count = warmups > 0 ? warmups : (unverifiedIds ? 1 : 0);
        if (count == 0) {
            return 0;
        }
        err.printf(
                "warm-up: %d request%s%s%n",
                count,
                count == 1 ? "" : "s",
                warmups > 0 ? "" : " (checks that the server accepts the token ids)");
        return session.warmUp(count, plan.maxConcurrency(), FAILURES);
    }

    /**
     * The replayed trace as profiles name it: its layout, time scale and window, the requests
     * replayed and those left out.
     */
    static String traceDimension(RunPlan plan, TraceFile trace) {
        return plan.dataset().trace().describe(trace.format().wireName())
                + " requests="
                + trace.requests().size()
                + (trace.skipped() > 0 ? " skipped_zero_tokens=" + trace.skipped() : "");
    }

    private ProfileContext context(Instant start) {
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put("api", plan.wire().protocol().name());
        extra.put("dataset", plan.dataset().typeName());
        if (plan.dataset().prefixes() != null) {
            extra.put("prefix_repetition", plan.dataset().prefixes().describe());
        }
        if (prepared.trace() != null) {
            extra.put("trace", traceDimension(plan, prepared.trace().trace()));
        }
        if (plan.dataset().conversation() != null) {
            extra.put("conversation", plan.dataset().conversation().describe());
        }
        if (plan.models() != null) {
            extra.put("model_mix", plan.models().describe());
        }
        extra.put("prompt_format", prepared.tokenIds() ? "token_ids" : "text");
        return new ProfileContext(
                plan.wire().backend(),
                modelName,
                tokenizer != null
                        ? tokenizer.id()
                        : prepared.serverTokenizer() != null
                                ? prepared.serverTokenizer().id()
                                : modelName,
                plan.wire().backend(),
                start,
                flags.output.runName(),
                null,
                1,
                Main.version(),
                extra);
    }

    private ServerMetricsSource openServerMetrics() throws IOException {
        try {
            return flags.serverMetrics.open(
                    baseUrl,
                    plan.wire().backend(),
                    plan.tls(),
                    warning -> {
                        err.println(TerminalText.oneLine(warning));
                        err.flush();
                    });
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
    }

    /** How the command line words what stops the set-up: by the flag to change. */
    private static final RunSession.Failures FAILURES =
            new RunSession.Failures(
                    // The server is down or unreachable: a failure of the target (exit 1), not of
                    // the flags; --model would not help.
                    IllegalStateException::new,
                    message -> new Main.UsageError("--base-url: " + message),
                    message ->
                            new Main.UsageError(
                                    "--model: not given, and "
                                            + message
                                            + "; give --model NAME (the model name the server"
                                            + " serves)"),
                    error ->
                            new Main.JvmFailure(
                                    JvmErrors.describe(error)
                                            + " during the warm-up requests; no stage ran"),
                    Main.UsageError::new);
}
