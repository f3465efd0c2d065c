package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.RunSummary;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.OutputConfigMaps;
import io.inferencebench.operator.Parts;
import io.inferencebench.operator.ProfileAssembly;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.environment.EnvironmentFingerprint;
import io.inferencebench.operator.metrics.ServerMetricsCondition;
import io.inferencebench.operator.metrics.StageWindows;
import io.inferencebench.profile.lpg.Repeats;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A finished stage into its profile: the runner parts' results merged ({@link ProfileAssembly}),
 * the stage window's server metrics, the environment, stored in the output ConfigMaps and status.
 */
public final class StageAssembly {

    private final RunCluster cluster;
    private final StageWindows windows;
    private final Clock clock;

    public StageAssembly(RunCluster cluster, StageWindows windows, Clock clock) {
        this.cluster = cluster;
        this.windows = windows;
        this.clock = clock;
    }

    /**
     * Assembles a stage every runner finished: merges the parts' results with the stage window's
     * server metrics into its profile, stores it in the output ConfigMaps, and adds the result, the
     * profile and the summary columns to status. Nothing happens when the stage is in status
     * already or no part has its result.
     *
     * @param stage the finished stage, 1-based
     */
    public void assemble(RunTurn turn, int stage) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        List<io.inferencebench.profile.lpg.StageResult> stageParts = new ArrayList<>();
        for (Parts.Part part : turn.parts().all()) {
            part.stageResult(stage).map(ProfileAssembly::parse).ifPresent(stageParts::add);
        }
        if (stageParts.isEmpty()) {
            return;
        }
        List<StageSummary> results = turn.results();
        if (results.stream().anyMatch(r -> r.getStage() == stage)) {
            return;
        }
        Set<String> keys = ProfileAssembly.keys(results);
        String start = status.view().getStageStartTimes().get(stage - 1);
        String model = status.view().getModel() != null ? status.view().getModel() : "model";
        long startMillis = Instant.parse(start).toEpochMilli();
        // the runners' first request of the stage: a window baseline answered after it is late
        Long firstRequestMillis =
                stageParts.stream()
                        .mapToLong(p -> p.firstDispatchEpochNanos)
                        .filter(n -> n > 0)
                        .min()
                        .stream()
                        .mapToObj(n -> n / 1_000_000L)
                        .findFirst()
                        .orElse(null);
        ServerMetricsReport serverMetrics =
                windows.report(
                        run,
                        stage,
                        startMillis,
                        clock.instant().toEpochMilli(),
                        firstRequestMillis);
        if (serverMetrics != null
                && serverMetrics.coverage() != null
                && serverMetrics.coverage().succeeded() == 0) {
            boolean prometheus = run.getSpec().getMetrics().getPrometheus() != null;
            List<String> errors = serverMetrics.coverage().errors();
            cluster.event(
                    run,
                    EventRecorder.WARNING,
                    prometheus
                            ? ServerMetricsCondition.PROMETHEUS_QUERY_FAILED
                            : ServerMetricsCondition.SCRAPES_FAILED,
                    "no server metrics for stage "
                            + stage
                            + (prometheus ? " from Prometheus" : "")
                            + (errors.isEmpty() ? "" : ": " + errors.getFirst())
                            + "; the run continues without them");
        }
        ProfileAssembly.Assembled assembled =
                ProfileAssembly.assemble(
                        run, stage, stageParts, model, keys, Instant.parse(start), serverMetrics);
        StageCacheState.annotate(
                status,
                run,
                stage,
                assembled.profile() instanceof ObjectNode document ? document : null,
                assembled.result(),
                turn.parts().all().stream()
                        .filter(p -> p.index() == 0)
                        .flatMap(p -> p.stageWarmed(stage).stream())
                        .findFirst()
                        .orElse(null));
        if (assembled.profile() instanceof ObjectNode document) {
            markRepeat(run, stage, document);
            EnvironmentFingerprint.annotate(
                    document,
                    status.view().getEnvironment(),
                    Instant.parse(start),
                    clock.instant());
        }
        OutputConfigMaps.Stored stored =
                cluster.storeProfile(
                        run,
                        status.view().getProfiles(),
                        status.view().getProfileConfigMaps(),
                        results,
                        assembled.result().getProfileKey(),
                        assembled.profile(),
                        assembled.besides());
        results.add(assembled.result());
        List<JsonNode> profiles = stored.statusProfiles();
        List<String> configMaps = stored.configMaps();
        status.condition(ConditionTypes.RESULTS_STORED, true, stored.reason(), stored.message());
        status.apply(
                s -> {
                    s.setResults(results);
                    s.setProfiles(profiles);
                    s.setProfileConfigMap(configMaps.getFirst());
                    s.setProfileConfigMaps(configMaps);
                    RunSummary summary = LiveView.summary(s);
                    StageSummary r = assembled.result();
                    summary.setRps(
                            r.getThroughput() == null
                                    ? null
                                    : String.format(Locale.ROOT, "%.2f", r.getThroughput()));
                    summary.setTtftP50(
                            r.getTtftMs() == null ? null : LiveView.millis(r.getTtftMs().getP50()));
                    summary.setLatencyP99(
                            r.getLatencyMs() == null
                                    ? null
                                    : LiveView.millis(r.getLatencyMs().getP99()));
                    summary.setReplicaShares(r.getReplicaShares());
                });
    }

    /** Every stage's profile document, from status or, when status has none, the ConfigMaps. */
    public List<JsonNode> profiles(RunTurn turn) {
        return cluster.profiles(
                turn.run(),
                turn.status().view().getProfiles(),
                turn.status().view().getProfileConfigMaps(),
                turn.results());
    }

    /** With {@code load.repeats}: which repeat the stage is, in its profile's dimensions. */
    static void markRepeat(BenchmarkRun run, int stage, ObjectNode profile) {
        LoadSpec load = run.getSpec().getLoad();
        int stages =
                (run.getSpec().replaysTrace() ? load.replayStages() : load.resolvedStages()).size();
        String repeat = Repeats.label(stage - 1, stages, load.repeatCount());
        if (repeat != null && profile.get("dimensions") instanceof ObjectNode dimensions) {
            dimensions.put(Repeats.DIMENSION, repeat);
        }
    }
}
