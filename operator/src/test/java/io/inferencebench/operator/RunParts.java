package io.inferencebench.operator;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.profile.lpg.StageResult;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the runner pods write, played by the integration tests (there is no kubelet): the part
 * ConfigMaps and the stage results in them.
 */
public final class RunParts {

    private static final ObjectMapper JSON = new ObjectMapper();

    private RunParts() {}

    /**
     * Creates or replaces part {@code index} of {@code run} (in the run's namespace) with {@code
     * data}, labelled and owned as a runner pod writes it.
     */
    public static void write(
            KubernetesClient client, BenchmarkRun run, int index, Map<String, String> data) {
        String namespace = run.getMetadata().getNamespace();
        if (namespace == null) {
            throw new IllegalArgumentException("the run has no namespace: pass the created run");
        }
        ConfigMap part =
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(ResourceNames.part(run.getMetadata().getName(), index))
                        .withNamespace(namespace)
                        .addToLabels(Labels.of(run, Labels.RUNNER))
                        .addToLabels(Labels.PART_INDEX, Integer.toString(index))
                        .withOwnerReferences(
                                new OwnerReferenceBuilder()
                                        .withApiVersion("inferencebench.io/v1alpha1")
                                        .withKind("BenchmarkRun")
                                        .withName(run.getMetadata().getName())
                                        .withUid(run.getMetadata().getUid())
                                        .build())
                        .endMetadata()
                        .withData(data)
                        .build();
        client.configMaps().inNamespace(namespace).resource(part).createOr(c -> c.update());
    }

    /**
     * Stage 1 at 5 req/s, 40 requests from {@code firstDispatchEpochNanos} ({@link
     * #completedStage}), with latencies recorded: e2e 400-439 ms, TTFT 40-79 ms, TPOT and ITL 7.0
     * to 7.78 ms, each times {@code slowdown}: a baseline at 1 and a slower candidate above it.
     */
    public static StageResult slowedStage(long firstDispatchEpochNanos, double slowdown) {
        StageResult result =
                completedStage(1, 5, 40, firstDispatchEpochNanos, 7_800_000_000L, 8_400_000_000L);
        for (int r = 0; r < 40; r++) {
            result.latencyMs.record(slowdown * (400 + r));
            result.ttftMs.record(slowdown * (40 + r));
            result.tpotMs.record(slowdown * (7.0 + r * 0.02));
            result.itlMs.record(slowdown * (7.0 + r * 0.02));
            result.perTokenLatencySec.record(slowdown * 0.0027);
            result.perOutputTokenLatencyMs.record(slowdown * 8.0);
            result.inputLen.record(100);
            result.outputLen.record(50);
            result.scheduleLagMs.record(0.5);
        }
        return result;
    }

    /**
     * A stage (1-based {@code stage}) whose {@code requests} requests at {@code requestedRate} were
     * all sent and completed, 100 input and 50 output tokens each as the server's usage reported;
     * the first dispatch at {@code firstDispatchEpochNanos}, the last {@code dispatchNanos} later
     * and the last completion {@code completionNanos} after the first dispatch. No latencies
     * recorded yet.
     */
    public static StageResult completedStage(
            int stage,
            double requestedRate,
            int requests,
            long firstDispatchEpochNanos,
            long dispatchNanos,
            long completionNanos) {
        StageResult result = new StageResult();
        result.stageIndex = stage - 1;
        result.requestedRate = requestedRate;
        result.numPromptsRequested = requests;
        result.sent = requests;
        result.completed = requests;
        result.firstDispatchEpochNanos = firstDispatchEpochNanos;
        result.lastDispatchEpochNanos = firstDispatchEpochNanos + dispatchNanos;
        result.lastCompletionEpochNanos = firstDispatchEpochNanos + completionNanos;
        result.totalInputTokens = requests * 100L;
        result.totalOutputTokens = requests * 50L;
        result.outputTokenSource = "usage";
        result.inputTokenSource = "usage";
        return result;
    }

