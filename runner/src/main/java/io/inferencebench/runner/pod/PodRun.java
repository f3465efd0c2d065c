package io.inferencebench.runner.pod;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.ProgressReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShare;
import io.inferencebench.profile.lpg.PartJson;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.stats.MetricRecorder;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.SelfWarmup;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.http.Spread;
import io.inferencebench.runner.http.TlsOptions;
import io.inferencebench.runner.plan.RunPlan;
import io.inferencebench.runner.session.PrefixWarmup;
import io.inferencebench.runner.session.RunSession;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One runner pod's life (DESIGN §2 steps 3–5): read the work order, build this pod's share of every
 * stage, warm up, report {@code ready} in the part ConfigMap, then for each stage wait for its
 * start instant in the control ConfigMap, run it, publish progress while it runs and write its
 * result; finally report {@code done}. In a capacity search (no stages in the work order) stage n
 * runs at the rate the operator publishes with its barrier, until the operator's {@code stages} key
 * says the search ran fewer than n. Cancellation (control key or the run gone) stops promptly,
 * keeping finished stages. Exit code 0 for done or cancelled, {@link #EXIT_FAILED} otherwise.
 */
public final class PodRun {

    /** Exit code when the pod failed; the part says why. */
    public static final int EXIT_FAILED = 1;

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final PodSettings settings;
    private final KubernetesClient client;
    private final PrintWriter log;
    private final Clock clock;
    private PartReporter reporter;
    private volatile boolean ticking;
    private long tickGeneration;
    private boolean nonStreamedWarned;
    private volatile int stagesReported;
    private final Object progressLock = new Object();

    public PodRun(PodSettings settings, KubernetesClient client, PrintWriter log, Clock clock) {
        this.settings = settings;
        this.client = client;
        this.log = log;
        this.clock = clock;
    }

    /** Runs the pod's part of the benchmark and returns the process exit code. */
    public int run() {
        try {
            return execute();
        } catch (PodFailure e) {
            return fail(e.getMessage(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted", e);
        } catch (VirtualMachineError e) {
            // Not the target's failure: the part says what happened; finished stages stay in it.
            return fail(jvmErrorMessage(e, null), null);
        } catch (Exception | Error e) {
            String message = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
            return fail(message, e);
        }
    }

    /** What the part says when the JVM failed (during {@code stage}, when known). */
    private String jvmErrorMessage(VirtualMachineError error, Integer stage) {
        return io.inferencebench.runner.engine.JvmErrors.describe(error)
                + (stage == null ? "" : "; stage " + stage + " stopped")
                + "; finished stages kept ("
                + stagesReported
                + " reported)";
    }

    private int execute() throws Exception {
        RunnerWorkOrder order = WorkOrderReader.read(settings, client);
        int index = settings.index();
        if (index < 0 || index >= order.parallelism()) {
            throw new PodFailure(
                    PodSettings.INDEX_ENV
                            + "="
                            + index
                            + " is outside 0.."
                            + (order.parallelism() - 1)
                            + " (work order parallelism "
                            + order.parallelism()
                            + ")");
        }
        String namespace = settings.namespace() != null ? settings.namespace() : order.namespace();
        String partName =
                order.partConfigMapPrefix() != null
                        ? order.partConfigMapPrefix() + index
                        : ResourceNames.part(order.runName(), index);
        reporter =
                new PartReporter(
                        client,
                        namespace,
                        partName,
                        order.runName(),
                        order.runUid(),
                        index,
                        ApiRetry.standard());

        RunPlan plan = PodWorkload.plan(order, index);
        HfTokenizer tokenizer = null;
        if (settings.tokenizerFile() != null) {
            try {
                tokenizer = HfTokenizer.load(settings.tokenizerFile());
            } catch (IOException | RuntimeException e) {
                throw new PodFailure("tokenizer " + settings.tokenizerFile() + ": " + describe(e));
            }
        }
        try (HfTokenizer closeTokenizer = tokenizer) {
            return execute(order, namespace, plan, tokenizer);
        }
    }

    private int execute(
            RunnerWorkOrder order, String namespace, RunPlan plan, HfTokenizer tokenizer)
            throws Exception {
        int index = settings.index();
        String path = plan.wire().path();
        Map<String, String> headers = new LinkedHashMap<>(plan.headers());
        if (order.apiKeyFromEnv()) {
            if (settings.apiKey() == null || settings.apiKey().isBlank()) {
                throw new PodFailure(
                        "the work order expects an API key but "
                                + RunnerWorkOrder.API_KEY_ENV
                                + " is not set");
            }
            headers.put("Authorization", "Bearer " + settings.apiKey());
        }
        PodPrompts.Prepared prepared =
                PodPrompts.prepare(
                        order,
                        index,
                        plan,
                        headers,
                        tokenizer,
                        settings,
                        reason ->
                                log(
                                        "prompts: no server tokenizer (%s): common-word text"
                                                + " prompts",
                                        reason));
        List<Prompt> prompts = prepared.prompts();
        if (prepared.trace() != null) {
            plan = prepared.trace().bind(plan);
        }
        List<StagePlan> plans = plan.stages();
        boolean search = PodWorkload.searched(order);
        int loops = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
        Duration timeout = plan.requestTimeout();
        ProgressTracker tracker = new ProgressTracker(clock);
        ScheduledExecutorService ticker =
                Executors.newSingleThreadScheduledExecutor(
                        r -> Thread.ofPlatform().daemon().name("ib-part-progress").unstarted(r));
        ExecutorService stageThread =
                Executors.newSingleThreadExecutor(
                        r -> Thread.ofPlatform().daemon().name("ib-stage").unstarted(r));
        HttpTransport transport =
                new HttpTransport(
                        order.baseUrl(),
                        headers,
                        loops,
                        20_000,
                        timeout,
                        tls(plan, order),
                        spread(order, index));
        try (ControlWatch control =
                new ControlWatch(
                        client,
                        namespace,
                        order.controlConfigMap() != null
                                ? order.controlConfigMap()
                                : ResourceNames.control(order.runName()),
                        order.runName(),
                        order.runUid(),
                        settings.pollInterval(),
                        settings.runCheckInterval())) {
            // The model is reported with the ready state, so the operator can name a discovered one
            // in the status, the MODEL column and the profiles.
            Map<String, String> ready = new LinkedHashMap<>();
            String model = RunSession.model(plan, transport, order.baseUrl(), failures);
            ready.put(PartReport.MODEL, model);
            RunSession session =
                    new RunSession(
                            transport,
                            prompts,
                            tokenizer,
                            plan.engine(plan.generation(model), MetricRecorder.DEFAULT_SAMPLE_CAP),
                            tracker);
            LoadEngine engine = session.engine();
            engine.setSettleBeforeStage(false);
            PodCacheWarming warming =
                    prepared.warming().isEmpty()
                            ? null
                            : new PodCacheWarming(
                                    new PrefixWarmup(
                                            prepared.warming(),
                                            plan.wire().protocol(),
                                            plan.generation(model),
                                            path,
                                            headers,
                                            order.baseUrl().regionMatches(true, 0, "https:", 0, 6)
                                                    ? tls(plan, order).jdkContext()
                                                    : null,
                                            timeout),
                                    clock);
            String jitChange = session.prepareJvm();
            if (jitChange != null) {
                log("%s", jitChange);
            }
            if (settings.selfWarmup()) {
                session.selfWarmup(new SelfWarmup.Cancel());
            }
            long warmupSent = 0;
            int mine = plan.warmupRequests();
            if (mine > 0) {
                warmupSent = session.warmUp(mine, plan.maxConcurrency(), failures);
            }
            if (!transport.activeAddresses().isEmpty()) {
                // spec.target.balance endpoints: the operator keeps the list current
                control.onChange(new EndpointFollower(transport, index, this::log)::follow);
            }
            control.start();
            ready.put(PartReport.STATE, PartReport.STATE_READY);
            ready.put(PartReport.STAGE, "0");
            ready.put(PartReport.STAGES_DONE, "0");
            reporter.create(ready);
            log(
                    "ready: %s%s model %s, %s, %d prompts, pod %d of %d",
                    order.baseUrl(),
                    path,
                    model,
                    search ? "stages decided at run time (search)" : plans.size() + " stage(s)",
                    prompts.size(),
                    index,
                    order.parallelism());

            int stagesRan = 0;
            for (int i = 0; search || i < plans.size(); i++) {
                int stage = i + 1;
                String key = RunnerWorkOrder.stageStartKey(stage);
                String startText;
                StageShare share;
                StagePlan stagePlan;
                String label;
                if (search) {
                    SearchProbes.Published probe = SearchProbes.await(control, order, stage);
                    if (probe == null) {
                        return cancelled(control.stopReason(), i);
                    }
                    if (probe == SearchProbes.ENDED) {
                        break;
                    }
                    startText = probe.startText();
                    share = probe.share();
                    stagePlan = PodWorkload.probe(order, index, share);
                    label = stage + " (search)";
                } else {
                    startText = control.awaitKey(key);
                    if (startText == null) {
                        return cancelled(control.stopReason(), i);
                    }
                    share = order.stages().get(i);
                    stagePlan = plans.get(i);
                    label = stage + "/" + plans.size();
                }
                Instant start = StartBarrier.parse(key, startText);
                String warmed = null;
                if (warming != null) {
                    Map<String, String> published = control.awaitAny(d -> true);
                    if (published == null) {
                        return cancelled(control.stopReason(), i);
                    }
                    long warmingStart = System.nanoTime();
                    warmed = warming.beforeBarrier(published, stage, start);
                    log(
                            "stage %s: prefix cache warming (%d prefixes, %d ms): %s",
                            label,
                            warming.prefixes(),
                            (System.nanoTime() - warmingStart) / 1_000_000,
                            TerminalText.oneLine(warmed));
                }
                if (stagePlan != null) {
                    engine.prepareStage(stagePlan);
                }
                long untilBarrierMs = StartBarrier.remaining(start, clock.instant()).toMillis();
                if (untilBarrierMs > 300) {
                    // Settle while waiting rather than after the barrier (the engine's own
                    // settling is off), so the stage starts on the instant.
                    LoadEngine.settle(Duration.ofMillis(Math.min(2_000, untilBarrierMs - 250)));
                }
                Duration late =
                        new StartBarrier(clock).await(start, () -> control.stopReason() != null);
                if (control.stopReason() != null) {
                    return cancelled(control.stopReason(), i);
                }
                tracker.beginStage(stage);
                Map<String, String> running = new LinkedHashMap<>();
                running.put(PartReport.STATE, PartReport.STATE_RUNNING);
                running.put(PartReport.STAGE, Integer.toString(stage));
                running.put(PartReport.PROGRESS, tracker.snapshot().toJson());
                if (warmed != null) {
                    running.put(PartReport.stageWarmedKey(stage), warmed);
                }
                StageShare stageShare = share;
                StagePlan thisStage = stagePlan;
                Future<StageResult> future =
                        stageThread.submit(
                                () ->
                                        thisStage == null
                                                ? empty(stageShare)
                                                : engine.runStage(thisStage));
                // The part is updated after the stage started so the API round trip does not delay
                // the first request past the barrier.
                reporter.put(running);
                log(
                        "stage %s started %d us after its barrier %s",
                        label, late.toNanos() / 1000, start);
                startTicking(ticker, tracker, order);
                StageResult result = null;
                while (result == null) {
                    try {
                        result = future.get(200, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException e) {
                        if (control.stopReason() != null) {
                            stopTicking();
                            // Stops sending and aborts what is in flight (counted as cancelled,
                            // not failed); the abandoned stage is not reported.
                            engine.cancel();
                            awaitCancelled(future, stage, transport);
                            return cancelled(control.stopReason(), i);
                        }
                    } catch (ExecutionException e) {
                        stopTicking();
                        if (e.getCause() instanceof VirtualMachineError error) {
                            throw new PodFailure(jvmErrorMessage(error, stage));
                        }
                        throw new PodFailure(
                                "stage " + stage + " failed: " + describe(e.getCause()));
                    }
                }
                stopTicking();
                if (engine.jvmError() != null) {
                    // The engine stopped the stage: its result is not reported.
                    throw new PodFailure(jvmErrorMessage(engine.jvmError(), stage));
                }
                result.stageIndex = i;
                result.runnerCount = 1;
                if (result.runnerCpu != null) {
                    result.runnerCpu.runner = settings.index();
                }
                if (i == 0) {
                    result.warmupExcluded = warmupSent;
                }
                String json = stageResultJson(result, stage);
                Map<String, String> done = new LinkedHashMap<>();
                done.put(PartReport.stageResultKey(stage), json);
                if (stage > 2) {
                    // Stage n's barrier follows a status that holds stage n-1's barrier, which
                    // the operator wrote together with stage n-2's merged result: that result is
                    // durable in the run, so the part drops it (null deletes the key in a merge
                    // patch) and holds at most two results however many stages the run has.
                    done.put(PartReport.stageResultKey(stage - 2), null);
                    if (warming != null) {
                        done.put(PartReport.stageWarmedKey(stage - 2), null);
                    }
                }
                done.put(PartReport.STAGES_DONE, Integer.toString(stage));
                done.put(PartReport.PROGRESS, finalProgress(stage, result).toJson());
                reporter.put(done);
                log(
                        "stage %s done: %d ok, %d failed, %d sent",
                        label, result.completed, result.failed, result.sent);
                stagesRan = stage;
                stagesReported = stage;
                if (result.nonStreamedRequests > 0 && !nonStreamedWarned) {
                    log(
                            "warning: stage %d: %d of %d successful responses were not streamed;"
                                    + " they have no TTFT, ITL or TPOT and do not meet a ttft or"
                                    + " tpot SLO",
                            stage, result.nonStreamedRequests, result.completed);
                    nonStreamedWarned = true;
                }
            }
            reporter.put(Map.of(PartReport.STATE, PartReport.STATE_DONE));
            log("done: %d stage(s)", stagesRan);
            return 0;
        } finally {
            stopTicking();
            ticker.shutdownNow();
            stageThread.shutdownNow();
            transport.close();
        }
    }

    /** Waits briefly for a cancelled stage to return; closes the connections if it does not. */
    private void awaitCancelled(
            Future<StageResult> future, int stage, HttpTransport transportToClose) {
        try {
            StageResult partial = future.get(10, TimeUnit.SECONDS);
            log(
                    "stage %d cancelled: %d ok, %d failed, %d aborted in flight",
                    stage, partial.completed, partial.failed, partial.cancelledRequests);
        } catch (TimeoutException | ExecutionException e) {
            log("stage %d did not stop within 10 s of the cancel; dropping its connections", stage);
            transportToClose.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static StageResult empty(StageShare share) {
        StageResult r = new StageResult();
        r.requestedRate =
                share.ratePerPod() != null ? share.ratePerPod() : Double.POSITIVE_INFINITY;
        return r;
    }

    /**
     * The stage result for the part: with its recorders' raw samples where they fit ({@link
     * PartJson}), so that the operator's merge of the pods' results is exact.
     */
    static String stageResultJson(StageResult result, int stage) throws IOException {
        String json = PartJson.write(result);
        int bytes = json.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > PartReporter.MAX_STAGE_RESULT_BYTES) {
            throw new PodFailure(
                    "stage "
                            + stage
                            + " result is "
                            + bytes
                            + " bytes, over the "
                            + PartReporter.MAX_STAGE_RESULT_BYTES
                            + " bytes a part ConfigMap key may hold");
        }
        return json;
    }

    private ProgressReport finalProgress(int stage, StageResult r) {
        double seconds = (r.lastDispatchEpochNanos - r.firstDispatchEpochNanos) / 1e9;
        double rate = r.sent > 1 && seconds > 0 ? (r.sent - 1) / seconds : 0;
        Double ttft = r.ttftMs != null && r.ttftMs.count() > 0 ? r.ttftMs.percentile(50) : null;
        return new ProgressReport(
                stage, r.completed, r.failed, 0, rate, ttft, clock.instant().toString());
    }

    private void startTicking(
            ScheduledExecutorService ticker, ProgressTracker tracker, RunnerWorkOrder order) {
        long period =
                settings.progressInterval() != null
                        ? settings.progressInterval().toMillis()
                        : Math.max(
                                        1,
                                        order.reportIntervalSeconds() > 0
                                                ? order.reportIntervalSeconds()
                                                : 3)
                                * 1000L;
        ApiRetry once = new ApiRetry(Duration.ofSeconds(2), 200, 1000);
        long generation;
        synchronized (progressLock) {
            ticking = true;
            generation = ++tickGeneration;
        }
        ticker.schedule(
                new Runnable() {
                    @Override
                    public void run() {
                        synchronized (progressLock) {
                            if (!ticking || generation != tickGeneration) {
                                return;
                            }
                            try {
                                reporter.put(
                                        Map.of(PartReport.PROGRESS, tracker.snapshot().toJson()),
                                        once);
                            } catch (PodFailure e) {
                                log("progress not published: %s", e.getMessage());
                            }
                            ticker.schedule(this, period, TimeUnit.MILLISECONDS);
                        }
                    }
                },
                period,
                TimeUnit.MILLISECONDS);
    }

    private void stopTicking() {
        synchronized (progressLock) {
            ticking = false;
        }
    }

    private int cancelled(String reason, int stagesDone) {
        log("stopping: %s; %d finished stage(s) kept", reason, stagesDone);
        Map<String, String> data = new LinkedHashMap<>();
        data.put(PartReport.STATE, PartReport.STATE_DONE);
        data.put(PartReporter.CANCELLED, "true");
        try {
            reporter.put(data);
        } catch (PodFailure e) {
            // The run is gone or going; nothing reads the part any more.
            log("final state not written: %s", e.getMessage());
        }
        return 0;
    }

    private int fail(String message, Throwable cause) {
        // It reaches the run's status and Events, which kubectl prints on a terminal.
        String safe = TerminalText.oneLine(redact(message));
        log("failed: %s", safe);
        if (cause != null && !(cause instanceof PodFailure)) {
            log("cause: %s", redact(cause.toString()));
        }
        if (reporter != null) {
            Map<String, String> data = new LinkedHashMap<>();
            data.put(PartReport.STATE, PartReport.STATE_FAILED);
            data.put(PartReport.ERROR, safe);
            try {
                reporter.create(data);
            } catch (RuntimeException e) {
                log("failure not reported in the part ConfigMap: %s", redact(describe(e)));
            }
        }
        return EXIT_FAILED;
    }

    private String redact(String text) {
        if (text == null) {
            return "";
        }
        String key = settings.apiKey();
        return key == null || key.isBlank() ? text : text.replace(key, "<redacted>");
    }

    /** How a pod words what stops its set-up: the work order's fields, in its part. */
    private final RunSession.Failures failures =
            new RunSession.Failures(
                    PodFailure::new,
                    message -> new PodFailure("target: " + message),
                    message ->
                            new PodFailure(
                                    "target.model is not set, and "
                                            + message
                                            + "; set target.model (the model name the server"
                                            + " serves)"),
                    error ->
                            new PodFailure(
                                    jvmErrorMessage(error, null) + " during the warm-up requests"),
                    PodFailure::new);

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** The work order's certificate checks; the opt-out is logged, never silent. */
    /**
     * The endpoints of {@code spec.target.balance: endpoints}, turned so that each pod starts at
     * another one (the pods' remainders then fall on different replicas).
     */
    static Spread spread(RunnerWorkOrder order, int podIndex) {
        int bound = order.requestsPerConnection() == null ? 0 : order.requestsPerConnection();
        if (order.connectTo() == null || order.connectTo().isEmpty()) {
            return bound == 0 ? Spread.NONE : new Spread(List.of(), bound);
        }
        try {
            return new Spread(addresses(order.connectTo(), podIndex), bound);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("work order connectTo: " + e.getMessage(), e);
        }
    }

    /**
     * {@code ip:port} entries as addresses, turned so that pod {@code podIndex} starts at its own.
     *
     * @throws IllegalArgumentException naming an entry that is not an {@code ip:port}
     */
    static List<InetSocketAddress> addresses(List<String> entries, int podIndex) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (String entry : entries) {
            int colon = entry.lastIndexOf(':');
            try {
                if (colon < 1) {
                    throw new NumberFormatException();
                }
                String host = entry.substring(0, colon);
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                }
                // an IP literal: no lookup
                addresses.add(
                        new InetSocketAddress(
                                InetAddress.getByName(host),
                                Integer.parseInt(entry.substring(colon + 1))));
            } catch (UnknownHostException | IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "not an ip:port: " + TerminalText.oneLine(entry));
            }
        }
        if (!addresses.isEmpty()) {
            Collections.rotate(addresses, -(podIndex % addresses.size()));
        }
        return addresses;
    }

    private TlsOptions tls(RunPlan plan, RunnerWorkOrder order) {
        if (plan.tls().insecureSkipVerify() && order.baseUrl().startsWith("https://")) {
            log(
                    "WARNING: spec.target.tls.insecureSkipVerify: the certificate of %s is NOT"
                            + " checked; whoever answers receives the requests%s",
                    order.baseUrl(), order.apiKeyFromEnv() ? " and the API key" : "");
        }
        return plan.tls();
    }

    private void log(String format, Object... args) {
        // Arguments carry the server's words (model ids, error bodies, probe answers): a pod's
        // log is read on a terminal with kubectl logs.
        Object[] shown = new Object[args.length];
        for (int i = 0; i < args.length; i++) {
            shown[i] = TerminalText.argument(args[i]);
        }
        synchronized (log) {
            log.printf(Locale.ROOT, format + "%n", shown);
            log.flush();
        }
    }
}
