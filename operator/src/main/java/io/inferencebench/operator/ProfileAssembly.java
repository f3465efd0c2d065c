package io.inferencebench.operator;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.LatencySummary;
import io.inferencebench.crds.v1alpha1.OutputSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.profile.br.BenchmarkReportWriter;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.lpg.LpgDialect;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.ReplicaBalance;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.stats.MetricRecorder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Merges the runner parts of each stage into one StageResult (exact for one runner, merged moments
 * and histograms for several) and writes the LPG profile (in {@code spec.output.lpgDialect}), the
 * Benchmark Report v0.2 beside it when {@code spec.output.formats} asks for one, and the status
 * summary.
 */
public final class ProfileAssembly {

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /**
     * One stage, assembled.
     *
     * @param profile the LPG document, in {@code spec.output.lpgDialect}
     * @param result the status summary
     * @param besides what is stored beside the profile: ConfigMap key to text (the Benchmark Report
     *     v0.2 when {@code spec.output.formats} asks for it); empty otherwise
     */
    public record Assembled(
            JsonNode profile,
            io.inferencebench.crds.v1alpha1.StageSummary result,
            Map<String, String> besides) {}

    private ProfileAssembly() {}

    /**
     * Parses one part's stage result.
     *
     * @param json the part's {@code stage-<n>.json}
     * @return the stage result
     */
    public static StageResult parse(String json) {
        try {
            return JSON.readValue(json, StageResult.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The profile's own dimensions: the stage, the shape of shared-prefix prompts, and a replayed
     * trace (its layout as specified, {@code auto} when the runners told it from the file).
     */
    static Map<String, String> dimensions(BenchmarkRun run, int stage) {
        Map<String, String> dimensions = new LinkedHashMap<>();
        dimensions.put("stage", Integer.toString(stage));
        DatasetSpec dataset = run.getSpec().getWorkload().getDataset();
        if (dataset != null && dataset.getType() == DatasetType.PREFIX_REPETITION) {
            dimensions.put("prefix_repetition", dataset.resolvedPrefixRepetition().describe());
        }
        if (run.getSpec().getWorkload().getModels() != null) {
            dimensions.put(
                    "model_mix",
                    io.inferencebench.crds.v1alpha1.WeightedModel.describe(
                            run.getSpec().getWorkload().getModels()));
        }
        if (dataset != null && dataset.getConversation() != null) {
            dimensions.put("conversation", dataset.getConversation().describe());
        }
        if (dataset != null && dataset.getType() == DatasetType.TRACE) {
            dimensions.put("trace", dataset.resolvedTrace().describe("auto"));
        }
        return dimensions;
    }

    /**
     * Assembles one stage from its parts.
     *
     * @param run the run
     * @param stage 1-based stage
     * @param parts the parts' results of this stage
     * @param model the model the requests used
     * @param usedKeys ConfigMap keys already taken by earlier stages (updated)
     * @param stageStart the stage's barrier instant
     * @param serverMetrics server metrics of the stage window, or {@code null}
     * @return the profile and summary
     */
    public static Assembled assemble(
            BenchmarkRun run,
            int stage,
            List<StageResult> parts,
            String model,
            Set<String> usedKeys,
            Instant stageStart,
            ServerMetricsReport serverMetrics) {
        StageResult merged = parts.size() == 1 ? parts.getFirst() : StageResult.merge(parts);
        var target = run.getSpec().getTarget();
        ProfileContext context =
                new ProfileContext(
                        target.getBackend().wireName(),
                        model,
                        run.getSpec().getWorkload().getTokenizer() != null
                                        && run.getSpec().getWorkload().getTokenizer().getId()
                                                != null
                                ? run.getSpec().getWorkload().getTokenizer().getId()
                                : model,
                        target.getBackend().wireName(),
                        stageStart,
                        run.getMetadata().getName(),
                        run.getMetadata().getNamespace(),
                        run.getSpec().getRunner().getParallelism(),
                        "operator",
                        dimensions(run, stage));
        OutputSpec output = run.getSpec().getOutput();
        JsonNode profile = LpgProfileWriter.write(merged, context, serverMetrics, dialect(output));
        String key = uniqueKey(LpgProfileWriter.fileName(merged, context), stage, usedKeys);
        Map<String, String> besides = new LinkedHashMap<>();
        String reportKey = null;
        if (output != null && output.benchmarkReport()) {
            reportKey = BenchmarkReportWriter.nameBeside(key);
            besides.put(
                    reportKey,
                    BenchmarkReportWriter.toYaml(
                            BenchmarkReportWriter.write(merged, experimentId(run))));
        }

        var result = new io.inferencebench.crds.v1alpha1.StageSummary();
        result.setStage(stage);
        if (!Double.isInfinite(merged.requestedRate)) {
            result.setRequestRate(merged.requestedRate);
        }
        result.setConcurrency(merged.concurrency);
        result.setSent(merged.sent);
        if (merged.due > 0) {
            result.setRequestsDue(merged.due);
            Double scheduled = LpgProfileWriter.scheduledRate(merged);
            result.setScheduledRate(scheduled == null ? null : finite(scheduled));
        }
        result.setCompleted(merged.completed);
        result.setFailed(merged.failed);
        double benchmarkTime = LpgProfileWriter.benchmarkTimeSeconds(merged);
        result.setBenchmarkTimeSeconds(finite(benchmarkTime));
        result.setAchievedRate(finite(LpgProfileWriter.achievedRate(merged)));
        result.setThroughput(benchmarkTime > 0 ? finite(merged.completed / benchmarkTime) : null);
        result.setOutputTokensPerSecond(
                benchmarkTime > 0 ? finite(merged.totalOutputTokens / benchmarkTime) : null);
        result.setTtftMs(summary(merged.ttftMs));
        result.setTpotMs(summary(merged.tpotMs));
        result.setItlMs(summary(merged.itlMs));
        result.setLatencyMs(summary(merged.latencyMs));
        result.setScheduleLagP99Ms(
                merged.scheduleLagMs == null || merged.scheduleLagMs.count() == 0
                        ? null
                        : finite(merged.scheduleLagMs.percentile(99)));
        result.setFailureRatio(finite(merged.failureRatio()));
        if (merged.failed > 0 && merged.errorsByClass != null) {
            java.util.Map<String, Long> classes = new java.util.TreeMap<>();
            merged.errorsByClass.forEach(
                    (k, v) -> {
                        if (v != null && v > 0) {
                            classes.put(k, v);
                        }
                    });
            result.setErrorsByClass(classes);
        }
        LoadVerdict verdict = verdict(merged, run.getSpec().getLoad().getMaxFailureRatio());
        result.setLoadDelivered(verdict.indeterminate() ? null : verdict.delivered());
        result.setLoadDeliveredReason(verdict.reason());
        result.setLoadDeliveredReasons(verdict.reasons().isEmpty() ? null : verdict.reasons());
        result.setLoadDeliveredMessage(verdict.delivered() ? null : verdict.message());
        ReplicaBalance balance = ReplicaBalance.of(serverMetrics);
        if (balance != null) {
            result.setLoadBalanced(balance.balanced());
            result.setLoadBalancedMessage(balance.reason());
            result.setReplicaShares(balance.display());
        }
        PrefixCacheHits cache = PrefixCacheHits.of(serverMetrics);
        if (cache != null && cache.hitRate() != null) {
            result.setPrefixCacheHitRate(finite(cache.hitRate()));
        }
        SloSpec slo = run.getSpec().getSlo();
        if (slo != null && merged.sent > 0) {
            double attainment = (double) merged.goodputRequests / merged.sent;
            result.setSloAttainment(attainment);
            result.setSloMet(attainment >= slo.getMinAttainment());
        }
        result.setStatistics(merged.allExact() && parts.size() == 1 ? "exact" : "merged");
        result.setProfileKey(key);
        result.setBenchmarkReportKey(reportKey);
        if (merged.firstDispatchEpochNanos > 0) {
            result.setStartTime(StatusAggregator.format(epoch(merged.firstDispatchEpochNanos)));
        }
        if (merged.lastCompletionEpochNanos > 0) {
            result.setEndTime(StatusAggregator.format(epoch(merged.lastCompletionEpochNanos)));
        }
        return new Assembled(profile, result, besides);
    }

    /** The profile's dialect: {@code spec.output.lpgDialect}, seed when unset. */
    static LpgDialect dialect(OutputSpec output) {
        return output != null
                        && output.getLpgDialect()
                                == io.inferencebench.crds.v1alpha1.LpgDialect.FINAL
                ? LpgDialect.FINAL
                : LpgDialect.SEED;
    }

    /**
     * {@code run.eid} of the run's Benchmark Reports: the same for every stage of the run (its
     * uid), so that re-assembling a stage writes the same report.
     */
    static String experimentId(BenchmarkRun run) {
        String uid = run.getMetadata().getUid();
        return "inferencebench-"
                + (uid != null && !uid.isBlank()
                        ? uid
                        : run.getMetadata().getNamespace() + "-" + run.getMetadata().getName());
    }

    /**
     * Whether a stage delivered its requested load ({@link LoadVerdict}, the same judgement as the
     * runner's summary and its search probes): the merged schedule, sends, lag and failures of all
     * runner pods, and the most starved runner's CPU.
     *
     * @param merged the merged stage
     * @param maxFailureRatio spec.load.maxFailureRatio ({@code null}: the default)
     * @return the verdict
     */
    public static LoadVerdict verdict(StageResult merged, Double maxFailureRatio) {
        return LoadVerdict.judge(
                LoadVerdict.Figures.of(merged),
                maxFailureRatio == null
                        ? io.inferencebench.crds.v1alpha1.LoadSpec.DEFAULT_MAX_FAILURE_RATIO
                        : maxFailureRatio,
                "spec.load.maxFailureRatio");
    }

    static String uniqueKey(String fileName, int stage, Set<String> used) {
        String key = fileName.replaceAll("[^-._a-zA-Z0-9]", "_");
        if (!used.add(key)) {
            String base = key.endsWith(".json") ? key.substring(0, key.length() - 5) : key;
            key = base + "-stage" + stage + ".json";
            used.add(key);
        }
        return key;
    }

    /** Keys in use, for {@link #assemble}. */
    public static Set<String> keys(List<io.inferencebench.crds.v1alpha1.StageSummary> results) {
        Set<String> keys = new HashSet<>();
        if (results != null) {
            results.forEach(r -> keys.add(r.getProfileKey()));
        }
        return keys;
    }

    private static LatencySummary summary(MetricRecorder recorder) {
        if (recorder == null || recorder.count() == 0) {
            return null;
        }
        return new LatencySummary(
                finite(recorder.mean()),
                finite(recorder.percentile(50)),
                finite(recorder.percentile(90)),
                finite(recorder.percentile(99)),
                finite(recorder.max()));
    }

    private static Double finite(double value) {
        return Double.isFinite(value) ? value : null;
    }

    private static Instant epoch(long nanos) {
        return Instant.ofEpochSecond(nanos / 1_000_000_000L, nanos % 1_000_000_000L);
    }

    /** Results list copy helper. */
    static List<io.inferencebench.crds.v1alpha1.StageSummary> copy(
            List<io.inferencebench.crds.v1alpha1.StageSummary> results) {
        return results == null ? new ArrayList<>() : new ArrayList<>(results);
    }
}