    /**
     * Records {@code result.completed} steady requests: latency 400 ms + r + {@code
     * extraLatencyMs}, TTFT 40 ms + r, TPOT and ITL 7.5 ms, 100 tokens in and 50 out.
     */
    public static StageResult recordSteadyRequests(StageResult result, double extraLatencyMs) {
        for (int r = 0; r < result.completed; r++) {
            result.latencyMs.record(400 + r + extraLatencyMs);
            result.ttftMs.record(40 + r);
            result.tpotMs.record(7.5);
            result.itlMs.record(7.5);
            result.perTokenLatencySec.record(0.0027);
            result.perOutputTokenLatencyMs.record(8.0);
            result.inputLen.record(100);
            result.outputLen.record(50);
            result.scheduleLagMs.record(0.5);
        }
        return result;
    }

    /**
     * The part data a runner writes after finishing stage {@code stagesDone}: its state ({@link
     * PartReport#STATE_RUNNING} or {@link PartReport#STATE_DONE}), the run's uid and the stage's
     * result.
     */
    public static Map<String, String> report(
            String state, int stagesDone, String runUid, StageResult result) {
        try {
            return Map.of(
                    PartReport.STATE,
                    state,
                    PartReport.STAGES_DONE,
                    Integer.toString(stagesDone),
                    PartReport.RUN_UID,
                    runUid,
                    PartReport.stageResultKey(stagesDone),
                    JSON.writeValueAsString(result));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Plays one runner pod (part 0) through a created run of one stage: ready at the start barrier
     * once the run is Initializing; once it is Running, the stage window is left open for {@code
     * window} after the barrier, then {@code report} (what {@link #report} returns for the stage)
     * is written with state done.
     *
     * @return the stage's start barrier
     */
    public static Instant playStage(
            OperatorTestCluster cluster,
            BenchmarkRun run,
            Duration window,
            Map<String, String> report) {
        Instant start = startStage(cluster, run, 1);
        Instant until = start.plus(window);
        org.awaitility.Awaitility.await()
                .atMost(window.plusSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> !Instant.now().isBefore(until));
        finishRun(cluster.client(), run, 0, report);
        return start;
    }

    /**
     * The runner pods of a created run reach the start barrier: once the run is Initializing, parts
     * 0 to {@code runners - 1} report ready; once it is Running, its first barrier.
     *
     * @return the first stage's start barrier
     */
    public static Instant startStage(OperatorTestCluster cluster, BenchmarkRun run, int runners) {
        reportReady(cluster, run, runners);
        return firstBarrier(cluster, run);
    }

    /** {@link #startStage(OperatorTestCluster, BenchmarkRun, int)} with one runner pod. */
    public static Instant startStage(OperatorTestCluster cluster, BenchmarkRun run) {
        return startStage(cluster, run, 1);
    }

    /** Once the run is Initializing, parts 0 to {@code runners - 1} report ready. */
    public static void reportReady(OperatorTestCluster cluster, BenchmarkRun run, int runners) {
        cluster.awaitRunStatus(
                run.getMetadata().getNamespace(),
                run.getMetadata().getName(),
                s -> s.getPhase() == Phase.INITIALIZING);
        for (int index = 0; index < runners; index++) {
            write(cluster.client(), run, index, Map.of(PartReport.STATE, PartReport.STATE_READY));
        }
    }

    /** Waits until the run is Running; returns its first stage's start barrier. */
    public static Instant firstBarrier(OperatorTestCluster cluster, BenchmarkRun run) {
        return Instant.parse(
                cluster.awaitRunStatus(
                                run.getMetadata().getNamespace(),
                                run.getMetadata().getName(),
                                s -> s.getPhase() == Phase.RUNNING)
                        .getStageStartTimes()
                        .getFirst());
    }

    /**
     * Part {@code index} finished the run: {@code report} (every stage's result, as {@link #report}
     * writes them) with state done.
     */
    public static void finishRun(
            KubernetesClient client, BenchmarkRun run, int index, Map<String, String> report) {
        Map<String, String> done = new LinkedHashMap<>(report);
        done.put(PartReport.STATE, PartReport.STATE_DONE);
        write(client, run, index, done);
    }

    /** {@code instant} in nanoseconds since the epoch (millisecond precision). */
    public static long epochNanos(Instant instant) {
        return instant.toEpochMilli() * 1_000_000L;
    }
}
