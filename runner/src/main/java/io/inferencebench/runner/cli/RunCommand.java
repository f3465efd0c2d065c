package io.inferencebench.runner.cli;

import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.backend.RequestFields;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.engine.HeapHeadroom;
import io.inferencebench.runner.engine.JitPlan;
import io.inferencebench.runner.engine.JvmErrors;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.SelfWarmup;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.VocabularyCheck;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.metrics.ServerMetricsFlags;
import io.inferencebench.runner.metrics.ServerMetricsLine;
import io.inferencebench.runner.metrics.ServerMetricsSource;
import io.inferencebench.runner.plan.ModelDiscovery;
import io.inferencebench.runner.plan.RunPlan;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code run}: one benchmark (one or more stages) against one server. The flags live in mixins per
 * section of a BenchmarkRun spec ({@link TargetOptions}, {@link WorkloadOptions}, {@link
 * LoadOptions}, {@link SloOptions}) plus {@link OutputOptions}; {@link CommandLinePlan} lays them
 * over {@code --config} and resolves the plan a runner pod would run; this class prepares the
 * prompts and the client, and hands the stages to {@link StageLoop}.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs load stages against a model server and writes one LPG profile per stage.",
            "Flags override the --config file (the target/workload/load/slo sections of a"
                    + " BenchmarkRun).",
            "LoadDelivered (the summary's load column) is judged on what the client controls: the"
                    + " schedule the stage drew (random arrivals draw more or fewer requests than"
                    + " the nominal rate; the drawn column), whether every request due was sent,"
                    + " the achieved rate within 5 % of the drawn schedule's, p99 schedule lag <="
                    + " 100 ms, the runner's CPU and --max-failure-ratio. 'indeterminate': the"
                    + " stage fell short of its drawn schedule by less than 2 ms in all, too short"
                    + " to tell from timer jitter; a longer stage decides it."
        })
