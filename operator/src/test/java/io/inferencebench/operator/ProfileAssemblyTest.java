package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ConfigMap keys of profiles, made from their LPG file names. */
class ProfileAssemblyTest {

    /** What the API server accepts as a ConfigMap data key. */
    private static final String CONFIG_MAP_KEY = "[-._a-zA-Z0-9]{1,253}";

    @Test
    void aLongOrOddModelIdStillGivesValidDistinctConfigMapKeys() {
        StageResult stage = new StageResult();
        stage.requestedRate = 20;
        stage.firstDispatchEpochNanos = 1_700_000_000_000_000_000L;
        Set<String> used = new HashSet<>();
        List<String> models =
                List.of(
                        "acme/" + "m".repeat(300),
                        "acme/" + "\u6a21\u578b".repeat(120),
                        "acme/line\nbreak/and\ttab");
        for (String model : models) {
            ProfileContext context =
                    new ProfileContext(
                            "vllm",
                            model,
                            null,
                            "vllm",
                            Instant.EPOCH,
                            "run",
                            "ns",
                            1,
                            "operator",
                            Map.of());
            String name = LpgProfileWriter.fileName(stage, context);
            // The same name for stages 1 and 12: the second key gets the stage as a suffix.
            String first = ProfileAssembly.uniqueKey(name, 1, used);
            String again = ProfileAssembly.uniqueKey(name, 12, used);
            assertThat(first).as(model).matches(CONFIG_MAP_KEY).startsWith("vllm-20.0qps-");
            assertThat(again).as(model).matches(CONFIG_MAP_KEY).endsWith("-stage12.json");
            assertThat(again).isNotEqualTo(first);
        }
    }

    private static BenchmarkRun run(String dataset) {
        return Serialization.unmarshal(
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: run, namespace: ns}
                spec:
                  target: {service: {name: vllm, port: 8000}}
                  workload:
                    dataset: %s
                  load: {stages: [{requestRate: 2, numPrompts: 10}]}
                """
                        .formatted(dataset),
                BenchmarkRun.class);
    }

    @Test
    void aSharedPrefixRunsProfilesNameTheShapeAsTheCommandLinesDo() {
        assertThat(
                        ProfileAssembly.dimensions(
                                run(
                                        "{type: prefix_repetition, prefixRepetition: {prefixTokens:"
                                                + " 1024, suffixTokens: 128, prefixes: 8}}"),
                                2))
                .containsExactly(
                        Map.entry("stage", "2"),
                        Map.entry(
                                "prefix_repetition", "prefixes=8 prefix_len=1024 suffix_len=128"));
        // Defaults fill what is left out; another dataset has only the stage.
        assertThat(ProfileAssembly.dimensions(run("{type: prefix_repetition}"), 1))
                .containsEntry("prefix_repetition", "prefixes=10 prefix_len=256 suffix_len=256");
        assertThat(ProfileAssembly.dimensions(run("{type: random}"), 1))
                .containsExactly(Map.entry("stage", "1"));
    }

    @Test
    void aTraceRunHasOneReplayStageAndItsProfilesNameTheReplay() {
        BenchmarkRun run =
                Serialization.unmarshal(
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkRun
                        metadata: {name: run, namespace: ns}
                        spec:
                          target: {service: {name: vllm, port: 8000}}
                          workload:
                            dataset:
                              type: trace
                              source: {configMapRef: {name: traces, key: mooncake.jsonl}}
                              trace: {timeScale: 0.5, start: 10m}
                          load: {numPrompts: 400, duration: 5m}
                          runner: {parallelism: 3}
                        """,
                        BenchmarkRun.class);
        assertThat(ProfileAssembly.dimensions(run, 1))
                .containsExactly(
                        Map.entry("stage", "1"),
                        Map.entry("trace", "format=auto time_scale=0.5 start=10m"));
        // One stage, bounded as the load says, without a rate: the runners replay the trace.
        List<io.inferencebench.crds.v1alpha1.StageSpec> stages = CapacityProgress.stages(run, null);
        assertThat(stages).hasSize(1);
        assertThat(stages.get(0).getNumPrompts()).isEqualTo(400);
        assertThat(stages.get(0).getDuration()).isEqualTo("5m");
        assertThat(stages.get(0).getRequestRate()).isNull();
        assertThat(stages.get(0).getConcurrency()).isNull();
        List<io.inferencebench.crds.workorder.StageShare> shares =
                io.inferencebench.crds.workorder.StageShares.of(
                        run.getSpec().getLoad(), 3, run.getSpec().replaysTrace());
        assertThat(shares).hasSize(1);
        assertThat(shares.get(0).promptsPerPod()).containsExactly(134, 133, 133);
        assertThat(shares.get(0).ratePerPod()).isNull();
    }

    @Test
    void theStatusCarriesTheHitRateTheReplicasCountedAndTheProfileEachReplicas() {
        Map<String, List<ServerMetricSummary>> perReplica = new LinkedHashMap<>();
        perReplica.put(
                "vllm-0",
                List.of(
                        ServerMetricSummary.counter(
                                "vllm:prefix_cache_queries_total", 4000 / 10.0, 4000, 10),
                        ServerMetricSummary.counter(
                                "vllm:prefix_cache_hits_total", 3000 / 10.0, 3000, 10)));
        perReplica.put(
                "vllm-1",
                List.of(
                        ServerMetricSummary.counter(
                                "vllm:prefix_cache_queries_total", 4000 / 10.0, 4000, 10),
                        ServerMetricSummary.counter(
                                "vllm:prefix_cache_hits_total", 1000 / 10.0, 1000, 10)));
        ServerMetricsReport report =
                new ServerMetricsReport(
                        List.of(
                                ServerMetricSummary.counter(
                                        "vllm:prefix_cache_queries_total", 8000 / 10.0, 8000, 10),
                                ServerMetricSummary.counter(
                                        "vllm:prefix_cache_hits_total", 4000 / 10.0, 4000, 10)),
                        perReplica,
                        null);
        StageResult part = new StageResult();
        part.requestedRate = 2;
        part.sent = 10;
        part.completed = 10;
        ProfileAssembly.Assembled assembled =
                ProfileAssembly.assemble(
                        run("{type: prefix_repetition}"),
                        1,
                        List.of(part),
                        "m",
                        new HashSet<>(),
                        Instant.EPOCH,
                        report);
        assertThat(assembled.result().getPrefixCacheHitRate()).isEqualTo(0.5);
        assertThat(
                        assembled
                                .profile()
                                .at("/metrics/prefix_cache/by_replica/vllm-1/hit_rate")
                                .asDouble())
                .isEqualTo(0.25);
        // Without the counters (no prefix caching) the status has no rate rather than a zero.
        assertThat(
                        ProfileAssembly.assemble(
                                        run("{type: random}"),
                                        1,
                                        List.of(part),
                                        "m",
                                        new HashSet<>(),
                                        Instant.EPOCH,
                                        ServerMetricsReport.empty())
                                .result()
                                .getPrefixCacheHitRate())
                .isNull();
    }
}
