package io.inferencebench.runner.cli;

import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.DistributionType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.SpecValidation;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.TokenDistribution;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.LengthDistribution;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.RandomDataset;
import io.inferencebench.runner.dataset.ServerRandomPrompts;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.engine.ArrivalKind;
import io.inferencebench.runner.engine.HeapHeadroom;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.SelfWarmup;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.engine.VocabularyCheck;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.http.TlsOptions;
import io.inferencebench.runner.metrics.ServerMetricsFlags;
import io.inferencebench.runner.metrics.ServerMetricsLine;
import io.inferencebench.runner.metrics.ServerMetricsSource;
import io.inferencebench.runner.plan.ModelDiscovery;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code run}: one benchmark (one or more stages) against one server. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs load stages against a model server and writes one LPG profile per stage.",
            "Flags override the --config file (the workload/load/slo sections of a BenchmarkRun)."
        })
public final class RunCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    // ---- target ----
    @Option(
            names = "--base-url",
            description = "Server base URL (default ${DEFAULT-VALUE}).",
            defaultValue = "http://127.0.0.1:8000")
    String baseUrl;

    @Option(
            names = "--endpoint",
            description =
                    "Request path; default from the API (/v1/completions, /v1/chat/completions, /generate_stream).")
    String endpoint;

    @Option(
            names = "--backend",
            description =
                    "vllm, sglang, tgi, jetstream, triton, openai, openai-chat, lmdeploy, trtllm (default ${DEFAULT-VALUE}).",
            defaultValue = "vllm")
    String backend;

    @Option(
            names = "--api",
            description =
                    "completions, chat or generate (TGI native); default from backend/endpoint.")
    String api;

    @Option(
            names = "--model",
            description = "Model name sent in requests; discovered from /v1/models when empty.")
    String model;

    @Option(
            names = "--tokenizer",
            description =
                    "Path to a tokenizer.json (or its directory): exact prompt lengths and output counts when the server reports no usage.")
    Path tokenizer;

    @Option(names = "--header", description = "Extra request header K=V (repeatable).")
    List<String> headers = new ArrayList<>();

    @Option(
            names = "--api-key-file",
            description = "File holding an API key, sent as 'Authorization: Bearer'.")
    Path apiKeyFile;

    @Option(
            names = "--ca-cert",
            description =
                    "PEM file of the CA certificates an https target's certificate must chain to"
                            + " (instead of the JVM's trust store).")
    Path caCert;

    @Option(
            names = "--insecure-skip-tls-verify",
            description =
                    "Do not check an https target's certificate or host name (insecure: the API"
                            + " key can be read by whoever answers).")
    boolean insecureSkipTlsVerify;

    @Option(
            names = "--tls-server-name",
            description =
                    "Name the https target's certificate must carry (and sent as SNI), when it"
                            + " differs from the --base-url host.")
    String tlsServerName;

    // ---- workload ----
    @Option(names = "--dataset-name", description = "random, sharegpt or jsonl (default random).")
    String datasetName;

    @Option(names = "--dataset-path", description = "ShareGPT JSON or JSONL file.")
    Path datasetPath;

    @Option(
            names = "--random-input-len",
            description = "Input tokens per random prompt (default 1024).")
    Integer randomInputLen;

    @Option(names = "--random-output-len", description = "Output tokens per request (default 128).")
    Integer randomOutputLen;

    @Option(
            names = "--random-range-ratio",
            description = "Uniform lengths in [len*(1-r), len*(1+r)] (default 0 = fixed).")
    Double randomRangeRatio;

    @Option(
            names = "--random-input-stddev",
            description = "Normal input lengths with this standard deviation.")
    Double randomInputStddev;

    @Option(
            names = "--random-output-stddev",
            description = "Normal output lengths with this standard deviation.")
    Double randomOutputStddev;

    @Option(
            names = "--min-input-len",
            description = "Drop dataset prompts shorter than this (tokens).")
    Integer minInputLen;

    @Option(
            names = "--max-input-len",
            description = "Drop dataset prompts longer than this (tokens).")
    Integer maxInputLen;

    @Option(
            names = "--min-output-len",
            description = "Drop dataset prompts whose reply is shorter (tokens).")
    Integer minOutputLen;

    @Option(
            names = "--max-output-len",
            description = "Drop dataset prompts whose reply is longer (tokens).")
    Integer maxOutputLen;

    @Option(
            names = "--output-len",
            description = "For sharegpt/jsonl: ask every request for this many output tokens.")
    Integer outputLen;

    @Option(
            names = "--prompt-format",
            description =
                    "auto, text or token-ids (auto: with random prompts, no --tokenizer and a vllm/sglang server whose /tokenize answers, token ids from that tokenizer for the completions API; else text).",
            defaultValue = "auto")
    String promptFormat;

    @Option(names = "--no-stream", description = "Ask for complete (non-streamed) responses.")
    boolean noStream;

    @Option(
            names = "--ignore-eos",
            arity = "0..1",
            fallbackValue = "true",
            description =
                    "Send ignore_eos (default true, as workload.ignoreEos in a BenchmarkRun).")
    Boolean ignoreEos;

    @Option(names = "--temperature", description = "Sampling temperature (default 0).")
    Double temperature;

    @Option(names = "--top-p", description = "Nucleus sampling top_p.")
    Double topP;

    @Option(names = "--top-k", description = "top_k sampling.")
    Integer topK;

    // ---- load ----
    @Option(
            names = "--request-rate",
            split = ",",
            description = "Requests/s; a comma list is a sweep, 'inf' sends all at once.")
    List<String> requestRates;

    @Option(
            names = "--concurrency",
            split = ",",
            description = "Closed-loop stages: requests kept in flight (comma list = sweep).")
    List<Integer> concurrencies;

    @Option(
            names = "--num-prompts",
            description = "Requests per stage (default 1000 unless --duration).")
    Integer numPrompts;

    @Option(
            names = "--duration",
            description = "Stage length, e.g. 30s, 2m (with --num-prompts: whichever ends first).")
    String duration;

    @Option(
            names = "--arrival",
            description =
                    "poisson, gamma or constant (default poisson; gamma when --burstiness != 1).")
    String arrival;

    @Option(
            names = "--burstiness",
            description = "Gamma shape: < 1 burstier, 1 = Poisson (default 1).")
    Double burstiness;

    @Option(
            names = "--max-concurrency",
            description = "Cap on requests in flight; waiting shows as slot wait and schedule lag.")
    Integer maxConcurrency;

    @Option(
            names = "--num-warmups",
            description =
                    "Warm-up requests before the first stage, excluded from results (default 0).")
    Integer numWarmups;

    @Option(
            names = "--cooldown",
            description = "Pause between stages (default 5s, as load.cooldown in a BenchmarkRun).")
    String cooldown;

    @Option(
            names = "--request-timeout",
            description = "Per-request timeout, send to last byte (default 5m).")
    String requestTimeout;

    @Option(
            names = "--goodput",
            arity = "1..*",
            description = "SLOs for goodput, e.g. ttft:500 tpot:50 e2el:10000 (ms).")
    List<String> goodput;

    @Option(
            names = "--slo-min-attainment",
            description =
                    "Exit non-zero when a stage's SLO attainment is below this (default 0.95).")
    Double sloMinAttainment;

    @Option(
            names = "--max-failure-ratio",
            description =
                    "Exit 1 when more than this share of a stage's finished requests failed"
                            + " (0-1, default 0.1; load.maxFailureRatio in --config).")
    Double maxFailureRatio;

    @Option(names = "--seed", description = "Seed for prompts and arrivals (default 0).")
    Long seed;

    // ---- output and engine ----
    @Option(
            names = "--result-dir",
            description = "Directory for LPG profiles (default ${DEFAULT-VALUE}).",
            defaultValue = "results")
    Path resultDir;

    @Option(names = "--run-name", description = "Recorded in the profiles' dimensions.")
    String runName;

    @Option(
            names = "--metrics-port",
            description = "Serve live Prometheus metrics on this port (0 = any free port).")
    Integer metricsPort;

    @Option(
            names = "--sample-cap",
            description =
                    "Exact samples kept per metric before switching to histograms (default ${DEFAULT-VALUE}).",
            defaultValue = "100000")
    int sampleCap;

    @Option(names = "--event-loops", description = "Network threads (default: min(2, cores)).")
    Integer eventLoops;

    @Option(
            names = "--max-connections",
            description = "Connection pool size per network thread (default ${DEFAULT-VALUE}).",
            defaultValue = "20000")
    int maxConnections;

    @Option(
            names = "--progress",
            description = "auto, bar, lines or none (default ${DEFAULT-VALUE}).",
            defaultValue = "auto")
    String progress;

    @Option(
            names = "--no-self-warmup",
            description =
                    "Skip warming the client against a local throw-away server before the first"
                            + " stage (about a second; nothing is sent to the target).")
    boolean noSelfWarmup;

    @Option(
            names = "--config",
            description = "YAML with the workload/load/slo sections of a BenchmarkRun spec.")
    Path config;

    // ---- server metrics ----
    @Mixin ServerMetricsFlags serverMetricsFlags = new ServerMetricsFlags();

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ConfigFile file = config == null ? new ConfigFile() : ConfigFile.read(config);
        WorkloadSpec workload = file.workload == null ? new WorkloadSpec() : file.workload;
        LoadSpec load = file.load == null ? new LoadSpec() : file.load;
        DatasetSpec dataset =
                workload.getDataset() == null ? new DatasetSpec() : workload.getDataset();

        Progress.mode(progress);
        java.net.URI target = BaseUrl.check("--base-url", baseUrl);
        TlsOptions tls = tlsOptions(target);
        if (config != null) {
            List<String> problems = configProblems(file);
            if (!problems.isEmpty()) {
                throw new Main.UsageError(
                        "--config " + config + ": " + String.join("; ", problems));
            }
        }
        if (sampleCap < 0) {
            throw new Main.UsageError("--sample-cap: must be >= 0, got " + sampleCap);
        }
        if (maxConnections < 1) {
            throw new Main.UsageError("--max-connections: must be >= 1, got " + maxConnections);
        }
        List<String> serverMetricsProblems = serverMetricsFlags.validate(baseUrl);
        if (!serverMetricsProblems.isEmpty()) {
            throw new Main.UsageError(String.join("; ", serverMetricsProblems));
        }
        boolean stream = !noStream && !Boolean.FALSE.equals(workload.getStreaming());
        BackendChoice choice = BackendChoice.resolve(backend, api, endpoint, stream);
        Duration timeout =
                duration(
                        "--request-timeout",
                        "load.requestTimeout",
                        requestTimeout,
                        load.getRequestTimeout(),
                        "5m");
        if (timeout.isZero()) {
            throw new Main.UsageError(
                    (requestTimeout != null ? "--request-timeout" : "load.requestTimeout")
                            + ": must be greater than zero, e.g. 30s or 5m");
        }
        Duration cooldownValue =
                duration(
                        "--cooldown",
                        "load.cooldown",
                        cooldown,
                        load.getCooldown(),
                        new LoadSpec().getCooldown());
        Slo slo = slo(file.slo);
        long seedValue = seed != null ? seed : (dataset.getSeed() != null ? dataset.getSeed() : 0L);
        List<StagePlan> plans = stages(load);
        int warmups =
                numWarmups != null
                        ? numWarmups
                        : (load.getWarmupRequests() == null ? 0 : load.getWarmupRequests());
        if (warmups < 0) {
            throw new Main.UsageError("--num-warmups: must be >= 0, got " + warmups);
        }

        double failureRatioLimit =
                maxFailureRatio != null
                        ? maxFailureRatio
                        : (load.getMaxFailureRatio() != null
                                ? load.getMaxFailureRatio()
                                : LoadSpec.DEFAULT_MAX_FAILURE_RATIO);
        if (!(failureRatioLimit >= 0 && failureRatioLimit <= 1)) {
            throw new Main.UsageError(
                    (maxFailureRatio != null ? "--max-failure-ratio" : "load.maxFailureRatio")
                            + ": must be within [0, 1], got "
                            + failureRatioLimit);
        }
        // Before any request is sent: a run whose results cannot be written is not started.
        ResultFiles resultFiles = ResultFiles.prepare(resultDir);
        Map<String, String> requestHeaders = headers();
        HfTokenizer tokenizerValue = loadTokenizer();
        String datasetType =
                datasetName != null
                        ? datasetName.toLowerCase(Locale.ROOT)
                        : dataset.getType().name().toLowerCase(Locale.ROOT);
        boolean randomDataset = datasetType.equals("random");
        if (datasetPath != null && randomDataset) {
            throw new Main.UsageError(
                    "--dataset-path: needs --dataset-name sharegpt or jsonl (with the random"
                            + " dataset the file would be ignored)");
        }
        // The spec's default, whichever sections --config has (it used to depend on them).
        boolean ignoreEosValue =
                ignoreEos != null ? ignoreEos : !Boolean.FALSE.equals(workload.getIgnoreEos());
        ServerTokenizer serverTokenizer =
                randomDataset && tokenizerValue == null
                        ? serverTokenizer(choice.backend(), requestHeaders, err)
                        : null;
        boolean tokenIds = tokenIdPrompts(choice, randomDataset, tokenizerValue, serverTokenizer);
        int datasetSize = datasetSize(plans);
        long promptsStart = System.nanoTime();
        List<Prompt> prompts =
                serverTokenizer != null
                        ? serverPrompts(dataset, datasetSize, tokenIds, serverTokenizer, seedValue)
                        : loadPrompts(
                                datasetType,
                                dataset,
                                datasetSize,
                                tokenIds,
                                tokenizerValue,
                                seedValue);
        if (serverTokenizer != null) {
            err.printf(
                    Locale.ROOT,
                    "prompts: %d built with the server's tokenizer (%d calls to /tokenize and"
                            + " /detokenize, %.1f s)%n",
                    prompts.size(),
                    serverTokenizer.calls(),
                    (System.nanoTime() - promptsStart) / 1e9);
        }

        int loops =
                eventLoops != null
                        ? eventLoops
                        : Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
        if (loops < 1) {
            throw new Main.UsageError("--event-loops: must be >= 1, got " + loops);
        }
        Interrupts interrupts = null;
        try (HttpTransport transport =
                        new HttpTransport(
                                baseUrl, requestHeaders, loops, maxConnections, timeout, tls);
                LiveMetrics metrics = metricsPort == null ? null : LiveMetrics.start(metricsPort);
                ServerMetricsSource serverMetrics = openServerMetrics(choice.backend(), err)) {
            if (metrics != null) {
                err.println("live metrics on http://127.0.0.1:" + metrics.port() + "/metrics");
            }
            if (serverMetrics != null) {
                err.println("server metrics: " + serverMetrics.describe());
            }
            // From here on Ctrl-C stops the run gracefully: during discovery and the client
            // warm-up as well as in a stage.
            SelfWarmup.Cancel warmupCancel = new SelfWarmup.Cancel();
            java.util.concurrent.atomic.AtomicReference<LoadEngine> engineRef =
                    new java.util.concurrent.atomic.AtomicReference<>();
            interrupts =
                    Interrupts.install(
                            () -> {
                                warmupCancel.cancel();
                                LoadEngine running = engineRef.get();
                                if (running != null) {
                                    running.cancel();
                                }
                            },
                            err);
            String modelName = model != null && !model.isBlank() ? model : discoverModel(transport);
            Double temp =
                    temperature != null
                            ? temperature
                            : (workload.getSampling() != null
                                    ? workload.getSampling().getTemperature()
                                    : Double.valueOf(0.0));
            Double topPValue =
                    topP != null
                            ? topP
                            : (workload.getSampling() != null
                                    ? workload.getSampling().getTopP()
                                    : null);
            Integer topKValue =
                    topK != null
                            ? topK
                            : (workload.getSampling() != null
                                    ? workload.getSampling().getTopK()
                                    : null);
            GenerationParams params =
                    new GenerationParams(
                            modelName, stream, ignoreEosValue, temp, topPValue, topKValue, null);
            Progress progressView = Progress.create(progress, err, plans.size());
            ErrorSampler errors = new ErrorSampler();
            StageObserver observer = StageObservers.of(progressView, metrics, errors);
            LoadEngine engine =
                    new LoadEngine(
                            transport,
                            choice.protocol(),
                            params,
                            choice.path(),
                            prompts,
                            tokenizerValue,
                            slo,
                            sampleCap,
                            seedValue,
                            timeout,
                            observer);
            engineRef.set(engine);
            if (warmupCancel.cancelled()) {
                // Interrupted during discovery or set-up: nothing is sent.
                engine.cancel();
            }
            HeapHeadroom.apply();
            if (!noSelfWarmup) {
                long warmStart = System.nanoTime();
                long exchanges =
                        SelfWarmup.run(
                                choice.protocol(),
                                params,
                                transport,
                                Duration.ofMillis(1500),
                                warmupCancel);
                err.printf(
                        Locale.ROOT,
                        "client warm-up: %d local exchanges in %.1f s (nothing sent to the"
                                + " target)%s%n",
                        exchanges,
                        (System.nanoTime() - warmStart) / 1e9,
                        warmupCancel.cancelled() ? "; stopped by the interrupt" : "");
            }
            Instant start = Instant.now();
            err.printf(
                    Locale.ROOT,
                    "target %s%s  model %s  api %s  prompts %s (%s)  stages %d%n",
                    baseUrl,
                    choice.path(),
                    modelName,
                    choice.protocol().name(),
                    datasetType,
                    prompts.get(0).inputSource(),
                    plans.size());
            long warmupSent = 0;
            // Ids no tokenizer vouched for may be outside a small model's vocabulary: one request
            // tells before a whole stage fails with 400s.
            boolean unverifiedIds = tokenIds && serverTokenizer == null && tokenizerValue == null;
            int warmupCount = warmups > 0 ? warmups : (unverifiedIds ? 1 : 0);
            if (warmupCount > 0) {
                err.printf(
                        "warm-up: %d request%s%s%n",
                        warmupCount,
                        warmupCount == 1 ? "" : "s",
                        warmups > 0 ? "" : " (checks that the server accepts the token ids)");
                VocabularyCheck vocabulary = new VocabularyCheck();
                warmupSent =
                        engine.warmUp(
                                warmupCount,
                                maxConcurrency != null ? maxConcurrency : load.getMaxConcurrency(),
                                vocabulary);
                if (vocabulary.rejection() != null) {
                    throw new Main.UsageError(
                            VocabularyCheck.message(
                                    vocabulary.rejection(), prompts.get(0).inputSource()));
                }
            }
            Map<String, String> extra = new LinkedHashMap<>();
            extra.put("api", choice.protocol().name());
            extra.put("dataset", datasetType);
            extra.put("prompt_format", tokenIds ? "token_ids" : "text");
            ProfileContext context =
                    new ProfileContext(
                            choice.backend(),
                            modelName,
                            tokenizerValue != null
                                    ? tokenizerValue.id()
                                    : serverTokenizer != null ? serverTokenizer.id() : modelName,
                            choice.backend(),
                            start,
                            runName,
                            null,
                            1,
                            Main.version(),
                            extra);
            List<StageResult> results = new ArrayList<>();
            List<ResultFiles.Written> files = new ArrayList<>();
            List<ServerMetricsReport> serverReports = new ArrayList<>();
            boolean nonStreamedWarned = false;
            if (!stream) {
                err.println(
                        "note: responses are not streamed (--no-stream or workload.streaming:"
                                + " false): TTFT, ITL and TPOT are not measured"
                                + (slo.ttftMs() != null || slo.tpotMs() != null
                                        ? ", so a ttft or tpot SLO is not met"
                                        : ""));
                nonStreamedWarned = true;
            }
            RuntimeException stageFailure = null;
            try {
                for (int i = 0; i < plans.size() && !engine.isCancelled(); i++) {
                    if (i > 0 && !cooldownValue.isZero()) {
                        sleepUnlessCancelled(engine, cooldownValue);
                        if (engine.isCancelled()) {
                            break;
                        }
                    }
                    if (serverMetrics != null) {
                        serverMetrics.stageStarting();
                    }
                    StageResult result = engine.runStage(plans.get(i));
                    if (result.partial && result.sent == 0) {
                        // Cancelled before its first request: nothing to report.
                        if (serverMetrics != null) {
                            serverMetrics.stageFinished();
                        }
                        break;
                    }
                    ServerMetricsReport serverReport =
                            serverMetrics == null ? null : serverMetrics.stageFinished();
                    if (i == 0) {
                        result.warmupExcluded = warmupSent;
                    }
                    if (result.nonStreamedRequests > 0 && !nonStreamedWarned) {
                        err.printf(
                                Locale.ROOT,
                                "warning: stage %d: %d of %d successful responses were not streamed"
                                        + " (the server ignored \"stream\": true?); they have no"
                                        + " TTFT, ITL or TPOT, are left out of those statistics"
                                        + " (non_streamed_requests in the profile) and do not meet"
                                        + " a ttft or tpot SLO%n",
                                result.stageIndex + 1,
                                result.nonStreamedRequests,
                                result.completed);
                        nonStreamedWarned = true;
                    }
                    results.add(result);
                    serverReports.add(serverReport);
                    ResultFiles.Written written =
                            resultFiles.write(
                                    result,
                                    context,
                                    serverReport,
                                    reason -> {
                                        err.printf(
                                                "warning: stage %d: profile write failed (%s);"
                                                        + " closing idle connections and retrying"
                                                        + " once%n",
                                                result.stageIndex + 1, reason);
                                        transport.closeIdleConnections();
                                    });
                    files.add(written);
                    if (!written.ok()) {
                        err.printf(
                                "error: stage %d: profile not written to %s: %s (retried once; the"
                                        + " stage's figures are kept for the summary, the sweep goes"
                                        + " on)%n",
                                result.stageIndex + 1, written.path(), written.failure());
                        err.flush();
                    }
                    progressView.stageDone(plans.get(i), result, errors.take());
                }
            } catch (RuntimeException e) {
                // The stages that finished are still summarised before the failure is reported.
                stageFailure = e;
            }
            progressView.close();
            Summary.print(out, results, slo, failureRatioLimit);
            if (serverMetrics != null) {
                for (int i = 0; i < results.size(); i++) {
                    out.println(
                            ServerMetricsLine.format(
                                    results.get(i).stageIndex + 1, serverReports.get(i)));
                }
            }
            for (ResultFiles.Written f : files) {
                if (f.ok()) {
                    out.println("profile: " + f.path());
                } else {
                    out.println("profile NOT written: " + f.path() + " (" + f.failure() + ")");
                }
            }
            out.flush();
            if (stageFailure != null) {
                throw stageFailure;
            }
            if (engine.isCancelled()) {
                err.printf(
                        "interrupted: %d of %d stage(s) finished%s%n",
                        results.stream().filter(r -> !r.partial).count(),
                        plans.size(),
                        results.stream().anyMatch(r -> r.partial)
                                ? "; the last profile is partial"
                                : "");
                err.flush();
                return Interrupts.EXIT_INTERRUPTED;
            }
            int code = verdict(results, slo, failureRatioLimit, maxFailureRatio != null, err);
            if (files.stream().anyMatch(f -> !f.ok())) {
                code = Main.EXIT_RESULTS_FAILED;
            }
            return code;
        } finally {
            if (interrupts != null) {
                interrupts.close();
            }
            if (tokenizerValue != null) {
                tokenizerValue.close();
            }
        }
    }

    private static void sleepUnlessCancelled(LoadEngine engine, Duration pause)
            throws InterruptedException {
        long end = System.nanoTime() + pause.toNanos();
        long left;
        while (!engine.isCancelled() && (left = end - System.nanoTime()) > 0) {
            Thread.sleep(Math.min(50, Math.max(1, left / 1_000_000)));
        }
    }

    private int verdict(
            List<StageResult> results,
            Slo slo,
            double failureRatioLimit,
            boolean limitFromFlag,
            PrintWriter err) {
        int code = 0;
        for (StageResult r : results) {
            if (r.completed == 0) {
                err.printf(
                        "stage %d: no successful request%s%n",
                        r.stageIndex + 1, r.failed > 0 ? " (" + r.failureClassesText() + ")" : "");
                code = Main.EXIT_RESULTS_FAILED;
                continue;
            }
            if (r.failureRatio() > failureRatioLimit) {
                err.printf(
                        Locale.ROOT,
                        "stage %d: %.1f %% of requests failed (%s), above %s %.2f: the stage did"
                                + " not deliver its load%n",
                        r.stageIndex + 1,
                        100 * r.failureRatio(),
                        r.failureClassesText(),
                        limitFromFlag
                                ? "--max-failure-ratio"
                                : "--max-failure-ratio (load.maxFailureRatio)",
                        failureRatioLimit);
                code = Main.EXIT_RESULTS_FAILED;
            }
            if (slo.configured()) {
                long attempted = r.completed + r.failed;
                double attainment = attempted == 0 ? 0 : (double) r.goodputRequests / attempted;
                if (attainment < slo.minAttainment()) {
                    err.printf(
                            Locale.ROOT,
                            "stage %d: SLO missed: %.1f %% of requests met every SLO, %.1f %% required%n",
                            r.stageIndex + 1,
                            100 * attainment,
                            100 * slo.minAttainment());
                    code = Main.EXIT_RESULTS_FAILED;
                }
            }
        }
        return code;
    }

    private ServerMetricsSource openServerMetrics(String backendName, PrintWriter err)
            throws IOException {
        try {
            return serverMetricsFlags.open(
                    baseUrl,
                    backendName,
                    warning -> {
                        err.println(warning);
                        err.flush();
                    });
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
    }

    // ---- resolution of flags and config ----

    private TlsOptions tlsOptions(java.net.URI target) {
        boolean https = "https".equalsIgnoreCase(target.getScheme());
        if (!https && (caCert != null || insecureSkipTlsVerify || tlsServerName != null)) {
            throw new Main.UsageError(
                    (caCert != null
                                    ? "--ca-cert"
                                    : insecureSkipTlsVerify
                                            ? "--insecure-skip-tls-verify"
                                            : "--tls-server-name")
                            + ": applies only to an https:// --base-url");
        }
        if (insecureSkipTlsVerify && caCert != null) {
            throw new Main.UsageError(
                    "--insecure-skip-tls-verify: cannot be combined with --ca-cert (which checks"
                            + " the certificate)");
        }
        if (tlsServerName != null && tlsServerName.isBlank()) {
            throw new Main.UsageError("--tls-server-name: must not be empty");
        }
        TlsOptions options = new TlsOptions(caCert, insecureSkipTlsVerify, tlsServerName);
        try {
            options.check();
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError("--ca-cert: " + e.getMessage());
        }
        if (https && insecureSkipTlsVerify) {
            PrintWriter err = spec.commandLine().getErr();
            err.println(
                    "WARNING: --insecure-skip-tls-verify: the certificate of "
                            + target.getHost()
                            + " is NOT checked; whoever answers there receives the requests"
                            + (apiKeyFile != null ? " and the API key" : "")
                            + ". Use --ca-cert FILE instead.");
            err.flush();
        }
        return options;
    }

    /**
     * The rules a BenchmarkRun's workload and load must follow ({@link SpecValidation}), in the
     * YAML's field names; rules about what the command line supplies by flags are left to those.
     */
    private List<String> configProblems(ConfigFile file) {
        List<String> problems = new ArrayList<>();
        if (file.workload != null) {
            for (String p : SpecValidation.validateWorkload(file.workload, "workload")) {
                boolean fromFlags =
                        (p.startsWith("workload.dataset.source: is required")
                                        && datasetPath != null)
                                || p.startsWith("workload.tokenizer");
                if (!fromFlags) {
                    problems.add(p);
                }
            }
        }
        if (file.load != null) {
            boolean stagesGiven =
                    file.load.getStages() != null || file.load.getRequestRates() != null;
            for (String p : SpecValidation.validateLoad(file.load, "load")) {
                boolean fromFlags =
                        (!stagesGiven
                                        && p.startsWith(
                                                "load: exactly one of stages or requestRates"))
                                || ((numPrompts != null || duration != null)
                                        && p.startsWith("load.requestRates: needs numPrompts"));
                if (!fromFlags) {
                    problems.add(p);
                }
            }
        }
        return problems;
    }

    private static Duration duration(
            String flag, String fromFlag, String fromConfig, String fallback) {
        return duration(flag, flag, fromFlag, fromConfig, fallback);
    }

    /**
     * A duration from the flag, else the config field, else the fallback; errors name the source.
     */
    private static Duration duration(
            String flag, String field, String fromFlag, String fromConfig, String fallback) {
        String text = fromFlag != null ? fromFlag : (fromConfig != null ? fromConfig : fallback);
        if (fromFlag == null && fromConfig != null) {
            flag = field;
        }
        try {
            if (text.equals("0")) {
                return Duration.ZERO;
            }
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(
                    flag + ": '" + text + "' is not a duration; use e.g. 500ms, 30s, 5m, 1h30m");
        }
    }

    private Slo slo(SloSpec fromConfig) {
        Double ttft = null;
        Double tpot = null;
        Double e2el = null;
        double min = sloMinAttainment != null ? sloMinAttainment : 0.95;
        if (fromConfig != null) {
            ttft = fromConfig.getTtft() == null ? null : millis("slo.ttft", fromConfig.getTtft());
            tpot = fromConfig.getTpot() == null ? null : millis("slo.tpot", fromConfig.getTpot());
            e2el =
                    fromConfig.getE2eLatency() == null
                            ? null
                            : millis("slo.e2eLatency", fromConfig.getE2eLatency());
            if (sloMinAttainment == null && fromConfig.getMinAttainment() != null) {
                min = fromConfig.getMinAttainment();
            }
        }
        if (goodput != null) {
            ttft = null;
            tpot = null;
            e2el = null;
            for (String item : goodput) {
                String[] kv = item.split(":", 2);
                double value;
                try {
                    value = kv.length == 2 ? Double.parseDouble(kv[1]) : Double.NaN;
                } catch (NumberFormatException e) {
                    value = Double.NaN;
                }
                if (kv.length != 2 || !(value > 0) || Double.isInfinite(value)) {
                    throw new Main.UsageError(
                            "--goodput: '"
                                    + item
                                    + "' must be NAME:MILLISECONDS with NAME one of ttft, tpot, e2el and a positive number");
                }
                switch (kv[0].toLowerCase(Locale.ROOT)) {
                    case "ttft" -> ttft = value;
                    case "tpot" -> tpot = value;
                    case "e2el" -> e2el = value;
                    default ->
                            throw new Main.UsageError(
                                    "--goodput: unknown SLO '"
                                            + kv[0]
                                            + "'; allowed: ttft, tpot, e2el");
                }
            }
        }
        if (!(min >= 0 && min <= 1)) {
            throw new Main.UsageError("--slo-min-attainment: must be within [0, 1], got " + min);
        }
        return new Slo(ttft, tpot, e2el, min);
    }

    private static double millis(String field, String text) {
        try {
            return Durations.parse(text).toNanos() / 1e6;
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(
                    field + ": '" + text + "' is not a duration; use e.g. 500ms, 30s, 5m");
        }
    }

    private List<StagePlan> stages(LoadSpec load) {
        ArrivalKind arrivalKind;
        double burst =
                burstiness != null
                        ? burstiness
                        : (load.getBurstiness() == null ? 1.0 : load.getBurstiness());
        if (!(burst > 0) || Double.isInfinite(burst)) {
            throw new Main.UsageError("--burstiness: must be a positive number, got " + burst);
        }
        try {
            if (arrival != null) {
                arrivalKind = ArrivalKind.parse(arrival);
            } else if (burstiness != null && burst != 1.0) {
                arrivalKind = ArrivalKind.GAMMA;
            } else {
                arrivalKind =
                        load.getArrival() == null
                                ? ArrivalKind.POISSON
                                : ArrivalKind.parse(load.getArrival().wireName());
            }
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError("--arrival: " + e.getMessage());
        }
        if (burst != 1.0 && arrivalKind != ArrivalKind.GAMMA) {
            throw new Main.UsageError("--burstiness: a value other than 1 needs --arrival gamma");
        }
        if (numPrompts != null && numPrompts < 1) {
            throw new Main.UsageError("--num-prompts: must be >= 1, got " + numPrompts);
        }
        Integer cap = maxConcurrency != null ? maxConcurrency : load.getMaxConcurrency();
        if (cap != null && cap < 1) {
            throw new Main.UsageError("--max-concurrency: must be >= 1, got " + cap);
        }
        Duration stageDuration =
                duration == null ? null : duration("--duration", duration, null, null);
        if (stageDuration != null && stageDuration.isZero()) {
            throw new Main.UsageError("--duration: must be greater than zero");
        }
        List<StagePlan> plans = new ArrayList<>();
        boolean fromFlags = requestRates != null || concurrencies != null;
        if (fromFlags || (load.getStages() == null && load.getRequestRates() == null)) {
            Integer n = numPrompts != null ? numPrompts : load.getNumPrompts();
            Duration d =
                    stageDuration != null
                            ? stageDuration
                            : (load.getDuration() == null
                                    ? null
                                    : duration("load.duration", load.getDuration(), null, null));
            long prompts = n != null ? n : (d == null ? 1000 : 0);
            List<String> rates = requestRates;
            if (rates == null && concurrencies == null) {
                rates =
                        load.getRequestRates() == null
                                ? List.of("inf")
                                : load.getRequestRates().stream().map(String::valueOf).toList();
            }
            if (rates != null) {
                for (String text : rates) {
                    double rate;
                    try {
                        rate = RequestRate.parse(text);
                    } catch (NumberFormatException e) {
                        throw new Main.UsageError(
                                "--request-rate: '" + text + "' is not a number or 'inf'");
                    }
                    if (!(rate > 0)) {
                        throw new Main.UsageError(
                                "--request-rate: must be > 0 or 'inf', got " + text);
                    }
                    plans.add(
                            plan(
                                    plans.size(),
                                    rate,
                                    null,
                                    prompts,
                                    d,
                                    cap,
                                    arrivalKind,
                                    burst,
                                    "--request-rate"));
                }
            }
            if (concurrencies != null) {
                for (int c : concurrencies) {
                    if (c < 1) {
                        throw new Main.UsageError("--concurrency: must be >= 1, got " + c);
                    }
                    plans.add(
                            plan(
                                    plans.size(),
                                    Double.POSITIVE_INFINITY,
                                    c,
                                    prompts,
                                    d,
                                    null,
                                    arrivalKind,
                                    burst,
                                    "--concurrency"));
                }
            }
        } else if (load.getRequestRates() != null) {
            Integer n = numPrompts != null ? numPrompts : load.getNumPrompts();
            Duration d =
                    stageDuration != null
                            ? stageDuration
                            : (load.getDuration() == null
                                    ? null
                                    : duration("load.duration", load.getDuration(), null, null));
            for (Double rate : load.getRequestRates()) {
                plans.add(
                        plan(
                                plans.size(),
                                rate,
                                null,
                                n == null ? 0 : n,
                                d,
                                cap,
                                arrivalKind,
                                burst,
                                "load.requestRates"));
            }
        } else {
            for (StageSpec s : load.getStages()) {
                Duration d =
                        s.getDuration() == null
                                ? null
                                : duration(
                                        "load.stages[" + plans.size() + "].duration",
                                        s.getDuration(),
                                        null,
                                        null);
                long n = s.getNumPrompts() == null ? 0 : s.getNumPrompts();
                plans.add(
                        plan(
                                plans.size(),
                                s.getRequestRate() == null
                                        ? Double.POSITIVE_INFINITY
                                        : s.getRequestRate(),
                                s.getConcurrency(),
                                n,
                                d,
                                s.getConcurrency() == null ? cap : null,
                                arrivalKind,
                                burst,
                                "load.stages[" + plans.size() + "]"));
            }
        }
        if (plans.isEmpty()) {
            throw new Main.UsageError(
                    "no stages: give --request-rate, --concurrency or load stages in --config");
        }
        return plans;
    }

    private static StagePlan plan(
            int index,
            double rate,
            Integer concurrency,
            long prompts,
            Duration d,
            Integer cap,
            ArrivalKind arrival,
            double burst,
            String flag) {
        try {
            return new StagePlan(index, rate, concurrency, prompts, d, cap, arrival, burst);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(flag + ": " + e.getMessage());
        }
    }

    private static int datasetSize(List<StagePlan> plans) {
        long max = 0;
        for (StagePlan p : plans) {
            max = Math.max(max, p.numPrompts() > 0 ? p.numPrompts() : 1000);
        }
        return (int) Math.min(max, 200_000);
    }

    private Map<String, String> headers() throws IOException {
        Map<String, String> result = new LinkedHashMap<>();
        for (String h : headers) {
            int eq = h.indexOf('=');
            if (eq <= 0) {
                throw new Main.UsageError(
                        "--header: '" + h.replaceAll("=.*", "=…") + "' must be NAME=VALUE");
            }
            result.put(h.substring(0, eq).trim(), h.substring(eq + 1));
        }
        if (apiKeyFile != null) {
            if (!Files.isReadable(apiKeyFile)) {
                throw new Main.UsageError("--api-key-file: cannot read " + apiKeyFile);
            }
            String key = Files.readString(apiKeyFile, StandardCharsets.UTF_8).strip();
            if (key.isEmpty()) {
                throw new Main.UsageError("--api-key-file: " + apiKeyFile + " is empty");
            }
            result.put("Authorization", "Bearer " + key);
        }
        return result;
    }

    private HfTokenizer loadTokenizer() {
        if (tokenizer == null) {
            return null;
        }
        try {
            return HfTokenizer.load(tokenizer);
        } catch (IOException | RuntimeException e) {
            throw new Main.UsageError("--tokenizer: " + Main.describe(e));
        }
    }

    /**
     * The target's tokenizer endpoints, when its backend has them and they answer; otherwise null,
     * and the random prompts are text of common words (lengths approximate).
     */
    private ServerTokenizer serverTokenizer(
            String backendName, Map<String, String> requestHeaders, PrintWriter err) {
        if (!ServerTokenizer.BACKENDS.contains(backendName)) {
            return null;
        }
        ServerTokenizer.Probe probe =
                ServerTokenizer.probe(
                        backendName,
                        baseUrl,
                        requestHeaders,
                        model == null || model.isBlank() ? null : model,
                        Duration.ofSeconds(10));
        if (probe.tokenizer() == null) {
            err.println(
                    "prompts: the server's /tokenize did not answer ("
                            + probe.reason()
                            + "); without --tokenizer the random prompts are common words, their"
                            + " token counts approximate");
        }
        return probe.tokenizer();
    }

    private List<Prompt> serverPrompts(
            DatasetSpec dataset,
            int count,
            boolean tokenIds,
            ServerTokenizer server,
            long seedValue)
            throws IOException, InterruptedException {
        LengthDistribution in =
                lengths(
                        "--random-input-len",
                        "workload.dataset.inputTokens",
                        randomInputLen,
                        randomInputStddev,
                        dataset.getInputTokens(),
                        DatasetSpec.DEFAULT_INPUT_TOKENS);
        LengthDistribution outLen =
                lengths(
                        "--random-output-len",
                        "workload.dataset.outputTokens",
                        randomOutputLen,
                        randomOutputStddev,
                        dataset.getOutputTokens(),
                        DatasetSpec.DEFAULT_OUTPUT_TOKENS);
        return ServerRandomPrompts.generate(count, in, outLen, tokenIds, server, seedValue);
    }

    private boolean tokenIdPrompts(
            BackendChoice choice, boolean randomDataset, HfTokenizer tok, ServerTokenizer server) {
        switch (promptFormat.toLowerCase(Locale.ROOT)) {
            case "text":
                return false;
            case "token-ids":
                if (!choice.protocol().acceptsTokenIds() || !randomDataset) {
                    throw new Main.UsageError(
                            "--prompt-format: token-ids needs the completions API and --dataset-name random");
                }
                return true;
            case "auto":
                // Only ids the server's tokenizer produced: blind ids may not exist in the model.
                return randomDataset
                        && tok == null
                        && server != null
                        && choice.protocol().acceptsTokenIds()
                        && (choice.backend().equals("vllm") || choice.backend().equals("sglang"));
            default:
                throw new Main.UsageError(
                        "--prompt-format: '"
                                + promptFormat
                                + "' is not one of auto, text, token-ids");
        }
    }

    private List<Prompt> loadPrompts(
            String type,
            DatasetSpec dataset,
            int count,
            boolean tokenIds,
            HfTokenizer tok,
            long seedValue)
            throws IOException {
        switch (type) {
            case "random" -> {
                LengthDistribution in =
                        lengths(
                                "--random-input-len",
                                "workload.dataset.inputTokens",
                                randomInputLen,
                                randomInputStddev,
                                dataset.getInputTokens(),
                                DatasetSpec.DEFAULT_INPUT_TOKENS);
                LengthDistribution outLen =
                        lengths(
                                "--random-output-len",
                                "workload.dataset.outputTokens",
                                randomOutputLen,
                                randomOutputStddev,
                                dataset.getOutputTokens(),
                                DatasetSpec.DEFAULT_OUTPUT_TOKENS);
                return RandomDataset.generate(count, in, outLen, tokenIds, tok, seedValue);
            }
            case "sharegpt", "jsonl" -> {
                Path path = datasetPath != null ? datasetPath : inlineSource(dataset);
                if (path == null) {
                    throw new Main.UsageError(
                            "--dataset-path: required for --dataset-name " + type);
                }
                if (!Files.isRegularFile(path)) {
                    throw new Main.UsageError("--dataset-path: no such file: " + path);
                }
                Integer override = outputLen != null ? outputLen : randomOutputLen;
                if (override == null
                        && dataset.getOutputTokens() != null
                        && dataset.getOutputTokens().getMean() != null) {
                    override = dataset.getOutputTokens().getMean();
                }
                Integer minIn = minInputLen != null ? minInputLen : dataset.getMinInputTokens();
                Integer maxIn = maxInputLen != null ? maxInputLen : dataset.getMaxInputTokens();
                Integer minOut = minOutputLen != null ? minOutputLen : dataset.getMinOutputTokens();
                Integer maxOut = maxOutputLen != null ? maxOutputLen : dataset.getMaxOutputTokens();
                try {
                    if (type.equals("sharegpt")) {
                        FileDatasets.Filters defaults =
                                FileDatasets.Filters.shareGptDefaults(override);
                        FileDatasets.Filters filters =
                                new FileDatasets.Filters(
                                        minIn != null ? minIn : defaults.minInputLen(),
                                        maxIn != null ? maxIn : defaults.maxInputLen(),
                                        minOut != null ? minOut : defaults.minOutputLen(),
                                        maxOut,
                                        maxIn != null || maxOut != null
                                                ? null
                                                : defaults.maxTotalLen(),
                                        override);
                        return FileDatasets.shareGpt(path, count, filters, tok, seedValue);
                    }
                    return FileDatasets.jsonl(
                            path,
                            count,
                            new FileDatasets.Filters(minIn, maxIn, minOut, maxOut, null, override),
                            null,
                            tok,
                            seedValue);
                } catch (IOException e) {
                    throw new Main.UsageError("--dataset-path: " + e.getMessage());
                }
            }
            default ->
                    throw new Main.UsageError(
                            "--dataset-name: '" + type + "' is not one of random, sharegpt, jsonl");
        }
    }

    private static Path inlineSource(DatasetSpec dataset) throws IOException {
        if (dataset.getSource() == null) {
            return null;
        }
        if (dataset.getSource().getInline() != null) {
            Path tmp = Files.createTempFile("inferencebench-dataset", ".txt");
            tmp.toFile().deleteOnExit();
            Files.writeString(tmp, dataset.getSource().getInline(), StandardCharsets.UTF_8);
            return tmp;
        }
        String url = dataset.getSource().getUrl();
        if (url != null && url.startsWith("file:")) {
            return Path.of(java.net.URI.create(url));
        }
        throw new Main.UsageError(
                "workload.dataset.source: the command line reads datasets from --dataset-path, source.inline or a file: URL");
    }

    private LengthDistribution lengths(
            String flag,
            String field,
            Integer mean,
            Double stddev,
            TokenDistribution fromConfig,
            int fallback) {
        if (randomRangeRatio != null && !(randomRangeRatio >= 0 && randomRangeRatio < 1)) {
            throw new Main.UsageError(
                    "--random-range-ratio: must be within [0, 1), got " + randomRangeRatio);
        }
        if (stddev != null && !(stddev >= 0)) {
            throw new Main.UsageError(
                    flag.replace("-len", "-stddev") + ": must be >= 0, got " + stddev);
        }
        if (mean != null || fromConfig == null || stddev != null || randomRangeRatio != null) {
            int length =
                    mean != null
                            ? mean
                            : (fromConfig != null && fromConfig.getMean() != null
                                    ? fromConfig.getMean()
                                    : fallback);
            if (length < 1) {
                throw new Main.UsageError(flag + ": must be >= 1, got " + length);
            }
            if (stddev != null) {
                return LengthDistribution.normal(length, stddev);
            }
            return LengthDistribution.rangeRatio(
                    length, randomRangeRatio == null ? 0 : randomRangeRatio);
        }
        DistributionType type =
                fromConfig.getType() == null ? DistributionType.FIXED : fromConfig.getType();
        return switch (type) {
            case FIXED ->
                    LengthDistribution.fixed(
                            fromConfig.getMean() != null ? fromConfig.getMean() : fallback);
            case UNIFORM -> {
                if (fromConfig.getMin() == null || fromConfig.getMax() == null) {
                    throw new Main.UsageError(field + ": a uniform distribution needs min and max");
                }
                yield new LengthDistribution(
                        LengthDistribution.Kind.UNIFORM,
                        (fromConfig.getMin() + fromConfig.getMax()) / 2,
                        fromConfig.getMin(),
                        fromConfig.getMax(),
                        0);
            }
            case NORMAL -> {
                if (fromConfig.getMean() == null) {
                    throw new Main.UsageError(field + ": a normal distribution needs mean");
                }
                LengthDistribution n =
                        LengthDistribution.normal(
                                fromConfig.getMean(),
                                fromConfig.getStddev() == null ? 0 : fromConfig.getStddev());
                yield new LengthDistribution(
                        LengthDistribution.Kind.NORMAL,
                        n.mean(),
                        fromConfig.getMin() != null ? fromConfig.getMin() : 1,
                        fromConfig.getMax() != null ? fromConfig.getMax() : n.max(),
                        n.stddev());
            }
        };
    }

    private String discoverModel(HttpTransport transport) {
        try {
            return ModelDiscovery.discover(transport, baseUrl);
        } catch (ModelDiscovery.Unreachable e) {
            // The server is down or unreachable: a failure of the target (exit 1), not of the
            // flags; --model would not help.
            throw new IllegalStateException(e.getMessage());
        } catch (ModelDiscovery.NoModel e) {
            throw new Main.UsageError("--model: not given and " + e.getMessage());
        }
    }
}
