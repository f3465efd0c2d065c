package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.testkit.BenchmarkReportSchema;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A 50-stage run of 20 runners against two scraped replicas, stored through the operator's path
 * (parts serialized as runners write them, {@link ProfileAssembly} merging them with the stage's
 * server metrics, {@link OutputConfigMaps} storing, the status patched as the reconciler patches
 * it) on a real kube-apiserver + etcd, whose limits decide: every profile must read back equal.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeRunResultsIT {

    private static final long CONFIGMAP_LIMIT = 1024 * 1024;
    private static final long ETCD_OBJECT_LIMIT = 1536 * 1024;

    private final ObjectMapper json = new ObjectMapper();

    /** Closed after the last test (JUnit closes the fields it marks). */
    @AutoClose private OperatorTestCluster cluster;

    private KubernetesClient client;

    @BeforeAll
    void startApiServer() {
        cluster = OperatorTestCluster.start().withBenchmarkRunCrd();
        client = cluster.client();
    }

    private BenchmarkRun createRun(String name, int stages, int parallelism) {
        return createRun(name, stages, parallelism, "");
    }

    /** {@code output} is the spec's output line (with its indent), or empty. */
    private BenchmarkRun createRun(String name, int stages, int parallelism, String output) {
        String namespace = cluster.createNamespace("it-");
        List<String> rates = new ArrayList<>();
        for (int i = 1; i <= stages; i++) {
            rates.add(Integer.toString(i * 2));
        }
        String yaml =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target: {service: {name: vllm, port: 8000}, model: meta-llama/Llama-3.1-8B-Instruct}
                  load: {requestRates: [%s], numPrompts: %d, cooldown: 0s}
                  runner: {parallelism: %d}
                %s"""
                        .formatted(
                                name,
                                String.join(", ", rates),
                                30 * parallelism,
                                parallelism,
                                output);
        return cluster.createRun(namespace, yaml);
    }

    private record Stored(
            long largestPartBytes,
            BenchmarkRun run,
            List<JsonNode> profiles,
            List<io.inferencebench.crds.v1alpha1.StageSummary> results,
            OutputConfigMaps.Stored last) {}

    /** Stage by stage, what the reconciler does when a stage's parts are all done. */
    private Stored runThroughTheOperatorsPath(BenchmarkRun run, int stages, int parallelism)
            throws Exception {
        OutputConfigMaps outputs = new OutputConfigMaps(client);
        List<io.inferencebench.crds.v1alpha1.StageSummary> results = new ArrayList<>();
        List<JsonNode> profiles = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        OutputConfigMaps.Stored stored = null;
        BenchmarkRun current = run;
        // a runner's part ConfigMap holds its last two stage results (it drops stage n-2's when
        // it writes stage n's: by then the operator has stored it); the largest such pair counts
        long[] partBytes = new long[parallelism];
        long[] previousBytes = new long[parallelism];
        for (int stage = 1; stage <= stages; stage++) {
            List<StageResult> parts = new ArrayList<>();
            double share = stage * 2.0 / parallelism;
            for (int runner = 0; runner < parallelism; runner++) {
                // as a part ConfigMap carries it: the runner's JSON, parsed by the operator
                String partJson =
                        json.writeValueAsString(LargeRunFixture.part(stage, runner, 30, share, 42));
                parts.add(ProfileAssembly.parse(partJson));
                long bytes = partJson.getBytes(StandardCharsets.UTF_8).length;
                partBytes[runner] = Math.max(partBytes[runner], previousBytes[runner] + bytes);
                previousBytes[runner] = bytes;
            }
            ProfileAssembly.Assembled assembled =
                    ProfileAssembly.assemble(
                            current,
                            stage,
                            parts,
                            "meta-llama/Llama-3.1-8B-Instruct",
                            keys,
                            Instant.parse("2026-12-01T10:00:00Z").plusSeconds(stage * 120L),
                            LargeRunFixture.serverMetrics(stage, 60));
            BenchmarkRunStatus status =
                    current.getStatus() == null ? new BenchmarkRunStatus() : current.getStatus();
            stored =
                    outputs.add(
                            current,
                            status.getProfiles(),
                            status.getProfileConfigMaps(),
                            results,
                            assembled.result().getProfileKey(),
                            assembled.profile(),
                            assembled.besides());
            results.add(assembled.result());
            profiles.add(assembled.profile());
            status.setResults(new ArrayList<>(results));
            status.setProfiles(stored.statusProfiles());
            status.setProfileConfigMap(stored.configMaps().getFirst());
            status.setProfileConfigMaps(stored.configMaps());
            current.setStatus(status);
            current = client.resource(current).updateStatus();
        }
        return new Stored(
                java.util.Arrays.stream(partBytes).max().orElse(0),
                current,
                profiles,
                results,
                stored);
    }

    /** {@code run} as the API server has it now. */
    private BenchmarkRun reread(BenchmarkRun run) {
        return client.resources(BenchmarkRun.class)
                .inNamespace(run.getMetadata().getNamespace())
                .withName(run.getMetadata().getName())
                .get();
    }

    @Test
    void fiftyStagesOfTwentyRunnersAndTwoReplicasKeepEveryProfile() throws Exception {
        BenchmarkRun run = createRun("large", 50, 20);
        Stored stored = runThroughTheOperatorsPath(run, 50, 20);

        BenchmarkRun back = reread(run);
        BenchmarkRunStatus status = back.getStatus();
        assertThat(status.getResults()).hasSize(50);
        JsonNode resultsBack = json.valueToTree(status.getResults());
        JsonNode resultsWritten = json.valueToTree(stored.results());
        assertThat(resultsBack).isEqualTo(resultsWritten);
        // too large for status: summaries and keys there, profiles in the ConfigMaps
        assertThat(status.getProfiles()).isNull();
        assertThat(stored.last().reason()).isEqualTo("ConfigMapsOnly");
        assertThat(stored.last().message())
                .contains("status.results keeps each stage's summary and profileKey")
                .contains(String.join(", ", status.getProfileConfigMaps()));
        assertThat(status.getProfileConfigMaps()).hasSizeGreaterThan(1).startsWith("large-profile");

        Map<String, JsonNode> readBack = new TreeMap<>();
        long profileBytes = 0;
        for (String name : status.getProfileConfigMaps()) {
            ConfigMap map =
                    client.configMaps()
                            .inNamespace(run.getMetadata().getNamespace())
                            .withName(name)
                            .get();
            long bytes = OutputConfigMapsTest.dataBytes(map);
            System.out.printf(
                    "ConfigMap %s: %d profiles, %,d data bytes%n",
                    name, map.getData().size(), bytes);
            assertThat(bytes)
                    .isLessThanOrEqualTo(OutputConfigMaps.MAX_DATA_BYTES)
                    .isLessThan(CONFIGMAP_LIMIT);
            profileBytes += bytes;
            for (Map.Entry<String, String> e : map.getData().entrySet()) {
                assertThat(readBack.put(e.getKey(), json.readTree(e.getValue())))
                        .as(e.getKey())
                        .isNull();
            }
        }
        assertThat(readBack).hasSize(50);
        for (int i = 0; i < 50; i++) {
            String key = stored.results().get(i).getProfileKey();
            assertThat(sameJson(readBack.get(key), stored.profiles().get(i))).as(key).isTrue();
            // per-replica server metrics survived the trip
            assertThat(readBack.get(key).at("/metrics/server_metrics_by_replica").size())
                    .isEqualTo(2);
        }
        // the operator's reading path (for the ServerMetricsCollected condition) sees them too
        List<JsonNode> viaOperator =
                new OutputConfigMaps(client)
                        .profiles(
                                back,
                                status.getProfiles(),
                                status.getProfileConfigMaps(),
                                status.getResults());
        assertThat(viaOperator).hasSize(50);
        for (int i = 0; i < 50; i++) {
            assertThat(sameJson(viaOperator.get(i), stored.profiles().get(i))).isTrue();
        }

        long statusBytes = json.writeValueAsString(back).getBytes(StandardCharsets.UTF_8).length;
        long allInStatus =
                statusBytes
                        + json.writeValueAsString(stored.profiles())
                                .getBytes(StandardCharsets.UTF_8)
                                .length;
        System.out.printf(
                "profiles %,d bytes in %d ConfigMaps; the run object %,d bytes; with every profile in"
                        + " status it would be %,d bytes (etcd limit %,d)%n",
                profileBytes,
                status.getProfileConfigMaps().size(),
                statusBytes,
                allInStatus,
                ETCD_OBJECT_LIMIT);
        assertThat(statusBytes).isLessThan(ETCD_OBJECT_LIMIT / 4);
        // what the runners' part ConfigMaps carry for this run: two stage results each at most
        System.out.printf("largest part: %,d bytes of stage results%n", stored.largestPartBytes());
        assertThat(stored.largestPartBytes()).isLessThan(CONFIGMAP_LIMIT);
        // the limit the split avoids is real: one ConfigMap with every profile is refused
        ConfigMap single =
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("large-all-in-one")
                        .withNamespace(run.getMetadata().getNamespace())
                        .endMetadata()
                        .withData(new TreeMap<>(readBackAsPrettyJson(readBack)))
                        .build();
        assertThat(profileBytes).isGreaterThan(CONFIGMAP_LIMIT);
        assertThatThrownBy(() -> client.resource(single).create())
                .isInstanceOf(KubernetesClientException.class)
                .satisfies(
                        e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422));
    }

    /**
     * Equal documents, numbers compared by value: the API server writes a stored {@code 1.0} back
     * as {@code 1} (same number, other JSON node type).
     */
    private static boolean sameJson(JsonNode a, JsonNode b) {
        return a.equals(
                (x, y) -> {
                    if (x.isNumber() && y.isNumber()) {
                        return Double.compare(x.doubleValue(), y.doubleValue());
                    }
                    return x.equals(y) ? 0 : 1;
                },
                b);
    }

    private static Map<String, String> readBackAsPrettyJson(Map<String, JsonNode> profiles) {
        Map<String, String> data = new TreeMap<>();
        profiles.forEach((k, v) -> data.put(k, OutputConfigMaps.pretty(v)));
        return data;
    }

    /**
     * A run asking for the final dialect and Benchmark Reports, large enough to fill more than one
     * output ConfigMap: each stage's report stays beside its profile through every rewrite of the
     * ConfigMaps (a rewrite rebuilt them from the profiles alone before), every report validates
     * against the BR0.2 schema, and the operator's reading path still gets the profiles only.
     */
    @Test
    void benchmarkReportsBesideFinalProfilesSurviveEveryRewriteAndValidate() throws Exception {
        int stages = 45;
        BenchmarkRun run =
                createRun(
                        "reports",
                        stages,
                        20,
                        "  output: {lpgDialect: final, formats: [lpg, br0.2]}\n");
        Stored stored = runThroughTheOperatorsPath(run, stages, 20);
        BenchmarkRun back = reread(run);
        BenchmarkRunStatus status = back.getStatus();
        assertThat(status.getProfileConfigMaps()).as("split over ConfigMaps").hasSizeGreaterThan(1);

        Map<String, String> data = new TreeMap<>();
        for (String name : status.getProfileConfigMaps()) {
            ConfigMap map =
                    client.configMaps()
                            .inNamespace(run.getMetadata().getNamespace())
                            .withName(name)
                            .get();
            assertThat(OutputConfigMapsTest.dataBytes(map))
                    .isLessThanOrEqualTo(OutputConfigMaps.MAX_DATA_BYTES);
            map.getData().forEach((k, v) -> assertThat(data.put(k, v)).as("%s once", k).isNull());
        }
        assertThat(data).hasSize(2 * stages);
        YAMLMapper yaml = new YAMLMapper();
        Set<String> experiments = new HashSet<>();
        for (int i = 0; i < stages; i++) {
            var result = status.getResults().get(i);
            JsonNode profile = json.readTree(data.get(result.getProfileKey()));
            assertThat(profile.at("/dimensions/lpg_dialect").asText()).isEqualTo("final");
            String reportKey = result.getBenchmarkReportKey();
            assertThat(reportKey).isNotNull();
            assertThat(data).as("stage %d's report", i + 1).containsKey(reportKey);
            JsonNode report = yaml.readTree(data.get(reportKey));
            assertThat(BenchmarkReportSchema.problems(report)).as(reportKey).isEmpty();
            experiments.add(report.at("/run/eid").asText());
            assertThat(report.at("/run/uid").asText()).endsWith("-stage-" + (i + 1));
            JsonNode aggregate = report.at("/results/request_performance/aggregate");
            JsonNode m = profile.get("metrics");
            assertThat(aggregate.at("/requests/total").asLong())
                    .isEqualTo(m.get("requests_sent").asLong());
            assertThat(aggregate.at("/throughput/output_token_rate/mean").asDouble())
                    .isCloseTo(m.get("throughput").asDouble(), within(1e-6));
            assertThat(aggregate.at("/latency/time_to_first_token/p99").asDouble())
                    .isCloseTo(m.get("p99_ttft_ms").asDouble(), within(1e-9));
        }
        assertThat(experiments).as("one experiment id for the run's stages").hasSize(1);
        List<JsonNode> viaOperator =
                new OutputConfigMaps(client)
                        .profiles(
                                back,
                                status.getProfiles(),
                                status.getProfileConfigMaps(),
                                status.getResults());
        assertThat(viaOperator).hasSize(stages).allMatch(p -> p.has("metrics"));
        for (int i = 0; i < stages; i++) {
            assertThat(sameJson(viaOperator.get(i), stored.profiles().get(i))).isTrue();
        }
    }

    @Test
    void aSmallRunKeepsItsProfilesInStatusAndOneConfigMap() throws Exception {
        BenchmarkRun run = createRun("small", 3, 2);
        Stored stored = runThroughTheOperatorsPath(run, 3, 2);

        BenchmarkRunStatus status = reread(run).getStatus();
        assertThat(status.getProfiles()).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(sameJson(status.getProfiles().get(i), stored.profiles().get(i))).isTrue();
        }
        assertThat(status.getProfileConfigMaps()).containsExactly("small-profile");
        assertThat(stored.last().reason()).isEqualTo("InStatus");
        ConfigMap map =
                client.configMaps()
                        .inNamespace(run.getMetadata().getNamespace())
                        .withName("small-profile")
                        .get();
        assertThat(map.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getName()).isEqualTo("small"));
        for (int i = 0; i < 3; i++) {
            JsonNode inMap =
                    json.readTree(map.getData().get(stored.results().get(i).getProfileKey()));
            assertThat(sameJson(inMap, stored.profiles().get(i))).isTrue();
        }
    }
}