public final class RunCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin TargetOptions target = new TargetOptions();

    @Mixin WorkloadOptions workload = new WorkloadOptions();

    @Mixin LoadOptions load = new LoadOptions();

    @Mixin SloOptions slo = new SloOptions();

    @Mixin OutputOptions output = new OutputOptions();

    @Option(
            names = "--config",
            description =
                    "YAML with the target/workload/load/slo sections of a BenchmarkRun spec (or a"
                            + " whole BenchmarkRun).")
    Path config;

    @Mixin ServerMetricsFlags serverMetricsFlags = new ServerMetricsFlags();

    /** What the last {@link #call} produced (for {@code search}, which runs its probes here). */
    private StageLoop.Outcome outcome;

    /** The failure limit the last {@link #call} judged its stages by. */
    private double maxFailureRatio =
            io.inferencebench.crds.v1alpha1.LoadSpec.DEFAULT_MAX_FAILURE_RATIO;

    /**
     * The stages, server reports and profile files of the last run, or {@code null} when it ended
     * before its stages (bad flags, unreachable target).
     */
    StageLoop.Outcome outcome() {
        return outcome;
    }

    /** The failure limit ({@code --max-failure-ratio} or the config's) of the last run. */
    double maxFailureRatio() {
        return maxFailureRatio;
    }

    /** The plan of the parsed flags over {@code --config}, as {@link #call} runs it. */
    public CommandLinePlan resolvePlan(PrintWriter err) throws IOException {
        return CommandLinePlan.resolve(config, target, workload, load, slo, err);
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        output.check();
        try {
            JitPlan.mode();
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
        CommandLinePlan resolved = resolvePlan(err);
        RunPlan plan = resolved.plan();
        String baseUrl = resolved.baseUrl();
        List<String> serverMetricsProblems = serverMetricsFlags.validate(baseUrl);
        if (!serverMetricsProblems.isEmpty()) {
            throw new Main.UsageError(String.join("; ", serverMetricsProblems));
        }
        workload.checkPromptFormat();
        // Before any request is sent: a run whose results cannot be written is not started.
        ResultFiles resultFiles = output.prepareResultFiles();
        Map<String, String> requestHeaders = resolved.requestHeaders();
        HfTokenizer tokenizer = target.loadTokenizer();
        Interrupts interrupts = null;
        try {
            PreparedPrompts prepared;
            try {
                prepared =
                        PreparedPrompts.prepare(
                                plan, baseUrl, requestHeaders, tokenizer, workload, err);
            } catch (OutOfMemoryError e) {
                throw promptsTooLarge(plan);
            }
            List<Prompt> prompts = prepared.prompts();
            boolean tokenIds = prepared.tokenIds();
            ServerTokenizer serverTokenizer = prepared.serverTokenizer();
            Protocol protocol = plan.wire().protocol();
            try (HttpTransport transport =
                            new HttpTransport(
                                    baseUrl,
                                    requestHeaders,
                                    output.eventLoops(),
                                    output.maxConnections(),
                                    plan.requestTimeout(),
                                    plan.tls());
                    LiveMetrics metrics =
                            output.metricsPort() == null
                                    ? null
                                    : LiveMetrics.start(output.metricsPort());
                    ServerMetricsSource serverMetrics = openServerMetrics(baseUrl, plan, err)) {
                if (metrics != null) {
                    err.println("live metrics on http://127.0.0.1:" + metrics.port() + "/metrics");
                }
                if (serverMetrics != null) {
                    err.println("server metrics: " + serverMetrics.describe());
                }
                // From here on Ctrl-C stops the run gracefully: during discovery and the client
                // warm-up as well as in a stage.
                SelfWarmup.Cancel warmupCancel = new SelfWarmup.Cancel();
                AtomicReference<LoadEngine> engineRef = new AtomicReference<>();
                interrupts =
                        Interrupts.install(
                                () -> {
                                    warmupCancel.cancel();
                                    LoadEngine running = engineRef.get();
                                    if (running != null) {
                                        running.cancel();
                                    }
                                    if (serverMetrics != null) {
                                        // A stage that ended may be waiting for its window's
                                        // server metrics (a Prometheus query): not any longer.
                                        serverMetrics.cancel();
                                    }
                                },
                                err);
                String modelName =
                        plan.model() != null ? plan.model() : discoverModel(transport, baseUrl);
                GenerationParams params = plan.generation(modelName);
                Progress progressView =
                        Progress.create(output.progress(), err, plan.stages().size());
                ErrorSampler errors =
                        new ErrorSampler(RequestFields.extensions(plan.wire().api(), params));
                StageObserver observer = StageObservers.of(progressView, metrics, errors);
                LoadEngine engine;
                try {
                    // Encodes every prompt's request once: as much again as the prompts.
                    engine =
                            new LoadEngine(
                                    transport,
                                    prompts,
                                    tokenizer,
                                    plan.engine(params, output.sampleCap()),
                                    observer);
                } catch (OutOfMemoryError e) {
                    throw promptsTooLarge(plan);
                }
                engineRef.set(engine);
                if (warmupCancel.cancelled()) {
                    // Interrupted during discovery or set-up: nothing is sent.
                    engine.cancel();
                }
                HeapHeadroom.apply();
                // Before the warm-up: C2 compiling through the warm-up and then excluded was
                // measured worse (docs/benchmarks.md, "Pinned to one CPU").
                printJitPlan(err);
                if (output.selfWarmup()) {
                    selfWarmup(
                            protocol,
                            params,
                            transport,
                            prompts.get(0).maxTokens(),
                            warmupCancel,
                            err);
                }
                Instant start = Instant.now();
                err.printf(
                        Locale.ROOT,
                        "target %s%s  model %s  api %s  prompts %s (%s)  stages %d%n",
                        baseUrl,
                        plan.wire().path(),
                        TerminalText.oneLine(modelName),
                        protocol.name(),
                        plan.dataset().typeName(),
                        prompts.get(0).inputSource(),
                        plan.stages().size());
                // Ids no tokenizer vouched for may be outside a small model's vocabulary: one
                // request tells before a whole stage fails with 400s.
                boolean unverifiedIds = tokenIds && serverTokenizer == null && tokenizer == null;
                long warmupSent = warmUp(engine, plan, unverifiedIds, prompts, err);
                ProfileContext context =
                        context(
                                plan,
                                protocol,
                                modelName,
                                tokenIds,
                                tokenizer,
                                serverTokenizer,
                                start);
                Slo slo = plan.slo();
                boolean stream = plan.wire().stream();
                if (!stream) {
                    err.println(
                            "note: responses are not streamed (--no-stream or workload.streaming:"
                                    + " false): TTFT, ITL and TPOT are not measured"
                                    + (slo.ttftMs() != null || slo.tpotMs() != null
                                            ? ", so a ttft or tpot SLO is not met"
                                            : ""));
                }
                StageLoop.Outcome outcome =
                        new StageLoop(
                                        engine,
                                        transport,
                                        serverMetrics,
                                        resultFiles,
                                        context,
                                        progressView,
                                        errors,
                                        err)
                                .run(plan.stages(), plan.cooldown(), warmupSent, !stream);
                progressView.close();
                this.outcome = outcome;
                this.maxFailureRatio = plan.maxFailureRatio();
                report(out, outcome, slo, plan.maxFailureRatio(), serverMetrics != null);
                if (outcome.failure() instanceof StageLoop.JvmErrorStop stop) {
                    long written = outcome.files().stream().filter(ResultFiles.Written::ok).count();
                    throw new Main.JvmFailure(
                            JvmErrors.describe(stop.error)
                                    + "; stage "
                                    + stop.stage
                                    + " stopped; finished stages kept ("
                                    + written
                                    + (written == 1 ? " profile" : " profiles")
                                    + " written)");
                }
                if (outcome.failure() != null) {
                    throw outcome.failure();
                }
                if (engine.isCancelled()) {
                    err.printf(
                            "interrupted: %d of %d stage(s) finished%s%n",
                            outcome.results().stream().filter(r -> !r.partial).count(),
                            plan.stages().size(),
                            outcome.results().stream().anyMatch(r -> r.partial)
                                    ? "; the last profile is partial"
                                    : "");
                    err.flush();
                    return Interrupts.EXIT_INTERRUPTED;
                }
                int code =
                        Verdict.of(
                                outcome.results(),
                                slo,
                                plan.maxFailureRatio(),
                                load.failureRatioFromFlag(),
                                err);
                if (outcome.files().stream().anyMatch(f -> !f.allWritten())) {
                    code = Main.EXIT_RESULTS_FAILED;
                }
                return code;
            }
        } finally {
            if (interrupts != null) {
                interrupts.close();
            }
            if (tokenizer != null) {
                tokenizer.close();
            }
        }
    }

    /**
     * The prompts are built before any request (all of them, and each request encoded once): when
     * they do not fit, that is said up front instead of a run that dies of it.
     */
    private static Main.UsageError promptsTooLarge(RunPlan plan) {
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

    private static void report(
            PrintWriter out,
            StageLoop.Outcome outcome,
            Slo slo,
            double maxFailureRatio,
            boolean serverMetrics) {
        Summary.print(out, outcome.results(), slo, maxFailureRatio);
        if (serverMetrics) {
            for (int i = 0; i < outcome.results().size(); i++) {
                out.println(
                        ServerMetricsLine.format(
                                outcome.results().get(i).stageIndex + 1,
                                outcome.serverReports().get(i)));
            }
        }
        for (ResultFiles.Written f : outcome.files()) {
            // File names carry the model id, which the server chose.
            String path = TerminalText.oneLine(f.path().toString());
            if (f.ok()) {
                out.println("profile: " + path);
            } else {
                out.println(
                        "profile NOT written: "
                                + path
                                + " ("
                                + TerminalText.oneLine(f.failure())
                                + ")");
            }
            if (f.report() != null) {
                String report = TerminalText.oneLine(f.report().toString());
                out.println(
                        f.reportFailure() == null
                                ? "benchmark report: " + report
                                : "benchmark report NOT written: "
                                        + report
                                        + " ("
                                        + TerminalText.oneLine(f.reportFailure())
                                        + ")");
            }
        }
        out.flush();
    }

    private static void printJitPlan(PrintWriter err) {
        String change = JitPlan.apply();
        if (change != null) {
            err.println(change);
        }
    }

    private static void selfWarmup(
            Protocol protocol,
            GenerationParams params,
            HttpTransport transport,
            int streamTokens,
            SelfWarmup.Cancel cancel,
            PrintWriter err) {
        long warmStart = System.nanoTime();
        long exchanges;
        try {
            exchanges =
                    SelfWarmup.run(
                            protocol,
                            params,
                            transport,
                            Duration.ofMillis(1500),
                            streamTokens,
                            cancel);
        } catch (VirtualMachineError e) {
            throw new Main.JvmFailure(
                    JvmErrors.describe(e) + " during the client's self warm-up; no stage ran");
        }
        err.printf(
                Locale.ROOT,
                "client warm-up: %d local exchanges in %.1f s (nothing sent to the target)%s%n",
                exchanges,
                (System.nanoTime() - warmStart) / 1e9,
                cancel.cancelled() ? "; stopped by the interrupt" : "");
    }

    /** Sends the warm-up requests; returns how many were sent (excluded from the first stage). */
    private static long warmUp(
            LoadEngine engine,
            RunPlan plan,
            boolean unverifiedIds,
            List<Prompt> prompts,
            PrintWriter err)
            throws Exception {
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
        VocabularyCheck vocabulary = new VocabularyCheck();
        long sent = engine.warmUp(count, plan.maxConcurrency(), vocabulary);
        if (engine.jvmError() != null) {
            throw new Main.JvmFailure(
                    JvmErrors.describe(engine.jvmError())
                            + " during the warm-up requests; no stage ran");
        }
        if (vocabulary.rejection() != null) {
            throw new Main.UsageError(
                    VocabularyCheck.message(vocabulary.rejection(), prompts.get(0).inputSource()));
        }
        return sent;
    }

    private ProfileContext context(
            RunPlan plan,
            Protocol protocol,
            String modelName,
            boolean tokenIds,
            HfTokenizer tokenizer,
            ServerTokenizer serverTokenizer,
            Instant start) {
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put("api", protocol.name());
        extra.put("dataset", plan.dataset().typeName());
        extra.put("prompt_format", tokenIds ? "token_ids" : "text");
        return new ProfileContext(
                plan.wire().backend(),
                modelName,
                tokenizer != null
                        ? tokenizer.id()
                        : serverTokenizer != null ? serverTokenizer.id() : modelName,
                plan.wire().backend(),
                start,
                output.runName(),
                null,
                1,
                Main.version(),
                extra);
    }

    private ServerMetricsSource openServerMetrics(String baseUrl, RunPlan plan, PrintWriter err)
            throws IOException {
        try {
            return serverMetricsFlags.open(
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

    private static String discoverModel(HttpTransport transport, String baseUrl) {
        try {
            return ModelDiscovery.discover(transport, baseUrl);
        } catch (ModelDiscovery.Unreachable e) {
            // The server is down or unreachable: a failure of the target (exit 1), not of the
            // flags; --model would not help.
            throw new IllegalStateException(e.getMessage());
        } catch (ModelDiscovery.Redirected e) {
            throw new Main.UsageError("--base-url: " + e.getMessage());
        } catch (ModelDiscovery.NoModel e) {
            throw new Main.UsageError(
                    "--model: not given, and "
                            + e.getMessage()
                            + "; give --model NAME (the model name the server serves)");
        }
    }
}
