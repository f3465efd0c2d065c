package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.e2e.HttpGet;
import io.inferencebench.e2e.PodYaml;
import io.inferencebench.e2e.SimulatorDeployment;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Server metrics end to end (issue 5) on the real cluster ({@link ChartCluster}: the Helm chart's
 * operator Deployment, runner pods from the runner image, simulator replicas from the model-sim
 * image, every namespace enforcing Pod Security {@code restricted}): the operator scrapes the
 * simulator's {@code /metrics} on every ready endpoint during each stage and writes the statistics
 * into the LPG profile ({@code metrics.server_metrics}, {@code metrics.server_metrics_by_replica},
 * {@code metrics.server_metrics_coverage}, {@code summary_stats.stats[].model_server_metrics}). The
 * Prometheus source reads the same values from a Prometheus pod (a test-only image built by {@code
 * e2e/scripts/prometheus-image.sh}) through its Service.
 *
 * <p>Expected values are computed here from the simulator's flags only, never read back from the
 * code under test. Needs root and {@code make images}; part of the E2E tier of {@code make test}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ServerMetricsClusterE2E {

    static final String MODEL = "tiny-model";
    static final String NS_FAKE = "sm-fake";
    static final String NS_LATENCY = "sm-latency";
    static final String NS_LOSS = "sm-loss";
    static final String NS_PROM = "sm-prom";
    static final String NS_BALANCE = "sm-balance";
    static final String PROMETHEUS_IMAGE = "ghcr.io/inferencebench/prometheus-e2e:test";
    static final int PROMETHEUS_PORT = 9090;

    /** vLLM's (and the simulator's) TTFT bucket bounds, seconds. */
    static final double[] TTFT_BUCKETS = {
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
        20.0, 40.0, 80.0, 160.0, 640.0, 2560.0
    };

    /** vLLM's inter-token-latency bucket bounds, seconds. */
    static final double[] ITL_BUCKETS = {
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
        20.0, 40.0, 80.0
    };

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** Closed after the last test (null when it never started: JUnit then only logs that). */
    @AutoClose private static ChartCluster cluster;

    private static KubernetesClient client;

    @BeforeAll
    static void startCluster() {
        cluster =
                ChartCluster.start(
                        List.of(NS_FAKE, NS_LATENCY, NS_LOSS, NS_PROM, NS_BALANCE),
                        Path.of("target/server-metrics-cluster-logs").toAbsolutePath());
        client = cluster.client;
        cluster.cluster.importImages(List.of(prometheusImage()));
    }

    // ---------------------------------------------------------------- the simulator's fake values

    /** One simulator replica reporting fixed values: what {@code --fake-metrics} says. */
    record FakeReplica(
            String name,
            int running,
            int waiting,
            double kvCacheUsage,
            int[] ttftBuckets,
            int[] tpotBuckets,
            int[] e2eBuckets) {

        String json() {
            return """
                    {"running-requests": %d, "waiting-requests": %d, "kv-cache-usage": %s,
                     "ttft-buckets-values": %s, "tpot-buckets-values": %s,
                     "e2erl-buckets-values": %s,
                     "request-prompt-tokens": [16, 16, 32], "request-generation-tokens": [8, 8],
                     "request-success-total": {"stop": 12, "length": 3}}
                    """
                    .formatted(
                            running,
                            waiting,
                            Double.toString(kvCacheUsage),
                            json(ttftBuckets),
                            json(tpotBuckets),
                            json(e2eBuckets))
                    .replace('\n', ' ');
        }

        private static String json(int[] values) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < values.length; i++) {
                sb.append(i == 0 ? "" : ", ").append(values[i]);
            }
            return sb.append(']').toString();
        }

        SimulatorDeployment deployment() {
            return cluster.simulator("sim-" + name, MODEL)
                    .appLabel("sim")
                    .podLabel("replica", name)
                    .service(null)
                    .timeToFirstToken(5)
                    .interTokenLatency(1)
                    .fakeMetrics(json());
        }
    }

    // Values are binary fractions so sums and means are exact in floating point: the profile must
    // equal them exactly, not approximately.
    static final FakeReplica REPLICA_A =
            new FakeReplica(
                    "a", 3, 2, 0.25, new int[] {0, 0, 1, 4, 2}, new int[] {5, 3}, new int[] {2, 1});
    static final FakeReplica REPLICA_B =
            new FakeReplica(
                    "b",
                    5,
                    7,
                    0.625,
                    new int[] {0, 1, 0, 0, 6, 1},
                    new int[] {0, 2, 2},
                    new int[] {0, 0, 4});

    /** Gauges of the vLLM catalog and how replicas combine: requests add up, usage averages. */
    static Map<String, Double> expectedGaugeAggregate(List<FakeReplica> replicas) {
        Map<String, Double> out = new LinkedHashMap<>();
        double running = 0;
        double waiting = 0;
        double kv = 0;
        for (FakeReplica r : replicas) {
            running += r.running();
            waiting += r.waiting();
            kv += r.kvCacheUsage();
        }
        out.put("vllm:num_requests_running", running);
        out.put("vllm:num_requests_waiting", waiting);
        out.put("vllm:kv_cache_usage_perc", kv / replicas.size());
        // the simulator also exposes vLLM's old name, with the same value: written under both
        out.put("vllm:gpu_cache_usage_perc", kv / replicas.size());
        return out;
    }

    static Map<String, Double> expectedGauges(FakeReplica r) {
        return expectedGaugeAggregate(List.of(r));
    }

    /** Counters and histograms the fake document sets; fixed values, so nothing increases. */
    static final List<String> FIXED_COUNTERS =
            List.of(
                    "vllm:prompt_tokens_total",
                    "vllm:generation_tokens_total",
                    "vllm:request_success_total");

    static final List<String> FIXED_HISTOGRAMS =
            List.of(
                    "vllm:time_to_first_token_seconds",
                    "vllm:inter_token_latency_seconds",
                    // the deprecated name the simulator also exposes: written beside the new one
                    "vllm:time_per_output_token_seconds",
                    "vllm:e2e_request_latency_seconds",
                    "vllm:request_prompt_tokens",
                    "vllm:request_generation_tokens");

    // ---------------------------------------------------------------- scenarios

    @Test
    @Order(1)
    void fakeMetricsOfTwoReplicasGiveExactlyTheExpectedStatistics() throws Exception {
        String ns = NS_FAKE;
        Map<String, String> podOf = deployFakePair(ns);
        // the metrics port by name: the Service's port "http", as its EndpointSlice lists it
        createRun(ns, run("fake", "sim", 4, 16, "    port: http\n"));

        BenchmarkRun done = awaitPhase(ns, "fake", Duration.ofMinutes(3), Phase.SUCCEEDED);
        JsonNode profile = done.getStatus().getProfiles().get(0);
        JsonNode metrics = profile.get("metrics");
        System.out.println(
                "fake pair, direct scraping: server_metrics = "
                        + metrics.get("server_metrics")
                        + "\ncoverage = "
                        + metrics.get("server_metrics_coverage"));

        assertExactFakeStatistics(metrics, podOf, List.of(REPLICA_A, REPLICA_B));
        assertModelServerMetricsMirrorServerMetrics(profile);

        JsonNode coverage = metrics.get("server_metrics_coverage");
        assertThat(coverage.get("replicas").asInt()).isEqualTo(2);
        assertThat(coverage.get("failed").asInt()).isZero();
        assertThat(coverage.get("errors")).isEmpty();
        // A 4 s stage scraped every second, plus the start barrier's and the end's rounds: at
        // least 5 rounds of 2 replicas; every round attempted is expected, and both healthy
        // replicas answered each one.
        assertThat(coverage.get("succeeded").asInt())
                .as("coverage %s", coverage)
                .isEqualTo(coverage.get("expected").asInt())
                .isGreaterThanOrEqualTo(10)
                .isEven();
        assertThat(coverage.get("ratio").asDouble()).isEqualTo(1.0);
        assertThat(done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
    }

    @Test
    @Order(2)
    void realLatencyPutsTheServerTtftAndItlMeansWithinOneBucketOfTheFlags() throws Exception {
        int ttftMs = 50;
        int itlMs = 5;
        int prompts = 24;
        String ns = NS_LATENCY;
        cluster.simulator("sim", MODEL)
                .timeToFirstToken(ttftMs)
                .interTokenLatency(itlMs)
                .deploy(client, ns, Duration.ofMinutes(2));
        createRun(ns, run("latency", "sim", 8, prompts, ""));

        BenchmarkRun done = awaitPhase(ns, "latency", Duration.ofMinutes(3), Phase.SUCCEEDED);
        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        JsonNode server = metrics.get("server_metrics");
        System.out.println("real latency, direct scraping: server_metrics = " + server);

        JsonNode ttft = server.get("vllm:time_to_first_token_seconds");
        assertThat(ttft).as("TTFT histogram in %s", server).isNotNull();
        assertWithinOneBucket("TTFT mean", number(ttft, "Mean"), ttftMs / 1000.0, TTFT_BUCKETS);
        assertWithinOneBucket("TTFT median", number(ttft, "Median"), ttftMs / 1000.0, TTFT_BUCKETS);
        long ttftCount = Math.round(number(ttft, "Count"));

        JsonNode itl = server.get("vllm:inter_token_latency_seconds");
        assertThat(itl).as("ITL histogram in %s", server).isNotNull();
        assertWithinOneBucket("ITL mean", number(itl, "Mean"), itlMs / 1000.0, ITL_BUCKETS);
        JsonNode e2e = server.get("vllm:e2e_request_latency_seconds");
        assertWithinOneBucket(
                "e2e latency mean",
                number(e2e, "Mean"),
                (ttftMs + 7.0 * itlMs) / 1000.0,
                new double[] {0.3, 0.5, 0.8, 1.0});

        // What the stage sent, counted by the server: the window runs from the stage's start
        // barrier (scraped before the first request, warm-up requests end before it) to its end
        // barrier (after the last response), so every request of the stage is in it exactly once.
        System.out.printf(
                "server counts in the stage window: TTFT %s, ITL %s, e2e %s, request_success +%s,"
                        + " prompt_tokens +%s, generation_tokens +%s (stage: %d requests x 16 in"
                        + " / 8 out tokens)%n",
                ttft.get("Count").asText(),
                itl.get("Count").asText(),
                e2e.get("Count").asText(),
                server.get("vllm:request_success_total").get("Increase").asText(),
                server.get("vllm:prompt_tokens_total").get("Increase").asText(),
                server.get("vllm:generation_tokens_total").get("Increase").asText(),
                prompts);
        assertThat(number(server.get("vllm:request_success_total"), "Increase")).isEqualTo(prompts);
        assertThat(number(server.get("vllm:prompt_tokens_total"), "Increase"))
                .isEqualTo(16.0 * prompts);
        assertThat(number(server.get("vllm:generation_tokens_total"), "Increase"))
                .isEqualTo(8.0 * prompts);
        assertThat(number(e2e, "Count")).isEqualTo(prompts);
        // every request asked for exactly 16 prompt and 8 output tokens: Δsum/Δcount is exact
        assertThat(number(server.get("vllm:request_prompt_tokens"), "Mean")).isEqualTo(16.0);
        assertThat(number(server.get("vllm:request_generation_tokens"), "Mean")).isEqualTo(8.0);
        assertThat(ttftCount).as("TTFT observations in the stage window").isEqualTo(prompts);
        // 8 output tokens: 7 gaps per request
        assertThat(number(itl, "Count")).as("ITL observations").isEqualTo(7.0 * prompts);
        System.out.printf(
                "TTFT flag %d ms: server histogram mean %s median %s count %d of %d requests;"
                        + " ITL flag %d ms: mean %s count %s%n",
                ttftMs,
                ttft.get("Mean").asText(),
                ttft.get("Median").asText(),
                ttftCount,
                prompts,
                itlMs,
                itl.get("Mean").asText(),
                itl.get("Count").asText());
    }

    @Test
    @Order(3)
    void losingOneReplicaMidStageLowersCoverageAndTheRunStillSucceeds() throws Exception {
        String ns = NS_LOSS;
        Map<String, String> podOf = deployFakePair(ns);
        // a 10 s stage; replica b dies 2 s into it
        createRun(ns, run("loss", "sim", 4, 40, ""));

        // two seconds into the first stage
        awaitIntoFirstStage(ns, "loss", 2);
        assertThat(phase(ns, "loss")).isEqualTo(Phase.RUNNING);
        // kill replica b: no replacement (scaled to 0) and no graceful shutdown
        client.apps().deployments().inNamespace(ns).withName("sim-b").scale(0);
        Pod victim = client.pods().inNamespace(ns).withName(podOf.get("b")).get();
        if (victim != null) {
            client.pods().inNamespace(ns).resource(victim).withGracePeriod(0).delete();
        }
        Instant killedAt = Instant.now();

        BenchmarkRun done = awaitPhase(ns, "loss", Duration.ofMinutes(3), Phase.SUCCEEDED);
        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        JsonNode coverage = metrics.get("server_metrics_coverage");
        System.out.println(
                "replica b killed at "
                        + killedAt
                        + "; coverage = "
                        + coverage
                        + "\nserver_metrics = "
                        + metrics.get("server_metrics")
                        + "\nby replica = "
                        + metrics.get("server_metrics_by_replica")
                        + "\nServerMetricsCollected = "
                        + done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED));

        // Every request was sent and answered or counted as failed. Only requests in flight on b
        // when it died, or sent through the Service before its endpoint was removed (under a
        // second at 4 req/s), may fail.
        assertThat(metrics.get("requests_sent").asLong()).isEqualTo(40);
        assertThat(metrics.get("completed").asLong() + metrics.get("failures").asLong())
                .isEqualTo(40);
        assertThat(metrics.get("completed").asLong()).isGreaterThanOrEqualTo(35);

        // the surviving replica's own statistics are complete and exact
        JsonNode byReplica = metrics.get("server_metrics_by_replica");
        assertThat(byReplica.has(podOf.get("a"))).as("replicas: %s", byReplica).isTrue();
        assertGaugeStats(
                byReplica.get(podOf.get("a")), expectedGauges(REPLICA_A), "replica a after loss");

        // The aggregate saw rounds of both replicas, then rounds of a alone. With S successful
        // scrapes, b's n of them paired with a's first n and a's other S-2n stood alone: each
        // gauge's statistics are those of {a+b} x n and {a} x (S-2n) (means for kv usage).
        // Find n from the running-requests mean, then every statistic of every gauge must fit.
        JsonNode server = metrics.get("server_metrics");
        JsonNode running = server.get("vllm:num_requests_running");
        assertThat(number(running, "Max")).isEqualTo(REPLICA_A.running() + REPLICA_B.running());
        assertThat(number(running, "Min")).isEqualTo(REPLICA_A.running());
        int succeeded = coverage.get("succeeded").asInt();
        Integer pairedRounds = null;
        for (int n = 1; 2 * n < succeeded; n++) {
            double mean =
                    gaugeStatsOverRounds(
                                    REPLICA_A.running() + REPLICA_B.running(),
                                    n,
                                    REPLICA_A.running(),
                                    succeeded - 2 * n)
                            .get("Mean");
            if (mean == number(running, "Mean")) {
                pairedRounds = n;
            }
        }
        assertThat(pairedRounds)
                .as("rounds with both replicas behind running mean %s", running.get("Mean"))
                .isNotNull();
        Map<String, Double> both = expectedGaugeAggregate(List.of(REPLICA_A, REPLICA_B));
        Map<String, Double> aAlone = expectedGauges(REPLICA_A);
        for (String gauge : both.keySet()) {
            Map<String, Double> expectedStats =
                    gaugeStatsOverRounds(
                            both.get(gauge),
                            pairedRounds,
                            aAlone.get(gauge),
                            succeeded - 2 * pairedRounds);
            JsonNode actual = server.get(gauge);
            System.out.printf(
                    "after loss %s: expected %s (%d rounds of a+b, %d of a), profile %s%n",
                    gauge, expectedStats, pairedRounds, succeeded - 2 * pairedRounds, actual);
            expectedStats.forEach(
                    (stat, value) ->
                            assertThat(number(actual, stat))
                                    .as("%s %s", gauge, stat)
                                    .isCloseTo(value, org.assertj.core.data.Offset.offset(1e-12)));
        }

        // coverage: replica b's missing scrapes show
        int expected = coverage.get("expected").asInt();
        int failed = coverage.get("failed").asInt();
        assertThat(coverage.get("replicas").asInt()).isEqualTo(2);
        assertThat(succeeded < expected || failed > 0)
                .as(
                        "coverage after losing one of two replicas mid-stage shows missing or"
                                + " failed scrapes: %s",
                        coverage)
                .isTrue();
        // b lived for about 2 s of a window of at least 10 s: well under the documented 80 %
        // below which the condition reports LowCoverage (and the run still succeeds)
        assertThat(coverage.get("ratio").asDouble()).isLessThan(0.8);
        assertThat(done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getReason()).isEqualTo("LowCoverage");
                        });
    }

    @Test
    @Order(4)
    void prometheusSourceGivesTheSameValuesAsDirectScraping() throws Exception {
        String ns = NS_PROM;
        Map<String, String> podOf = deployFakePair(ns);
        int ttftMs = 50;
        int itlMs = 5;
        int rate = 8;
        int prompts = 24;
        SimulatorDeployment real =
                cluster.simulator("real", MODEL)
                        .timeToFirstToken(ttftMs)
                        .interTokenLatency(itlMs)
                        .deploy(client, ns, Duration.ofMinutes(2));
        Pod realPod = real.pods(client, ns).get(0);

        Map<String, String> targets = new LinkedHashMap<>();
        for (String replica : List.of("a", "b")) {
            Pod pod = client.pods().inNamespace(ns).withName(podOf.get(replica)).get();
            targets.put(pod.getMetadata().getName(), pod.getStatus().getPodIP() + "|sim");
        }
        targets.put(realPod.getMetadata().getName(), realPod.getStatus().getPodIP() + "|real");
        String prometheusPodIp = deployPrometheus(ns, targets);
        awaitTargetsUp(prometheusPodIp, ns, targets.size(), Duration.ofSeconds(90));
        String fromPrometheus =
                """
                        prometheus:
                          url: %s
                          selector: '{namespace="%s",service="%%s"}'
                          replicaLabel: pod
                    """
                        .formatted("http://prometheus." + ns + ".svc:" + PROMETHEUS_PORT, ns);
        // fixed gauges: both sources run at the same time against the same pair
        createRun(ns, run("fake-direct", "sim", 4, 16, ""));
        createRun(ns, run("fake-prom", "sim", 4, 16, fromPrometheus.formatted("sim")));
        createRun(ns, run("real-direct", "real", rate, prompts, ""));
        BenchmarkRun fakeDirect =
                awaitPhase(ns, "fake-direct", Duration.ofMinutes(3), Phase.SUCCEEDED);
        BenchmarkRun fakeProm = awaitPhase(ns, "fake-prom", Duration.ofMinutes(3), Phase.SUCCEEDED);
        BenchmarkRun realDirect =
                awaitPhase(ns, "real-direct", Duration.ofMinutes(3), Phase.SUCCEEDED);
        // the measured histograms: the same workload again, now read from Prometheus
        createRun(ns, run("real-prom", "real", rate, prompts, fromPrometheus.formatted("real")));
        BenchmarkRun realProm = awaitPhase(ns, "real-prom", Duration.ofMinutes(3), Phase.SUCCEEDED);

        JsonNode fakeDirectMetrics = fakeDirect.getStatus().getProfiles().get(0).get("metrics");
        JsonNode fakePromMetrics = fakeProm.getStatus().getProfiles().get(0).get("metrics");
        System.out.println(
                "fake pair via Prometheus: server_metrics = "
                        + fakePromMetrics.get("server_metrics")
                        + "\ncoverage = "
                        + fakePromMetrics.get("server_metrics_coverage")
                        + "\nServerMetricsCollected = "
                        + fakeProm.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED));
        // Fixed gauges hold the same value at every instant, so a lag of up to one scrape
        // interval at the window edges cannot change any statistic: both sources must give
        // exactly the values the fake document implies, per replica too.
        assertExactFakeStatistics(fakePromMetrics, podOf, List.of(REPLICA_A, REPLICA_B));
        assertExactFakeStatistics(fakeDirectMetrics, podOf, List.of(REPLICA_A, REPLICA_B));
        assertThat(fakePromMetrics.get("server_metrics"))
                .isEqualTo(fakeDirectMetrics.get("server_metrics"));
        assertModelServerMetricsMirrorServerMetrics(fakeProm.getStatus().getProfiles().get(0));
        assertThat(fakePromMetrics.get("server_metrics_coverage").get("succeeded").asInt())
                .isGreaterThan(0);
        JsonNode fakeDirectCoverage = fakeDirectMetrics.get("server_metrics_coverage");
        assertThat(fakeDirectCoverage.get("succeeded").asInt())
                .as("direct coverage %s", fakeDirectCoverage)
                .isEqualTo(fakeDirectCoverage.get("expected").asInt());

        JsonNode direct =
                realDirect.getStatus().getProfiles().get(0).get("metrics").get("server_metrics");
        JsonNode viaProm =
                realProm.getStatus().getProfiles().get(0).get("metrics").get("server_metrics");
        System.out.println(
                "real latency, direct: " + direct + "\nreal latency, Prometheus: " + viaProm);
        for (String histogram :
                List.of("vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds")) {
            double[] bounds = histogram.contains("first_token") ? TTFT_BUCKETS : ITL_BUCKETS;
            JsonNode d = direct.get(histogram);
            JsonNode p = viaProm.get(histogram);
            assertThat(d).as("%s direct in %s", histogram, direct).isNotNull();
            assertThat(p).as("%s via Prometheus in %s", histogram, viaProm).isNotNull();
            // Δsum/Δcount of the same workload: within the width of direct's bucket
            assertWithinOneBucket(
                    histogram + " Mean Prometheus vs direct",
                    number(p, "Mean"),
                    number(d, "Mean"),
                    bounds);
            // histogram_quantile interpolates inside buckets, and the windows differ by at
            // most one scrape interval at each edge: the same bucket or a neighbouring one.
            // Not P99: the two are separate runs of the workload, and the p99 of 24 requests
            // is each run's slowest request (95 ms against 60 ms in one clean-clone run, two
            // buckets apart); the counts below are exact for both.
            for (String stat : List.of("Median", "P90")) {
                assertSameOrNeighbouringBucket(
                        histogram + " " + stat + " Prometheus vs direct",
                        number(p, stat),
                        number(d, stat),
                        bounds);
            }
            System.out.printf(
                    "%s Count: direct %s, Prometheus %s%n",
                    histogram, d.get("Count").asText(), p.get("Count").asText());
        }
        // The operator reads a stage's window from Prometheus only once the first sample at or
        // after the stage end exists (one scrape interval plus a margin later), so the end
        // edge misses nothing; the start edge adds nothing (warm-up requests end more than
        // the 2 s barrier lead before the stage starts). Both sources count every request.
        long promTtftCount =
                Math.round(number(viaProm.get("vllm:time_to_first_token_seconds"), "Count"));
        long directTtftCount =
                Math.round(number(direct.get("vllm:time_to_first_token_seconds"), "Count"));
        assertThat(directTtftCount).as("TTFT count, direct scraping").isEqualTo(prompts);
        assertThat(promTtftCount)
                .as("TTFT count via Prometheus")
                .isEqualTo(directTtftCount)
                .isEqualTo(prompts);
        assertThat(number(viaProm.get("vllm:request_success_total"), "Increase"))
                .as("requests counted via Prometheus")
                .isEqualTo(prompts);
        assertWithinOneBucket(
                "TTFT mean via Prometheus",
                number(viaProm.get("vllm:time_to_first_token_seconds"), "Mean"),
                ttftMs / 1000.0,
                TTFT_BUCKETS);
        // nothing ever queues at max-num-seqs 256: exactly 0 in both
        assertThat(number(viaProm.get("vllm:num_requests_waiting"), "Max")).isEqualTo(0.0);
        assertThat(number(direct.get("vllm:num_requests_waiting"), "Max")).isEqualTo(0.0);
    }

    /**
     * numpy's statistics (population SD, linear-interpolation percentiles) of {@code value1} {@code
     * count1} times and {@code value2} {@code count2} times.
     */
    static Map<String, Double> gaugeStatsOverRounds(
            double value1, int count1, double value2, int count2) {
        double[] values = new double[count1 + count2];
        java.util.Arrays.fill(values, 0, count1, value1);
        java.util.Arrays.fill(values, count1, values.length, value2);
        java.util.Arrays.sort(values);
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        double mean = sum / values.length;
        double squares = 0;
        for (double v : values) {
            squares += (v - mean) * (v - mean);
        }
        Map<String, Double> stats = new LinkedHashMap<>();
        stats.put("Mean", mean);
        stats.put("Median", percentile(values, 50));
        stats.put("Sd", Math.sqrt(squares / values.length));
        stats.put("Min", values[0]);
        stats.put("Max", values[values.length - 1]);
        stats.put("P90", percentile(values, 90));
        stats.put("P99", percentile(values, 99));
        return stats;
    }

    private static double percentile(double[] sorted, double p) {
        double rank = (sorted.length - 1) * p / 100.0;
        int below = (int) Math.floor(rank);
        int above = Math.min(below + 1, sorted.length - 1);
        return sorted[below] + (rank - below) * (sorted[above] - sorted[below]);
    }

    // ---------------------------------------------------------------- assertions

    private static void assertExactFakeStatistics(
            JsonNode metrics, Map<String, String> podOf, List<FakeReplica> replicas) {
        JsonNode server = metrics.get("server_metrics");
        assertThat(server).as("server_metrics in %s", metrics).isNotNull();
        Set<String> expectedNames = new TreeSet<>();
        expectedNames.addAll(expectedGaugeAggregate(replicas).keySet());
        expectedNames.addAll(FIXED_COUNTERS);
        expectedNames.addAll(FIXED_HISTOGRAMS);
        assertThat(fieldNames(server))
                .as(
                        "the catalog's metrics the simulator exposes, under each name it exposes; no info gauge")
                .isEqualTo(expectedNames);
        assertGaugeStats(server, expectedGaugeAggregate(replicas), "aggregate");
        assertFixedCountersAndHistograms(server, "aggregate");

        JsonNode byReplica = metrics.get("server_metrics_by_replica");
        assertThat(byReplica).as("server_metrics_by_replica in %s", metrics).isNotNull();
        Set<String> pods = new TreeSet<>();
        for (FakeReplica r : replicas) {
            pods.add(podOf.get(r.name()));
        }
        assertThat(fieldNames(byReplica)).isEqualTo(pods);
        for (FakeReplica r : replicas) {
            JsonNode own = byReplica.get(podOf.get(r.name()));
            assertThat(fieldNames(own)).isEqualTo(expectedNames);
            assertGaugeStats(own, expectedGauges(r), "replica " + r.name());
            assertFixedCountersAndHistograms(own, "replica " + r.name());
        }
    }

    /**
     * A gauge that holds one value in every scrape: all location statistics are that value and the
     * SD is 0 (a round missing a replica would break both for summed gauges).
     */
    private static void assertGaugeStats(JsonNode server, Map<String, Double> gauges, String who) {
        gauges.forEach(
                (name, value) -> {
                    JsonNode stats = server.get(name);
                    assertThat(stats).as("%s %s in %s", who, name, server).isNotNull();
                    assertThat(fieldNames(stats))
                            .isEqualTo(
                                    Set.of(
                                            "Mean", "Median", "Sd", "Min", "Max", "P90", "P99",
                                            "Type"));
                    assertThat(stats.get("Type").asText()).isEqualTo("gauge");
                    for (String key : List.of("Mean", "Median", "Min", "Max", "P90", "P99")) {
                        assertThat(number(stats, key))
                                .as("%s %s %s (expected %s)", who, name, key, value)
                                .isEqualTo(value);
                    }
                    assertThat(number(stats, "Sd")).as("%s %s Sd", who, name).isEqualTo(0.0);
                    System.out.printf(
                            "%s %s: expected %s, profile Mean=%s Median=%s Sd=%s Min=%s Max=%s"
                                    + " P90=%s P99=%s%n",
                            who,
                            name,
                            value,
                            stats.get("Mean").asText(),
                            stats.get("Median").asText(),
                            stats.get("Sd").asText(),
                            stats.get("Min").asText(),
                            stats.get("Max").asText(),
                            stats.get("P90").asText(),
                            stats.get("P99").asText());
                });
    }

    /**
     * Fixed counters increase by 0 (rate 0). Fixed histograms have no observation in the window:
     * Count 0 and, as Prometheus' histogram_quantile gives NaN for an empty histogram and Δsum/0 is
     * undefined, no Mean, quantiles, Min or Max at all.
     */
    private static void assertFixedCountersAndHistograms(JsonNode server, String who) {
        for (String name : FIXED_COUNTERS) {
            JsonNode stats = server.get(name);
            assertThat(stats).as("%s %s", who, name).isNotNull();
            assertThat(fieldNames(stats)).isEqualTo(Set.of("Mean", "Increase", "Rate", "Type"));
            assertThat(stats.get("Type").asText()).isEqualTo("counter");
            assertThat(number(stats, "Increase")).as("%s %s Increase", who, name).isEqualTo(0.0);
            assertThat(number(stats, "Rate")).as("%s %s Rate", who, name).isEqualTo(0.0);
            assertThat(number(stats, "Mean")).as("%s %s Mean", who, name).isEqualTo(0.0);
        }
        for (String name : FIXED_HISTOGRAMS) {
            JsonNode stats = server.get(name);
            assertThat(stats).as("%s %s", who, name).isNotNull();
            assertThat(fieldNames(stats)).as("%s %s", who, name).isEqualTo(Set.of("Count", "Type"));
            assertThat(stats.get("Type").asText()).isEqualTo("histogram");
            assertThat(number(stats, "Count")).as("%s %s Count", who, name).isEqualTo(0.0);
        }
    }

    /** LPG's summary_stats copy: the same statistics, as a list with a Name each. */
    private static void assertModelServerMetricsMirrorServerMetrics(JsonNode profile) {
        JsonNode server = profile.get("metrics").get("server_metrics");
        JsonNode list =
                profile.get("summary_stats").get("stats").get(0).get("model_server_metrics");
        assertThat(list).as("summary_stats.stats[0].model_server_metrics").isNotNull();
        assertThat(list.size()).isEqualTo(server.size());
        Set<String> names = new TreeSet<>();
        for (JsonNode entry : list) {
            String name = entry.get("Name").asText();
            names.add(name);
            com.fasterxml.jackson.databind.node.ObjectNode withoutName = entry.deepCopy();
            withoutName.remove("Name");
            assertThat(withoutName).as("model_server_metrics %s", name).isEqualTo(server.get(name));
        }
        assertThat(names).isEqualTo(fieldNames(server));
    }

    /** |actual - reference| is at most the width of the bucket holding the reference value. */
    static void assertWithinOneBucket(
            String what, double actual, double reference, double[] bounds) {
        double lower = 0;
        double upper = bounds[bounds.length - 1];
        for (double bound : bounds) {
            if (reference <= bound) {
                upper = bound;
                break;
            }
            lower = bound;
        }
        double width = upper - lower;
        System.out.printf(
                "%s: %s, reference %s, bucket (%s, %s]%n", what, actual, reference, lower, upper);
        assertThat(actual)
                .as("%s within one bucket (%s, %s] of %s", what, lower, upper, reference)
                .isBetween(reference - width, reference + width);
    }

    /** The bucket index of {@code actual} differs from that of {@code reference} by at most 1. */
    static void assertSameOrNeighbouringBucket(
            String what, double actual, double reference, double[] bounds) {
        int actualBucket = bucketIndex(actual, bounds);
        int referenceBucket = bucketIndex(reference, bounds);
        System.out.printf(
                "%s: %s (bucket %d) vs %s (bucket %d)%n",
                what, actual, actualBucket, reference, referenceBucket);
        assertThat(Math.abs(actualBucket - referenceBucket))
                .as(
                        "%s: %s vs %s, bucket bounds %s",
                        what, actual, reference, java.util.Arrays.toString(bounds))
                .isLessThanOrEqualTo(1);
    }

    /** Index of the bucket {@code (bounds[i-1], bounds[i]]} holding the value. */
    private static int bucketIndex(double value, double[] bounds) {
        for (int i = 0; i < bounds.length; i++) {
            if (value <= bounds[i]) {
                return i;
            }
        }
        return bounds.length;
    }

    // ---------------------------------------------------------------- fixtures

    /** The test-only Prometheus image, built into target/ by e2e/scripts/prometheus-image.sh. */
    private static Path prometheusImage() {
        Path script = cluster.repo.resolve("e2e/scripts/prometheus-image.sh");
        Path out = cluster.repo.resolve("e2e/target/test-images/prometheus-e2e.tar");
        try {
            Process p =
                    new ProcessBuilder("bash", script.toString(), out.toString(), PROMETHEUS_IMAGE)
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start();
            String stdout =
                    new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertThat(p.waitFor(15, TimeUnit.MINUTES)).as("%s finished", script).isTrue();
            assertThat(p.exitValue()).as("%s exit status (%s)", script, stdout).isZero();
            assertThat(out).exists();
            return out;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Prometheus in a pod of {@code ns}: its config in a ConfigMap, scraping each target (pod name
     * to {@code "<pod IP>|<service>"}, port 8000) every second with the labels {@code pod}, {@code
     * namespace} and {@code service}; storage in an emptyDir, read-only root filesystem, non-root;
     * a Service {@code prometheus:9090}. Returns the Prometheus pod's IP once it is Ready.
     */
    private static String deployPrometheus(String ns, Map<String, String> targets) {
        StringBuilder config =
                new StringBuilder(
                        """
                        global:
                          scrape_interval: 1s
                          scrape_timeout: 1s
                        scrape_configs:
                          - job_name: model-servers
                            static_configs:
                        """);
        targets.forEach(
                (pod, ipAndService) -> {
                    String[] parts = ipAndService.split("\\|");
                    config.append(
                            """
                                  - targets: ['%s:%d']
                                    labels: {pod: '%s', namespace: '%s', service: '%s'}
                            """
                                    .formatted(
                                            parts[0], SimulatorDeployment.PORT, pod, ns, parts[1]));
                });
        client.configMaps()
                .inNamespace(ns)
                .resource(
                        new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("prometheus-config")
                                .endMetadata()
                                .addToData("prometheus.yml", config.toString())
                                .build())
                .create();
        client.resource(
                        PodYaml.deployment(
                                ns,
                                "prometheus",
                                """
                                automountServiceAccountToken: false
                                securityContext:
                                  runAsNonRoot: true
                                  runAsUser: 65532
                                  runAsGroup: 65532
                                  fsGroup: 65532
                                  seccompProfile: {type: RuntimeDefault}
                                containers:
                                - name: prometheus
                                  image: %1$s
                                  imagePullPolicy: Never
                                  args: [--config.file=/etc/prometheus/prometheus.yml,
                                         --storage.tsdb.path=/prometheus,
                                         "--web.listen-address=:%2$d", --log.level=warn]
                                  ports: [{name: http, containerPort: %2$d}]
                                  readinessProbe:
                                    httpGet: {path: /-/ready, port: http}
                                    periodSeconds: 1
                                  resources:
                                    requests: {cpu: 50m, memory: 64Mi}
                                    limits: {memory: 512Mi}
                                  %3$s
                                  volumeMounts:
                                  - {name: config, mountPath: /etc/prometheus, readOnly: true}
                                  - {name: data, mountPath: /prometheus}
                                volumes:
                                - name: config
                                  configMap: {name: prometheus-config}
                                - name: data
                                  emptyDir: {}
                                """
                                        .formatted(
                                                PROMETHEUS_IMAGE,
                                                PROMETHEUS_PORT,
                                                PodYaml.RESTRICTED_CONTAINER_SECURITY)))
                .serverSideApply();
        client.resource(PodYaml.service(ns, "prometheus", PROMETHEUS_PORT)).serverSideApply();
        return await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                client
                                        .pods()
                                        .inNamespace(ns)
                                        .withLabel("app", "prometheus")
                                        .list()
                                        .getItems()
                                        .stream()
                                        .filter(ChartCluster::ready)
                                        .map(p -> p.getStatus().getPodIP())
                                        .findFirst()
                                        .orElse(null),
                        ip -> ip != null);
    }

    /**
     * Waits until the Prometheus pod has scraped {@code count} targets of the namespace
     * successfully (its HTTP API, asked at the pod IP from the host).
     */
    private static void awaitTargetsUp(String podIp, String ns, int count, Duration atMost)
            throws InterruptedException {
        String query = "count(up{namespace=\"" + ns + "\"} == 1)";
        URI uri =
                URI.create(
                        "http://"
                                + podIp
                                + ":"
                                + PROMETHEUS_PORT
                                + "/api/v1/query?query="
                                + URLEncoder.encode(query, StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + atMost.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> r =
                        HTTP.send(
                                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                                HttpResponse.BodyHandlers.ofString());
                last = r.body();
                if (r.statusCode() == 200) {
                    JsonNode result = JSON.readTree(r.body()).path("data").path("result");
                    if (result.size() == 1
                            && result.get(0).path("value").path(1).asText().equals("" + count)) {
                        System.out.println(
                                "Prometheus pod " + podIp + ": " + count + " targets up");
                        return;
                    }
                }
            } catch (IOException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(250);
        }
        throw new AssertionError(
                "Prometheus did not scrape " + count + " targets within " + atMost + ": " + last);
    }

    /** Replicas a and b (fake metrics) behind one Service {@code sim}; replica name to pod name. */
    private static Map<String, String> deployFakePair(String ns) {
        SimulatorDeployment a = REPLICA_A.deployment().create(client, ns);
        SimulatorDeployment b = REPLICA_B.deployment().create(client, ns);
        SimulatorDeployment.createService(client, ns, "sim", "sim");
        a.awaitReady(client, ns, Duration.ofMinutes(2));
        b.awaitReady(client, ns, Duration.ofMinutes(2));
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> readyEndpoints(ns, "sim") == 2);
        Map<String, String> podOf = new LinkedHashMap<>();
        podOf.put("a", onlyPod(a.pods(client, ns)));
        podOf.put("b", onlyPod(b.pods(client, ns)));
        return podOf;
    }

    private static String onlyPod(List<Pod> pods) {
        assertThat(pods).hasSize(1);
        return pods.get(0).getMetadata().getName();
    }

    private static int readyEndpoints(String ns, String service) {
        int n = 0;
        for (var slice :
                client.discovery()
                        .v1()
                        .endpointSlices()
                        .inNamespace(ns)
                        .withLabel("kubernetes.io/service-name", service)
                        .list()
                        .getItems()) {
            if (slice.getEndpoints() == null) {
                continue;
            }
            for (var endpoint : slice.getEndpoints()) {
                if (endpoint.getConditions() == null
                        || !Boolean.FALSE.equals(endpoint.getConditions().getReady())) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * One streaming stage at {@code rate} req/s against {@code service}, 16 input and 8 output
     * tokens, server metrics scraped every second; {@code metricsExtra} goes under {@code
     * spec.metrics}.
     */
    /**
     * {@code spec.target.balance: endpoints} against three replicas: two runner pods send each
     * request to the next endpoint in turn, so every replica serves exactly a third of the stage,
     * counted by the client per address and by each replica's own request counter in the stage
     * window, and LoadBalanced says so. The same load through the Service ({@code balance} unset)
     * gets whatever shares kube-proxy gives, and the verdict agrees with the counters.
     */
    @Test
    @Order(5)
    void endpointsBalanceGivesEveryReplicaAnEvenShareAndTheVerdictTellsTheTruth() throws Exception {
        String ns = NS_BALANCE;
        int prompts = 300;
        Map<String, String> podOfAddress = threeReplicas(ns, "bal");
        createRun(ns, balanceRun("balanced", "    balance: endpoints", prompts));
        BenchmarkRun done = awaitPhase(ns, "balanced", Duration.ofMinutes(3), Phase.SUCCEEDED);
        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        System.out.println(
                "endpoints balance: requests_per_address = "
                        + metrics.get("requests_per_address")
                        + ", replica_balance = "
                        + metrics.get("replica_balance"));
        JsonNode perAddress = metrics.get("requests_per_address");
        assertThat(perAddress).as("requests_per_address in %s", metrics).isNotNull();
        assertThat(fieldNames(perAddress)).hasSize(3);
        assertThat(metrics.get("requests_sent").asLong()).isEqualTo(prompts);
        Map<String, Long> servedByPod = served(metrics);
        for (Iterator<String> it = perAddress.fieldNames(); it.hasNext(); ) {
            String address = it.next();
            long sent = perAddress.get(address).asLong();
            // two pods of 150 requests each over three endpoints, started one endpoint apart
            assertThat(sent).as("requests sent to %s", address).isEqualTo(prompts / 3);
            String pod = podOfAddress.get(address.substring(0, address.lastIndexOf(':')));
            assertThat(servedByPod.get(pod))
                    .as("requests replica %s (%s) served in the stage window", pod, address)
                    .isEqualTo(sent);
        }
        StageSummary stage = done.getStatus().getResults().get(0);
        assertThat(stage.getLoadBalanced()).as(stage.getLoadBalancedMessage()).isTrue();
        assertThat(stage.getReplicaShares()).isEqualTo("33/33/33 %");
        assertThat(done.getStatus().getSummary().getReplicaShares()).isEqualTo("33/33/33 %");
        assertThat(done.getStatus().condition(ConditionTypes.LOAD_BALANCED))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));

        // through the Service: kube-proxy's shares, whatever they are, and a verdict that agrees
        createRun(ns, balanceRun("proxied", "", prompts));
        BenchmarkRun proxied = awaitPhase(ns, "proxied", Duration.ofMinutes(3), Phase.SUCCEEDED);
        JsonNode proxiedMetrics = proxied.getStatus().getProfiles().get(0).get("metrics");
        assertThat(proxiedMetrics.has("requests_per_address")).isFalse();
        Map<String, Long> shares = served(proxiedMetrics);
        System.out.println(
                "through the Service: served per replica "
                        + shares
                        + ", replica_balance = "
                        + proxiedMetrics.get("replica_balance"));
        assertThat(shares.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(prompts);
        long max = shares.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        long min = shares.values().stream().mapToLong(Long::longValue).min().orElseThrow();
        boolean even = min > 0 && (double) max / min <= 1.25;
        StageSummary proxiedStage = proxied.getStatus().getResults().get(0);
        assertThat(proxiedStage.getLoadBalanced())
                .as("verdict on %s: %s", shares, proxiedStage.getLoadBalancedMessage())
                .isEqualTo(even);
        assertThat(proxied.getStatus().condition(ConditionTypes.LOAD_BALANCED))
                .hasValueSatisfying(
                        c -> assertThat(c.getStatus()).isEqualTo(even ? "True" : "False"));
    }

    /**
     * {@code spec.workload.prefixCache: {state: cold}} against three replicas with a prefix cache
     * (blocks of 4 tokens): the operator resets every replica before each of two stages (each
     * replica counts its resets), so the second stage, which sends the first stage's prompts again,
     * finds nothing cached; each stage says it started cold. The same run without the declaration
     * finds the second stage's prompts cached: 12 of every 16 tokens. Against a server that refuses
     * the reset (a vLLM without VLLM_SERVER_DEV_MODE), each stage says undeclared and names it, and
     * the run still succeeds.
     */
    @Test
    @Order(6)
    void aColdPrefixCacheIsResetOnEveryReplicaBeforeEachStage() throws Exception {
        String ns = NS_BALANCE;
        cluster.simulator("pfx", MODEL)
                .replicas(3)
                .extraArgs("--enable-prefix-caching", "--block-size", "4")
                .deploy(client, ns, Duration.ofMinutes(2));
        List<String> replicas =
                client.pods().inNamespace(ns).withLabel("app", "pfx").list().getItems().stream()
                        .map(pod -> "http://" + pod.getStatus().getPodIP() + ":8000/metrics")
                        .toList();
        assertThat(replicas).hasSize(3);

        createRun(ns, prefixCacheRun("cold", "pfx", "    prefixCache: {state: cold}"));
        BenchmarkRun cold = awaitPhase(ns, "cold", Duration.ofMinutes(3), Phase.SUCCEEDED);
        for (String replica : replicas) {
            assertThat(counter(replica, "modelsim_prefix_cache_resets_total"))
                    .as("resets of %s: one before each stage", replica)
                    .isEqualTo(2.0);
        }
        assertThat(cold.getStatus().getStagePrefixCache()).containsExactly("cold", "cold");
        List<StageSummary> stages = cold.getStatus().getResults();
        assertThat(stages).hasSize(2);
        for (StageSummary stage : stages) {
            assertThat(stage.getPrefixCacheState()).isEqualTo("cold");
            assertThat(stage.getPrefixCacheMessage()).isNull();
            // Random prompts share no block: each replica's own counters show an empty cache.
            assertThat(stage.getPrefixCacheVerified()).isTrue();
            assertThat(stage.getPrefixCacheHitRateByReplica())
                    .hasSize(3)
                    .allSatisfy((replica, rate) -> assertThat(rate).as(replica).isZero());
        }
        assertThat(cold.getStatus().condition(ConditionTypes.CACHE_STATE_VERIFIED))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("True");
                            assertThat(c.getReason()).isEqualTo("Verified");
                        });
        // Random prompts share no block within a stage; the second stage repeats the first's
        // prompts, and the reset before it leaves nothing to hit.
        assertThat(stages.get(1).getPrefixCacheHitRate()).isEqualTo(0.0);
        JsonNode second = cold.getStatus().getProfiles().get(1);
        assertThat(second.at("/dimensions/prefix_cache").asText()).isEqualTo("cold");
        assertThat(second.at("/metrics/prefix_cache/hits").asLong()).isZero();
        assertThat(second.at("/metrics/prefix_cache/queries").asLong()).isEqualTo(60L * 16);

        // Undeclared, the second stage finds the first stage's prompts: 3 blocks of 4 of each
        // 16-token prompt (vLLM never counts the last token as a hit).
        createRun(ns, prefixCacheRun("warm", "pfx", ""));
        BenchmarkRun warm = awaitPhase(ns, "warm", Duration.ofMinutes(3), Phase.SUCCEEDED);
        assertThat(warm.getStatus().getStagePrefixCache()).isNull();
        assertThat(warm.getStatus().condition(ConditionTypes.CACHE_STATE_VERIFIED)).isEmpty();
        StageSummary warmSecond = warm.getStatus().getResults().get(1);
        assertThat(warmSecond.getPrefixCacheState()).isNull();
        assertThat(warmSecond.getPrefixCacheHitRate()).isEqualTo(0.75);
        for (String replica : replicas) {
            assertThat(counter(replica, "modelsim_prefix_cache_resets_total")).isEqualTo(2.0);
        }

        cluster.simulator("pfx-refuse", MODEL)
                .extraArgs("--enable-prefix-caching", "--refuse-cache-reset")
                .deploy(client, ns, Duration.ofMinutes(2));
        createRun(ns, prefixCacheRun("refused", "pfx-refuse", "    prefixCache: {state: cold}"));
        BenchmarkRun refused = awaitPhase(ns, "refused", Duration.ofMinutes(3), Phase.SUCCEEDED);
        for (StageSummary stage : refused.getStatus().getResults()) {
            assertThat(stage.getPrefixCacheState()).isEqualTo("undeclared");
            assertThat(stage.getPrefixCacheMessage())
                    .contains(":8000: POST /reset_prefix_cache answered HTTP 404")
                    .contains("POST /flush_cache answered HTTP 404");
        }
        assertThat(refused.getStatus().getProfiles().get(0).at("/dimensions/prefix_cache").asText())
                .isEqualTo("undeclared");
        assertThat(refused.getStatus().condition(ConditionTypes.CACHE_STATE_VERIFIED))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getReason()).isEqualTo("NotReset");
                            assertThat(c.getMessage())
                                    .startsWith("stage 1: ")
                                    .contains(":8000: POST /reset_prefix_cache answered HTTP 404");
                        });

        // One replica of three refusing the reset: every stage is undeclared and names that
        // replica alone; the two that reset count one reset per stage.
        cluster.simulator("pfx-mix", MODEL)
                .replicas(2)
                .podLabel("resets", "yes")
                .extraArgs("--enable-prefix-caching")
                .deploy(client, ns, Duration.ofMinutes(2));
        cluster.simulator("pfx-mix-refusing", MODEL)
                .appLabel("pfx-mix")
                .podLabel("resets", "no")
                .service(null)
                .extraArgs("--enable-prefix-caching", "--refuse-cache-reset")
                .deploy(client, ns, Duration.ofMinutes(2));
        String refusing = null;
        List<String> resetting = new ArrayList<>();
        for (Pod pod :
                client.pods().inNamespace(ns).withLabel("app", "pfx-mix").list().getItems()) {
            String ip = pod.getStatus().getPodIP();
            if ("no".equals(pod.getMetadata().getLabels().get("resets"))) {
                refusing = ip;
            } else {
                resetting.add(ip);
            }
        }
        assertThat(refusing).isNotNull();
        assertThat(resetting).hasSize(2);
        createRun(ns, prefixCacheRun("one-refused", "pfx-mix", "    prefixCache: {state: cold}"));
        BenchmarkRun oneRefused =
                awaitPhase(ns, "one-refused", Duration.ofMinutes(3), Phase.SUCCEEDED);
        for (StageSummary stage : oneRefused.getStatus().getResults()) {
            assertThat(stage.getPrefixCacheState()).isEqualTo("undeclared");
            assertThat(stage.getPrefixCacheVerified()).isFalse();
            assertThat(stage.getPrefixCacheMessage())
                    .contains(refusing + ":8000: POST /reset_prefix_cache answered HTTP 404")
                    .doesNotContain(resetting.get(0) + ":")
                    .doesNotContain(resetting.get(1) + ":");
        }
        for (String ip : resetting) {
            assertThat(
                            counter(
                                    "http://" + ip + ":8000/metrics",
                                    "modelsim_prefix_cache_resets_total"))
                    .as("resets of %s: one before each stage", ip)
                    .isEqualTo(2.0);
        }
        String refusingReplica = refusing;
        assertThat(oneRefused.getStatus().condition(ConditionTypes.CACHE_STATE_VERIFIED))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getReason()).isEqualTo("NotReset");
                            assertThat(c.getMessage())
                                    .contains("stage 1: ")
                                    .contains("stage 2: ")
                                    .contains(refusingReplica + ":8000");
                        });

        // Conversations on a cold cache: every turn repeats its history, so hits are expected and
        // each replica's rate is reported; every replica is reset before each of the two stages.
        createRun(
                ns,
                conversationRun(
                        "cold-conv",
                        "pfx",
                        "    balance: endpoints\n",
                        "    prefixCache: {state: cold}\n",
                        "      - {concurrency: 3, numPrompts: 6}\n".repeat(2),
                        1));
        BenchmarkRun conv = awaitPhase(ns, "cold-conv", Duration.ofMinutes(4), Phase.SUCCEEDED);
        for (String replica : replicas) {
            assertThat(counter(replica, "modelsim_prefix_cache_resets_total"))
                    .as("resets of %s: two runs of two stages", replica)
                    .isEqualTo(4.0);
        }
        for (StageSummary stage : conv.getStatus().getResults()) {
            assertThat(stage.getPrefixCacheState()).isEqualTo("cold");
            assertThat(stage.getPrefixCacheVerified()).isTrue();
            assertThat(stage.getPrefixCacheHitRateByReplica()).hasSize(3);
        }
        JsonNode convProfile = conv.getStatus().getProfiles().get(1);
        assertThat(convProfile.at("/metrics/prefix_cache/by_replica").size()).isEqualTo(3);
        assertThat(convProfile.at("/metrics/prefix_cache/hits").asLong()).isPositive();
        assertThat(conv.getStatus().condition(ConditionTypes.CACHE_STATE_VERIFIED))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));

        // A warm state: after each reset the first of two runner pods sends the 4 shared prefixes
        // to each of the three replicas before the barrier. Every prompt then finds its prefix's
        // 10 blocks of 4 cached (40 of its 48 tokens) on whichever replica serves it, and the
        // warming itself is outside the stage's window.
        Map<String, double[]> before = new java.util.HashMap<>();
        for (String replica : replicas) {
            before.put(
                    replica,
                    new double[] {
                        counter(replica, "vllm:prefix_cache_queries_total"),
                        counter(replica, "vllm:prefix_cache_hits_total")
                    });
        }
        createRun(ns, warmPrefixRun("warm-prefixes", "pfx"));
        BenchmarkRun warmRun =
                awaitPhase(ns, "warm-prefixes", Duration.ofMinutes(4), Phase.SUCCEEDED);
        assertThat(warmRun.getStatus().getStagePrefixCache()).containsExactly("warm", "warm");
        assertThat(warmRun.getStatus().getStageWarmTargets())
                .hasSize(2)
                .allSatisfy(targets -> assertThat(targets.split(",")).hasSize(3));
        Map<String, Long> windowQueries = new java.util.HashMap<>();
        Map<String, Long> windowHits = new java.util.HashMap<>();
        for (int i = 0; i < 2; i++) {
            StageSummary stage = warmRun.getStatus().getResults().get(i);
            assertThat(stage.getPrefixCacheState()).isEqualTo("warm");
            assertThat(stage.getPrefixCacheMessage()).isNull();
            assertThat(stage.getPrefixCacheVerified()).isTrue();
            assertThat(stage.getPrefixCacheImpliedHitRate()).isEqualTo(40 / 48.0);
            JsonNode profile = warmRun.getStatus().getProfiles().get(i);
            assertThat(profile.at("/dimensions/prefix_cache").asText()).isEqualTo("warm");
            assertThat(profile.at("/metrics/prefix_cache/implied_hit_rate").asDouble())
                    .isEqualTo(40 / 48.0);
            assertThat(profile.at("/metrics/prefix_cache/queries").asLong()).isEqualTo(24L * 48);
            assertThat(profile.at("/metrics/prefix_cache/hits").asLong()).isEqualTo(24L * 40);
            profile.at("/metrics/prefix_cache/by_replica")
                    .properties()
                    .forEach(
                            e -> {
                                windowQueries.merge(
                                        e.getKey(),
                                        e.getValue().path("queries").asLong(),
                                        Long::sum);
                                windowHits.merge(
                                        e.getKey(), e.getValue().path("hits").asLong(), Long::sum);
                            });
        }
        // Profiles name a replica by its pod.
        Map<String, String> podOfAddress = replicaAddresses(ns, "pfx");
        for (String replica : replicas) {
            String id =
                    podOfAddress.get(
                            replica.substring(
                                    "http://".length(),
                                    replica.length() - ":8000/metrics".length()));
            assertThat(counter(replica, "modelsim_prefix_cache_resets_total"))
                    .as("resets of %s: three runs of two stages", replica)
                    .isEqualTo(6.0);
            // Outside the windows: one runner's warming, 4 prefixes of 40 tokens before each of
            // the 2 stages, none of them cached after the reset.
            assertThat(
                            counter(replica, "vllm:prefix_cache_queries_total")
                                    - before.get(replica)[0]
                                    - windowQueries.getOrDefault(id, 0L))
                    .as("warming queries of %s", replica)
                    .isEqualTo(2.0 * 4 * 40);
            assertThat(
                            counter(replica, "vllm:prefix_cache_hits_total")
                                    - before.get(replica)[1]
                                    - windowHits.getOrDefault(id, 0L))
                    .as("warming hits of %s", replica)
                    .isZero();
        }
        assertThat(warmRun.getStatus().condition(ConditionTypes.CACHE_STATE_VERIFIED))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("True");
                            assertThat(c.getMessage())
                                    .contains("started from the declared warm prefix cache")
                                    .contains("against 83.3 % implied");
                        });
    }

    /**
     * Two stages of 24 prefix_repetition prompts (4 prefixes of 40 tokens, 8-token questions) from
     * two runner pods against Service {@code service}, each stage starting warm.
     */
    private static String warmPrefixRun(String name, String service) {
        return RunYaml.named(name)
                .target(service, MODEL)
                .prefixRepetition(40, 8, 4)
                .tokens(0, 4)
                .workloadExtra("    prefixCache: {state: warm}")
                .load("30, 31", 24, 0)
                .runner(2, null)
                .metricsEverySecond("")
                .yaml();
    }

    /**
     * Conversations of 3 turns (20-word questions, 6-token replies, 50 ms to think, chat API)
     * against Service {@code service}; {@code targetExtra} and {@code workloadExtra} are further
     * lines (indented four spaces) under {@code spec.target} and {@code spec.workload}, {@code
     * stages} the lines of {@code spec.load.stages}.
     */
    private static String conversationRun(
            String name,
            String service,
            String targetExtra,
            String workloadExtra,
            String stages,
            int parallelism) {
        return """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target:
                    service: {name: %s, port: %d}
                    backend: vllm
                    api: chat
                    model: %s
                    readinessTimeout: 2m
                %s  workload:
                    dataset:
                      type: random
                      inputTokens: {type: fixed, mean: 20}
                      outputTokens: {type: fixed, mean: 6}
                      conversation: {turns: 3, thinkTime: 50ms}
                    ignoreEos: true
                %s  load:
                    stages:
                %s    requestTimeout: 30s
                  runner:
                    parallelism: %d
                    startTimeout: 4m
                    resources:
                      requests: {cpu: 100m, memory: 256Mi}
                      limits: {memory: 768Mi}
                  metrics:
                    interval: 1s
                """
                .formatted(
                        name,
                        service,
                        RunYaml.PORT,
                        MODEL,
                        targetExtra,
                        workloadExtra,
                        stages,
                        parallelism);
    }

    @Test
    @Order(7)
    void aTraceInAConfigMapReplaysOverTwoRunnerPodsWithTheReuseItsHashesImply() throws Exception {
        String ns = NS_BALANCE;
        cluster.simulator("trace-sim", MODEL)
                .extraArgs("--enable-prefix-caching", "--block-size", "16")
                .deploy(client, ns, Duration.ofMinutes(2));
        // 40 requests 40 to 100 ms apart in four groups sharing a 64-token system prompt (two
        // 32-token hashes), half of them a third shared block, then one or two of their own.
        java.util.Random random = new java.util.Random(5);
        List<List<Long>> hashes = new java.util.ArrayList<>();
        StringBuilder trace = new StringBuilder();
        long at = 0;
        long last = 0;
        long inputs = 0;
        for (int i = 0; i < 40; i++) {
            List<Long> ids = new java.util.ArrayList<>(List.of(i % 4 * 100L + 1, i % 4 * 100L + 2));
            if (random.nextBoolean()) {
                ids.add(i % 4 * 100L + 3);
            }
            for (int k = 0; k <= random.nextInt(2); k++) {
                ids.add(1_000L + i * 10L + k);
            }
            hashes.add(ids);
            inputs += ids.size() * 32L;
            trace.append(
                    String.format(
                            "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 3,"
                                    + " \"hash_ids\": %s}%n",
                            at, ids.size() * 32, ids));
            last = at;
            at += 40 + random.nextInt(61);
        }
        client.configMaps()
                .inNamespace(ns)
                .resource(
                        new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("traces")
                                .endMetadata()
                                .withData(Map.of("mooncake.jsonl", trace.toString()))
                                .build())
                .create();
        createRun(
                ns,
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: trace}
                spec:
                  target:
                    service: {name: trace-sim, port: %d}
                    backend: vllm
                    api: completions
                    model: %s
                    readinessTimeout: 2m
                  workload:
                    dataset:
                      type: trace
                      source: {configMapRef: {name: traces, key: mooncake.jsonl}}
                      trace: {format: mooncake, blockTokens: 32}
                    ignoreEos: true
                  load:
                    requestTimeout: 30s
                  runner:
                    parallelism: 2
                    startTimeout: 4m
                    resources:
                      requests: {cpu: 100m, memory: 256Mi}
                      limits: {memory: 768Mi}
                  metrics:
                    interval: 1s
                """
                        .formatted(RunYaml.PORT, MODEL));
        BenchmarkRun run = awaitPhase(ns, "trace", Duration.ofMinutes(4), Phase.SUCCEEDED);
        StageSummary stage = run.getStatus().getResults().get(0);
        assertThat(run.getStatus().getResults()).hasSize(1);
        assertThat(stage.getCompleted()).isEqualTo(40L);
        // The replay's mean rate: 39 gaps over the recorded span, the two pods' halves added.
        assertThat(stage.getRequestRate())
                .isCloseTo(39 / (last / 1000.0), org.assertj.core.data.Offset.offset(1e-9));
        JsonNode profile = run.getStatus().getProfiles().get(0);
        assertThat(profile.at("/dimensions/trace").asText())
                .isEqualTo("format=mooncake time_scale=1");
        // Every block the hashes share is the same tokens from either pod, so the server finds
        // exactly the reuse the hash ids imply (vLLM never counts the block of the last token).
        java.util.Set<String> cached = new java.util.HashSet<>();
        long expectedHits = 0;
        for (List<Long> ids : hashes) {
            int tokens = ids.size() * 32;
            for (int k = 0; k < (tokens - 1) / 16; k++) {
                if (!cached.contains(ids.subList(0, k / 2 + 1) + "#" + k)) {
                    break;
                }
                expectedHits += 16;
            }
            for (int k = 0; k < tokens / 16; k++) {
                cached.add(ids.subList(0, k / 2 + 1) + "#" + k);
            }
        }
        assertThat(expectedHits).isPositive();
        assertThat(profile.at("/metrics/prefix_cache/queries").asLong()).isEqualTo(inputs);
        assertThat(profile.at("/metrics/prefix_cache/hits").asLong()).isEqualTo(expectedHits);
    }

    @Test
    @Order(8)
    void conversationsOverTwoRunnerPodsCarryTheirHistoryAndHitItsCachedBlocks() throws Exception {
        String ns = NS_BALANCE;
        cluster.simulator("conv-sim", MODEL)
                .extraArgs("--enable-prefix-caching", "--block-size", "16")
                .deploy(client, ns, Duration.ofMinutes(2));
        createRun(
                ns,
                conversationRun(
                        "conversations",
                        "conv-sim",
                        "",
                        "",
                        "      - {concurrency: 4, numPrompts: 8}\n",
                        2));
        BenchmarkRun run = awaitPhase(ns, "conversations", Duration.ofMinutes(4), Phase.SUCCEEDED);
        StageSummary stage = run.getStatus().getResults().get(0);
        // 8 sessions of 3 turns, 4 from each pod.
        assertThat(stage.getCompleted()).isEqualTo(24L);
        JsonNode profile = run.getStatus().getProfiles().get(0);
        assertThat(profile.at("/dimensions/conversation").asText())
                .isEqualTo("turns=3 think_time=0.05s fixed");
        JsonNode conversation = profile.at("/metrics/conversation");
        assertThat(conversation.path("sessions_started").asInt()).isEqualTo(8);
        assertThat(conversation.path("sessions_completed").asInt()).isEqualTo(8);
        long queries = 0;
        long hits = 0;
        for (int t = 1; t <= 3; t++) {
            // t questions of 20 words and the t - 1 replies of 6 before them.
            int history = 20 * t + 6 * (t - 1);
            JsonNode turn = conversation.path("turns").get(t - 1);
            assertThat(turn.path("requests_sent").asInt()).as("turn %d", t).isEqualTo(8);
            assertThat(turn.path("prompt_tokens_mean").asDouble())
                    .as("turn %d", t)
                    .isEqualTo(history);
            queries += 8L * history;
            if (t < 3) {
                // The next turn finds this turn's full blocks cached, no more.
                hits += 8L * (history / 16 * 16);
            }
        }
        assertThat(profile.at("/metrics/prefix_cache/queries").asLong()).isEqualTo(queries);
        assertThat(profile.at("/metrics/prefix_cache/hits").asLong()).isEqualTo(hits);
    }

    /**
     * {@code balance: endpoints} follows the Service while a stage runs: one of three replicas is
     * deleted 5 s into a 20 s stage (its Deployment starts a replacement). The runner pods stop
     * sending to it and start sending to the replacement once the operator lists the change, the
     * profile says when each left and joined, every request is sent and answered, the replicas
     * there throughout got exactly what their own counters say they served, and only they are
     * judged for balance.
     *
     * <p>The replicas stop as a server behind a Service is set up to: a {@code preStop} sleep keeps
     * the deleted one serving while its removal reaches the runners (about a second through the
     * operator's control ConfigMap). Without one, the replica closes its listener and its idle
     * keep-alive connections at once while the runners still send to it: a request written on such
     * a connection is lost by the server (counted as {@code reset}; never retried, since the server
     * may have read it, RFC 9112 9.3.1), and how many depends on that second's timing (1 to 6 were
     * seen here), so the figure would say nothing about the runner. A refused connection is still
     * taken to the next replica ({@code SpreadTest}).
     */
    @Test
    @Order(9)
    void aReplicaDeletedMidStageIsFollowedAndNothingIsLost() throws Exception {
        String ns = NS_BALANCE;
        int prompts = 400;
        cluster.simulator("follow", MODEL)
                .replicas(3)
                .timeToFirstToken(5)
                .interTokenLatency(1)
                .preStopSleep(8)
                .deploy(client, ns, Duration.ofMinutes(2));
        Map<String, String> podOfAddress = replicaAddresses(ns, "follow");
        createRun(
                ns,
                RunYaml.named("follow")
                        .target("follow", MODEL)
                        .targetExtra("    balance: endpoints")
                        .load("20", prompts, 3)
                        .runner(2, null)
                        .metricsEverySecond("")
                        .yaml());
        awaitIntoFirstStage(ns, "follow", 5);
        assertThat(phase(ns, "follow")).isEqualTo(Phase.RUNNING);
        String victimIp = podOfAddress.keySet().stream().sorted().findFirst().orElseThrow();
        String victim = podOfAddress.get(victimIp);
        // an ordinary delete: the replica is told to stop (SIGTERM), its Deployment replaces it
        client.pods().inNamespace(ns).withName(victim).delete();
        Instant deletedAt = Instant.now();

        BenchmarkRun done = awaitPhase(ns, "follow", Duration.ofMinutes(3), Phase.SUCCEEDED);
        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        String replacementIp = null;
        for (Pod pod : client.pods().inNamespace(ns).withLabel("app", "follow").list().getItems()) {
            String ip = pod.getStatus().getPodIP();
            if (ip != null && !podOfAddress.containsKey(ip)) {
                replacementIp = ip;
            }
        }
        System.out.println(
                "replica "
                        + victim
                        + " ("
                        + victimIp
                        + ") deleted at "
                        + deletedAt
                        + ", replacement "
                        + replacementIp
                        + "\nrequests_per_address = "
                        + metrics.get("requests_per_address")
                        + "\naddress_changes = "
                        + metrics.get("address_changes")
                        + "\naddress_balance = "
                        + metrics.get("address_balance")
                        + ", requests_redirected = "
                        + metrics.get("requests_redirected")
                        + "\nreplica_balance = "
                        + metrics.get("replica_balance")
                        + ", failures = "
                        + metrics.get("failures")
                        + ", errors_by_class = "
                        + metrics.get("errors_by_class"));

        // every request was sent and answered
        assertThat(metrics.get("requests_sent").asLong()).isEqualTo(prompts);
        assertThat(metrics.get("completed").asLong())
                .as("errors %s", metrics.get("errors_by_class"))
                .isEqualTo(prompts);
        assertThat(metrics.get("failures").asLong()).isZero();

        // the deleted replica left, its replacement joined, both while the stage ran
        String port = ":" + RunYaml.PORT;
        JsonNode changes = metrics.get("address_changes");
        assertThat(changes).as("address_changes in %s", metrics).isNotNull();
        double leftAt = changes.at("/left/" + victimIp + port).asDouble(-1);
        assertThat(leftAt).as("when %s left", victimIp).isBetween(4.0, 15.0);
        assertThat(replacementIp).as("the Deployment's replacement pod").isNotNull();
        double joinedAt = changes.at("/joined/" + replacementIp + port).asDouble(-1);
        assertThat(joinedAt).as("when %s joined", replacementIp).isBetween(leftAt, 20.0);

        JsonNode perAddress = metrics.get("requests_per_address");
        long total = 0;
        for (String address : fieldNames(perAddress)) {
            total += perAddress.get(address).asLong();
        }
        assertThat(total).isEqualTo(prompts);
        // the deleted one got its turns until it left, the replacement after it joined
        assertThat(perAddress.get(victimIp + port).asLong()).isBetween(1L, (long) prompts / 3 - 1);
        assertThat(perAddress.get(replacementIp + port).asLong())
                .isBetween(1L, (long) prompts / 3 - 1);
        // the two there throughout: exactly what their own counters served in the stage window
        Map<String, Long> servedByPod = new java.util.TreeMap<>();
        JsonNode byReplica = metrics.get("server_metrics_by_replica");
        for (String pod : fieldNames(byReplica)) {
            JsonNode counter = byReplica.get(pod).get("vllm:request_success_total");
            servedByPod.put(pod, counter == null ? 0L : Math.round(number(counter, "Increase")));
        }
        JsonNode addressBalance = metrics.get("address_balance");
        assertThat(addressBalance.get("addresses").asInt()).isEqualTo(2);
        assertThat(addressBalance.get("partial").toString())
                .contains(victimIp + port)
                .contains(replacementIp + port);
        for (String ip : podOfAddress.keySet()) {
            if (ip.equals(victimIp)) {
                continue;
            }
            long sent = perAddress.get(ip + port).asLong();
            assertThat(sent).as("sent to %s", ip).isGreaterThanOrEqualTo(100);
            assertThat(servedByPod.get(podOfAddress.get(ip)))
                    .as("requests replica %s served in the stage window", podOfAddress.get(ip))
                    .isEqualTo(sent);
        }
        assertThat(addressBalance.get("max_min_ratio").asDouble()).isLessThanOrEqualTo(1.1);
        // the server side agrees: the two judged even, the other two there for part of it
        StageSummary stage = done.getStatus().getResults().get(0);
        assertThat(stage.getLoadBalanced()).as(stage.getLoadBalancedMessage()).isTrue();
        JsonNode replicaBalance = metrics.get("replica_balance");
        assertThat(replicaBalance.get("partial").toString()).contains(victim);
    }

    /**
     * Two stages of 60 random 16-token prompts (30 and 31 req/s) from one runner pod, straight to
     * the replicas ({@code balance: endpoints}), with {@code workloadExtra} under {@code
     * spec.workload}.
     */
    private static String prefixCacheRun(String name, String service, String workloadExtra) {
        return RunYaml.named(name)
                .target(service, MODEL)
                .targetExtra("    balance: endpoints")
                .workloadExtra(workloadExtra)
                .load("30, 31", 60, 0)
                .metricsEverySecond("")
                .yaml();
    }

    /** One counter of a simulator replica's page, summed over its label sets (0 when absent). */
    private static double counter(String metricsUrl, String name) throws Exception {
        return HttpGet.get(HTTP, metricsUrl)
                .body()
                .lines()
                .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    /**
     * Three simulator replicas (5 ms to the first token, 1 ms between tokens) behind Service {@code
     * name}: each pod's IP to its name.
     */
    private static Map<String, String> threeReplicas(String ns, String name) {
        cluster.simulator(name, MODEL)
                .replicas(3)
                .timeToFirstToken(5)
                .interTokenLatency(1)
                .deploy(client, ns, Duration.ofMinutes(2));
        return replicaAddresses(ns, name);
    }

    /** Pod name by pod IP of the three pods labelled {@code app=name}. */
    private static Map<String, String> replicaAddresses(String ns, String name) {
        Map<String, String> podOfAddress = new java.util.HashMap<>();
        for (Pod pod : client.pods().inNamespace(ns).withLabel("app", name).list().getItems()) {
            podOfAddress.put(pod.getStatus().getPodIP(), pod.getMetadata().getName());
        }
        assertThat(podOfAddress).hasSize(3);
        return podOfAddress;
    }

    /** 300 requests at 30 req/s from two runner pods against the three simulator replicas. */
    private static String balanceRun(String name, String targetExtra, int prompts) {
        return RunYaml.named(name)
                .target("bal", MODEL)
                .targetExtra(targetExtra)
                .load("30", prompts, 3)
                .runner(2, null)
                .metricsEverySecond("")
                .yaml();
    }

    /** Requests each replica served in the stage window, by its own counter (0 when absent). */
    private static Map<String, Long> served(JsonNode metrics) {
        JsonNode byReplica = metrics.get("server_metrics_by_replica");
        assertThat(fieldNames(byReplica)).hasSize(3);
        Map<String, Long> served = new java.util.TreeMap<>();
        for (String pod : fieldNames(byReplica)) {
            JsonNode counter = byReplica.get(pod).get("vllm:request_success_total");
            served.put(pod, counter == null ? 0L : Math.round(number(counter, "Increase")));
        }
        return served;
    }

    static String run(String name, String service, int rate, int prompts, String metricsExtra) {
        return RunYaml.named(name)
                .target(service, MODEL)
                .load(Integer.toString(rate), prompts, 4)
                .metricsEverySecond(metricsExtra)
                .yaml();
    }

    /** Waits until run {@code name} is {@code seconds} into its first stage (or has ended). */
    private static void awaitIntoFirstStage(String ns, String name, int seconds) {
        Runs.awaitOrEnd(
                client,
                ns,
                name,
                Duration.ofMinutes(2),
                r -> {
                    List<String> starts =
                            r.getStatus() == null ? null : r.getStatus().getStageStartTimes();
                    return starts != null
                            && !starts.isEmpty()
                            && Instant.now()
                                    .isAfter(Instant.parse(starts.get(0)).plusSeconds(seconds));
                });
    }

    private static void createRun(String ns, String yaml) {
        Runs.create(client, ns, yaml);
    }

    private static BenchmarkRun get(String ns, String name) {
        return Runs.get(client, ns, name);
    }

    private static Phase phase(String ns, String name) {
        return Runs.phase(client, ns, name);
    }

    /** {@link Runs#awaitPhase}, and the run has profiles. */
    private static BenchmarkRun awaitPhase(String ns, String name, Duration atMost, Phase wanted) {
        BenchmarkRun run = Runs.awaitPhase(client, ns, name, atMost, wanted);
        assertThat(run.getStatus().getProfiles()).as("profiles of %s", name).isNotEmpty();
        return run;
    }

    static double number(JsonNode stats, String key) {
        JsonNode value = stats.get(key);
        assertThat(value).as("%s in %s", key, stats).isNotNull();
        assertThat(value.isTextual()).as("%s is an LPG string in %s", key, stats).isTrue();
        return Double.parseDouble(value.asText());
    }

    static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new TreeSet<>();
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            names.add(it.next());
        }
        return names;
    }
}
