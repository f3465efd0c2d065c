package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.BenchmarkRunReconciler;
import io.inferencebench.operator.OperatorTestCluster;
import io.inferencebench.operator.RunAdmission;
import io.inferencebench.operator.RunParts;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.testkit.MetricsPage;
import io.inferencebench.testkit.ModelSim;
import io.inferencebench.testkit.PrometheusServer;
import io.inferencebench.testkit.ServiceObjects;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server metrics through the operator, in-process against a real kube-apiserver + etcd: the
 * per-stage checkpoint keeps the scrapes of a stage across an operator restart, and {@code
 * spec.metrics.prometheus} reads them from a real Prometheus server scraping the model-server
 * simulator. The test plays the runner pods by writing their part ConfigMaps.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerMetricsIT {

    private static final String TOKEN = "tok-" + UUID.randomUUID();

    private final HttpClient http =
            HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
    private OperatorTestCluster cluster;
    private KubernetesClient client;
    private BenchmarkRunReconciler reconciler;
    private String namespace;

    /** Everything logged in this JVM (the operator runs in-process), debug level included. */
    private final StringBuffer logs = new StringBuffer();

    private final java.util.logging.Handler logCapture =
            new java.util.logging.Handler() {
                @Override
                public void publish(java.util.logging.LogRecord r) {
                    logs.append(r.getMessage());
                    if (r.getParameters() != null) {
                        for (Object p : r.getParameters()) {
                            logs.append(' ').append(p);
                        }
                    }
                    if (r.getThrown() != null) {
                        logs.append(' ').append(r.getThrown());
                    }
                    logs.append('\n');
                }

                @Override
                public void flush() {}

                @Override
                public void close() {}
            };

    @BeforeAll
    void startApiServer() throws Exception {
        java.util.logging.Logger.getLogger("").addHandler(logCapture);
        java.util.logging.Logger.getLogger("io.inferencebench")
                .setLevel(java.util.logging.Level.FINEST);
        cluster = OperatorTestCluster.start().withBenchmarkRunCrd();
        client = cluster.client();
        startOperator();
    }

    private void startOperator() {
        reconciler =
                new BenchmarkRunReconciler(
                        client,
                        java.time.Clock.systemUTC(),
                        io.micrometer.core.instrument.Metrics.globalRegistry,
                        RunAdmission.fromConfig());
        cluster.startOperator(reconciler);
    }

    /** What a crash does to the operator process: its informers and scraping threads stop. */
    private void stopOperator() {
        cluster.stopOperator();
        reconciler.close();
    }

    @AfterAll
    void stop() {
        java.util.logging.Logger.getLogger("").removeHandler(logCapture);
        if (cluster != null) {
            if (reconciler != null) {
                stopOperator();
            }
            cluster.close();
        }
    }

    @BeforeEach
    void freshNamespace() {
        namespace = cluster.createRunNamespace("sm-");
    }

    @AfterEach
    void secretsNeverLeak() {
        // The bearer token must not appear in any status, ConfigMap or Event of the namespace.
        String statuses =
                client
                        .resources(BenchmarkRun.class)
                        .inNamespace(namespace)
                        .list()
                        .getItems()
                        .stream()
                        .map(r -> client.getKubernetesSerialization().asJson(r.getStatus()))
                        .reduce("", String::concat);
        String configMaps =
                client.configMaps().inNamespace(namespace).list().getItems().stream()
                        .map(c -> client.getKubernetesSerialization().asJson(c))
                        .reduce("", String::concat);
        String events =
                client.v1().events().inNamespace(namespace).list().getItems().stream()
                        .map(e -> client.getKubernetesSerialization().asJson(e))
                        .reduce("", String::concat);
        assertThat(statuses + configMaps + events).doesNotContain(TOKEN);
        assertThat(logs.length()).as("operator log lines captured").isPositive();
        assertThat(logs.toString()).doesNotContain(TOKEN);
    }

    // ------------------------------------------------------------------ checkpoint over a restart

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void scrapesTakenBeforeAnOperatorRestartCountInTheStageAfterIt() throws Exception {
        List<Long> scrapeTimes = new CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer server = metricsServer(4, scrapeTimes);
        server.createContext(
                "/",
                exchange -> {
                    exchange.sendResponseHeaders(200, -1);
                    exchange.close();
                });
        try {
            BenchmarkRun run =
                    create(
                            "restart",
                            """
                            target: {url: "http://127.0.0.1:%d", model: m}
                            load: {requestRates: [5], numPrompts: 10}
                            metrics: {interval: 500ms}
                            """
                                    .formatted(server.getAddress().getPort()));
            Instant stageStart = RunParts.startStage(cluster, run);

            // Wait for a checkpoint holding at least 6 scrapes of the stage window, then "crash"
            // right after it was written.
            String checkpointName = ResourceNames.serverMetrics("restart");
            await().atMost(Duration.ofSeconds(40))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> inWindow(checkpoint(checkpointName), stageStart) >= 6);
            String version =
                    client.configMaps()
                            .inNamespace(namespace)
                            .withName(checkpointName)
                            .get()
                            .getMetadata()
                            .getResourceVersion();
            await().atMost(Duration.ofSeconds(15))
                    .pollInterval(Duration.ofMillis(20))
                    .until(
                            () ->
                                    !version.equals(
                                            client.configMaps()
                                                    .inNamespace(namespace)
                                                    .withName(checkpointName)
                                                    .get()
                                                    .getMetadata()
                                                    .getResourceVersion()));
            stopOperator();
            List<Scrape> saved = checkpoint(checkpointName);
            int savedInWindow = inWindow(saved, stageStart);
            assertThat(saved).allMatch(Scrape::succeeded);
            assertThat(saved)
                    .as("the barrier scrape is stamped with the stage start")
                    .anyMatch(s -> s.timestampMillis() == stageStart.toEpochMilli());

            // Nobody scrapes while no operator runs.
            Thread.sleep(1500);
            long restartedAt = System.currentTimeMillis();
            startOperator();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> scrapeTimes.stream().filter(t -> t >= restartedAt).count() >= 4);

            long doneAt = System.currentTimeMillis();
            BenchmarkRunStatus status = finishAndAwaitSucceeded(run);
            // scrapes before the stage ended are all in its window; a few more may follow
            // until the run is Succeeded
            long afterRestartInWindow =
                    scrapeTimes.stream().filter(t -> t >= restartedAt && t <= doneAt).count();
            long afterRestart = scrapeTimes.stream().filter(t -> t >= restartedAt).count();

            JsonNode coverage =
                    status.getProfiles().getFirst().at("/metrics/server_metrics_coverage");
            System.out.printf(
                    "checkpoint over restart: %d scrape(s) of the window checkpointed before the"
                            + " restart, %d taken after it; profile coverage %s%n",
                    savedInWindow, afterRestart, coverage);
            // The checkpointed scrapes plus those the new operator took in the window; without
            // the checkpoint it could be at most afterRestart.
            assertThat(coverage.path("succeeded").asLong())
                    .isBetween(savedInWindow + afterRestartInWindow, savedInWindow + afterRestart)
                    .isGreaterThan(afterRestart);
            assertThat(coverage.path("failed").asInt()).isZero();
            // the gap without an operator shows in the ratio
            assertThat(coverage.path("ratio").asDouble()).isLessThan(1.0);
            assertThat(runningMean(status)).isEqualTo("4");
            // the checkpoint is deleted when the run finishes
            await().atMost(Duration.ofSeconds(10))
                    .until(
                            () ->
                                    client.configMaps()
                                                    .inNamespace(namespace)
                                                    .withName(checkpointName)
                                                    .get()
                                            == null);
        } finally {
            server.stop(0);
        }
    }

    private List<Scrape> checkpoint(String name) {
        ConfigMap cm = client.configMaps().inNamespace(namespace).withName(name).get();
        if (cm == null || cm.getBinaryData() == null) {
            return List.of();
        }
        assertThat(cm.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getKind()).isEqualTo("BenchmarkRun"));
        return ServerMetricsCheckpoint.decode(
                Base64.getDecoder()
                        .decode(cm.getBinaryData().get(ServerMetricsCheckpoint.SCRAPES_KEY)));
    }

    private static int inWindow(List<Scrape> scrapes, Instant start) {
        return (int)
                scrapes.stream().filter(s -> s.timestampMillis() >= start.toEpochMilli()).count();
    }

    // ------------------------------------------------------------------ Prometheus source

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void prometheusSourceFillsTheProfileAndAWrongSecretOnlyClearsTheCondition(@TempDir Path tmp)
            throws Exception {
        Path prometheus = provisionPrometheus();
        int simPort = freePort();
        int promPort = freePort();
        Process sim = null;
        Process prom = null;
        Path simLog = tmp.resolve("model-sim.log");
        Path promLog = tmp.resolve("prometheus.log");
        try {
            sim =
                    new ProcessBuilder(
                                    ModelSim.binary().toString(),
                                    "--model",
                                    "sim",
                                    "--host",
                                    "127.0.0.1",
                                    "--port",
                                    String.valueOf(simPort),
                                    "--max-num-seqs",
                                    "8",
                                    "--force-dummy-tokenizer",
                                    "--fake-metrics",
                                    "{\"running-requests\":7,\"waiting-requests\":3,"
                                            + "\"kv-cache-usage\":0.42}")
                            .redirectErrorStream(true)
                            .redirectOutput(simLog.toFile())
                            .start();
            awaitOk("http://127.0.0.1:" + simPort + "/metrics", sim, simLog);
            Path config = tmp.resolve("prometheus.yml");
            Files.writeString(
                    config,
                    """
                    global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
                    scrape_configs:
                      - job_name: model-sim
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                            labels: {namespace: llm}
                    """
                            .formatted(simPort));
            prom =
                    PrometheusServer.start(
                            prometheus, config, tmp.resolve("data"), promPort, promLog);
            String promUrl = "http://127.0.0.1:" + promPort;
            awaitOk(promUrl + "/-/ready", prom, promLog);
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(250))
                    .until(
                            () ->
                                    get(promUrl
                                                    + "/api/v1/query?query="
                                                    + java.net.URLEncoder.encode(
                                                            "up{job=\"model-sim\"} == 1",
                                                            StandardCharsets.UTF_8))
                                            .contains("\"model-sim\""));

            // The token is sent to Prometheus (which ignores it) and must never be copied.
            client.secrets()
                    .inNamespace(namespace)
                    .resource(
                            new SecretBuilder()
                                    .withNewMetadata()
                                    .withName("prom-token")
                                    .endMetadata()
                                    .addToStringData("token", TOKEN + "\n")
                                    .build())
                    .create();
            String target = "target: {url: \"http://127.0.0.1:%d\", model: sim}".formatted(simPort);
            String load = "load: {requestRates: [5], numPrompts: 10}";
            BenchmarkRun good =
                    create(
                            "prom-ok",
                            """
                            %s
                            %s
                            metrics:
                              prometheus:
                                url: %s
                                bearerTokenSecretRef: {name: prom-token, key: token}
                                selector: '{job="model-sim"}'
                                labels: {namespace: llm}
                                step: 1s
                                timeout: 5s
                            """
                                    .formatted(target, load, promUrl));
            BenchmarkRun wrongKey =
                    create(
                            "prom-wrong-key",
                            """
                            %s
                            %s
                            metrics:
                              prometheus:
                                url: %s
                                bearerTokenSecretRef: {name: prom-token, key: other}
                            """
                                    .formatted(target, load, promUrl));
            BenchmarkRun unreachable =
                    create(
                            "prom-down",
                            """
                            %s
                            %s
                            metrics:
                              prometheus:
                                url: http://127.0.0.1:%d
                                bearerTokenSecretRef: {name: prom-token, key: token}
                                timeout: 2s
                            """
                                    .formatted(target, load, freePort()));
            List<BenchmarkRun> runs = List.of(good, wrongKey, unreachable);
            for (BenchmarkRun run : runs) {
                RunParts.reportReady(cluster, run, 1);
            }
            Instant latestStart = Instant.EPOCH;
            for (BenchmarkRun run : runs) {
                Instant start = RunParts.firstBarrier(cluster, run);
                latestStart = start.isAfter(latestStart) ? start : latestStart;
            }
            // Let Prometheus scrape the stage window a few times.
            Instant until = latestStart.plusSeconds(4);
            await().atMost(Duration.ofSeconds(30)).until(() -> Instant.now().isAfter(until));
            for (BenchmarkRun run : runs) {
                RunParts.finishRun(client, run, 0, stageDone(1, run.getMetadata().getUid()));
            }

            BenchmarkRunStatus ok = awaitStatus("prom-ok", s -> s.getPhase() == Phase.SUCCEEDED);
            JsonNode metrics = ok.getProfiles().getFirst().path("metrics");
            System.out.println(
                    "Prometheus source through the operator: server_metrics = "
                            + metrics.path("server_metrics")
                            + "\ncoverage = "
                            + metrics.path("server_metrics_coverage"));
            assertThat(metrics.at("/server_metrics/vllm:num_requests_running/Mean").asText())
                    .isEqualTo("7");
            assertThat(metrics.at("/server_metrics/vllm:num_requests_waiting/Max").asText())
                    .isEqualTo("3");
            assertThat(metrics.at("/server_metrics/vllm:kv_cache_usage_perc/Median").asText())
                    .isEqualTo("0.42");
            assertThat(metrics.at("/server_metrics_coverage/succeeded").asInt())
                    .isGreaterThanOrEqualTo(4);
            assertThat(metrics.at("/server_metrics_coverage/replicas").asInt()).isEqualTo(1);
            assertThat(ok.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                    .hasValueSatisfying(
                            c -> {
                                assertThat(c.getStatus()).isEqualTo("True");
                                assertThat(c.getMessage()).contains("from Prometheus");
                            });
            // model_server_metrics in summary_stats too
            assertThat(
                            ok.getProfiles()
                                    .getFirst()
                                    .at("/summary_stats/stats/0/model_server_metrics")
                                    .toString())
                    .contains("vllm:num_requests_running");
            // Prometheus source: nothing scraped directly, so no checkpoint
            assertThat(
                            client.configMaps()
                                    .inNamespace(namespace)
                                    .withName(ResourceNames.serverMetrics("prom-ok"))
                                    .get())
                    .isNull();

            BenchmarkRunStatus wrong =
                    awaitStatus("prom-wrong-key", s -> s.getPhase() == Phase.SUCCEEDED);
            assertThat(wrong.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                    .hasValueSatisfying(
                            c -> {
                                assertThat(c.getStatus()).isEqualTo("False");
                                assertThat(c.getReason()).isEqualTo("PrometheusQueryFailed");
                                assertThat(c.getMessage())
                                        .contains(
                                                "spec.metrics.prometheus.bearerTokenSecretRef:"
                                                        + " Secret prom-token has no key other");
                            });
            assertThat(wrong.getProfiles().getFirst().at("/metrics/server_metrics").size())
                    .isZero();

            BenchmarkRunStatus down =
                    awaitStatus("prom-down", s -> s.getPhase() == Phase.SUCCEEDED);
            assertThat(down.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                    .hasValueSatisfying(
                            c -> {
                                assertThat(c.getStatus()).isEqualTo("False");
                                assertThat(c.getReason()).isEqualTo("PrometheusQueryFailed");
                                assertThat(c.getMessage()).contains("cannot connect to Prometheus");
                            });
            await().atMost(Duration.ofSeconds(10))
                    .until(
                            () ->
                                    client
                                                    .v1()
                                                    .events()
                                                    .inNamespace(namespace)
                                                    .list()
                                                    .getItems()
                                                    .stream()
                                                    .filter(e -> "Warning".equals(e.getType()))
                                                    .filter(
                                                            e ->
                                                                    "PrometheusQueryFailed"
                                                                            .equals(e.getReason()))
                                                    .count()
                                            >= 2);
        } finally {
            stopProcess(prom);
            stopProcess(sim);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theTokenIsReadAtReportTimeAndSentAsABearerHeaderOnly() throws Exception {
        List<String> authorizations = new CopyOnWriteArrayList<>();
        List<String> paths = new CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer prometheus =
                com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        prometheus.createContext(
                "/",
                exchange -> {
                    paths.add(exchange.getRequestURI().getPath());
                    // the same stub also answers the operator's target probe (any status will do)
                    if (exchange.getRequestURI().getPath().startsWith("/prefix/api/v1/")) {
                        authorizations.add(
                                String.valueOf(
                                        exchange.getRequestHeaders().getFirst("Authorization")));
                    }
                    byte[] body =
                            "{\"status\":\"error\",\"errorType\":\"unauthorized\",\"error\":\"bad token\"}"
                                    .getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(401, body.length);
                    exchange.getResponseBody().write(body);
                    exchange.close();
                });
        prometheus.start();
        try {
            BenchmarkRun run =
                    create(
                            "prom-auth",
                            """
                            target: {url: "http://127.0.0.1:%d", model: m}
                            load: {requestRates: [5], numPrompts: 10}
                            metrics:
                              prometheus:
                                url: http://127.0.0.1:%d/prefix
                                bearerTokenSecretRef: {name: late-token, key: token}
                                step: 1s
                            """
                                    .formatted(
                                            prometheus.getAddress().getPort(),
                                            prometheus.getAddress().getPort()));
            RunParts.startStage(cluster, run);
            // Created only now: the Secret is read when the stage ends, not when the run starts.
            client.secrets()
                    .inNamespace(namespace)
                    .resource(
                            new SecretBuilder()
                                    .withNewMetadata()
                                    .withName("late-token")
                                    .endMetadata()
                                    .addToData(
                                            "token",
                                            Base64.getEncoder()
                                                    .encodeToString(
                                                            (TOKEN + "\n")
                                                                    .getBytes(
                                                                            StandardCharsets
                                                                                    .UTF_8)))
                                    .build())
                    .create();
            BenchmarkRunStatus status = finishAndAwaitSucceeded(run);
            // the token file's trailing newline is trimmed, as Prometheus does for its own files
            assertThat(authorizations).isNotEmpty().allMatch(a -> a.equals("Bearer " + TOKEN));
            // with a Prometheus source the target itself is never scraped
            assertThat(paths).isNotEmpty().doesNotContain("/metrics");
            assertThat(status.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                    .hasValueSatisfying(
                            c -> {
                                assertThat(c.getReason()).isEqualTo("PrometheusQueryFailed");
                                assertThat(c.getMessage())
                                        .contains("HTTP 401 unauthorized: check the bearer token")
                                        .contains("http://127.0.0.1:")
                                        .contains("/prefix");
                            });
        } finally {
            prometheus.stop(0);
        }
    }

    // ------------------------------------------------------------------ Prometheus end edge

    /**
     * A Prometheus stand-in scraping every 2 s: a sample exists only from 50 ms after its scrape
     * time, and a query at t answers the newest sample at or before t, as Prometheus does. Requests
     * finish just after one scrape; the stage ends right after them. Read at once, the window's end
     * sees the scrape before them and misses them all; read after one scrape interval (found in the
     * targets API) plus a margin, it sees the next scrape and counts each exactly once.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aPrometheusWindowIsReadOnlyOnceTheFirstScrapeAfterTheStageEndExists() throws Exception {
        long scrapeEvery = 2000;
        long anchor = System.currentTimeMillis() / scrapeEvery * scrapeEvery - 10 * scrapeEvery;
        List<Long> completions = new CopyOnWriteArrayList<>();
        List<long[]> rangeQueries = new CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer prometheus =
                com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        prometheus.createContext(
                "/",
                exchange -> {
                    String path = exchange.getRequestURI().getPath();
                    String body =
                            switch (path) {
                                case "/api/v1/targets" ->
                                        """
                                        {"status":"success","data":{"activeTargets":[
                                         {"labels":{"job":"edge"},"scrapeInterval":"2s"}],
                                         "droppedTargets":[]}}""";
                                case "/api/v1/label/__name__/values" ->
                                        """
                                        {"status":"success","data":
                                         ["up","vllm:request_success_total"]}""";
                                case "/api/v1/metadata" ->
                                        """
                                        {"status":"success","data":{"vllm:request_success_total":
                                         [{"type":"counter","help":"","unit":""}]}}""";
                                case "/api/v1/query_range" -> {
                                    Map<String, String> form =
                                            form(
                                                    new String(
                                                            exchange.getRequestBody()
                                                                    .readAllBytes(),
                                                            StandardCharsets.UTF_8));
                                    long from = millis(form.get("start"));
                                    long to = millis(form.get("end"));
                                    long step = millis(form.get("step"));
                                    rangeQueries.add(new long[] {from, to});
                                    yield matrix(
                                            from,
                                            to,
                                            step,
                                            anchor,
                                            scrapeEvery,
                                            System.currentTimeMillis(),
                                            completions);
                                }
                                default -> "{}";
                            };
                    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().add("Content-Type", "application/json");
                    exchange.sendResponseHeaders(200, bytes.length);
                    exchange.getResponseBody().write(bytes);
                    exchange.close();
                });
        prometheus.start();
        try {
            String url = "http://127.0.0.1:" + prometheus.getAddress().getPort();
            BenchmarkRun run =
                    create(
                            "prom-edge",
                            """
                            target: {url: "%s", model: m}
                            load: {requestRates: [5], numPrompts: 10}
                            metrics:
                              prometheus: {url: "%s", selector: '{job="edge"}', timeout: 5s}
                            """
                                    .formatted(url, url));
            long stageStart = RunParts.startStage(cluster, run).toEpochMilli();
            // 100 ms after a scrape at least 3 s into the stage, 5 requests finish and the
            // stage ends: the next scrape is 1.9 s away.
            long scrape = anchor + ((stageStart + 3000 - anchor) / scrapeEvery + 1) * scrapeEvery;
            Thread.sleep(Math.max(0, scrape + 100 - System.currentTimeMillis()));
            long endedAt = System.currentTimeMillis();
            for (int i = 0; i < 5; i++) {
                completions.add(endedAt);
            }
            BenchmarkRunStatus status = finishAndAwaitSucceeded(run);
            JsonNode metrics = status.getProfiles().getFirst().path("metrics");
            long lastEvaluation = rangeQueries.stream().mapToLong(q -> q[1]).max().orElse(0);
            System.out.printf(
                    "Prometheus end edge: stage ended %d ms after a scrape, last evaluation %d ms"
                            + " after the stage end; server_metrics = %s, coverage = %s%n",
                    endedAt - scrape,
                    lastEvaluation - endedAt,
                    metrics.path("server_metrics"),
                    metrics.path("server_metrics_coverage"));
            assertThat(metrics.at("/server_metrics/vllm:request_success_total/Increase").asText())
                    .as("requests finished in the last scrape interval of the stage")
                    .isEqualTo("5");
            // the window ends one scrape interval plus the margin after the stage end
            assertThat(lastEvaluation - endedAt)
                    .isBetween(
                            scrapeEvery + ServerMetricsScraper.PROMETHEUS_END_MARGIN_MILLIS,
                            scrapeEvery + ServerMetricsScraper.PROMETHEUS_END_MARGIN_MILLIS + 2000);
        } finally {
            prometheus.stop(0);
        }
    }

    private static Map<String, String> form(String body) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.put(
                        java.net.URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static long millis(String seconds) {
        return new java.math.BigDecimal(seconds).movePointRight(3).longValueExact();
    }

    /**
     * The range answer of a target scraped at {@code anchor + n * every}, whose samples exist from
     * 50 ms after their scrape, and whose request counter counts the completions up to each scrape.
     */
    private static String matrix(
            long from,
            long to,
            long step,
            long anchor,
            long every,
            long now,
            List<Long> completions) {
        StringBuilder up = new StringBuilder();
        StringBuilder requests = new StringBuilder();
        for (long t = from; t <= to; t += step) {
            long newest = Math.min(t, now - 50);
            if (newest < anchor) {
                continue;
            }
            long sample = anchor + (newest - anchor) / every * every;
            long count = completions.stream().filter(c -> c <= sample).count();
            String time = java.math.BigDecimal.valueOf(t, 3).toPlainString();
            up.append(up.isEmpty() ? "" : ",").append("[").append(time).append(",\"1\"]");
            requests.append(requests.isEmpty() ? "" : ",")
                    .append("[")
                    .append(time)
                    .append(",\"")
                    .append(count)
                    .append("\"]");
        }
        String labels = "\"job\":\"edge\",\"instance\":\"sim:8000\"";
        return """
                {"status":"success","data":{"resultType":"matrix","result":[
                 {"metric":{"__name__":"up",%s},"values":[%s]},
                 {"metric":{"__name__":"vllm:request_success_total",%s},"values":[%s]}]}}"""
                .formatted(labels, up, labels, requests);
    }

    // ------------------------------------------------------------------ metrics port by name

    /**
     * {@code spec.metrics.port} by name resolves as a Service targetPort does: a port name of the
     * target Service (its EndpointSlice's ports), else a container port name of the endpoint's pod.
     * EndpointSlices may not hold loopback addresses, so the endpoint here has a TEST-NET-1 address
     * that is resolved but never contacted; an unknown name leaves the run Succeeded with
     * ServerMetricsCollected False naming the field and the names that exist (nothing is scraped).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theMetricsPortIsFoundByServicePortNameOrContainerPortName() throws Exception {
        client.pods()
                .inNamespace(namespace)
                .resource(
                        new io.fabric8.kubernetes.api.model.PodBuilder()
                                .withNewMetadata()
                                .withName("server-0")
                                .addToLabels("app", "server")
                                .endMetadata()
                                .withNewSpec()
                                .addNewContainer()
                                .withName("server")
                                .withImage("model-server")
                                .addNewPort()
                                .withName("http")
                                .withContainerPort(8000)
                                .endPort()
                                .endContainer()
                                .addNewContainer()
                                .withName("exporter")
                                .withImage("exporter")
                                .addNewPort()
                                .withName("vllm-metrics")
                                .withContainerPort(9400)
                                .endPort()
                                .endContainer()
                                .endSpec()
                                .build())
                .create();
        client.services()
                .inNamespace(namespace)
                .resource(
                        ServiceObjects.service(
                                "server",
                                "server",
                                "api",
                                80,
                                new io.fabric8.kubernetes.api.model.IntOrString("http")))
                .create();
        // what the EndpointSlice controller would write (kube-api-test runs no controllers)
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .resource(
                        new io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder(
                                        ServiceObjects.endpointSlice(
                                                "server-abcde",
                                                "server",
                                                "192.0.2.10",
                                                true,
                                                "api",
                                                8000))
                                .editFirstEndpoint()
                                .withNewTargetRef()
                                .withKind("Pod")
                                .withName("server-0")
                                .withNamespace(namespace)
                                .endTargetRef()
                                .endEndpoint()
                                .build())
                .create();
        String target = "target: {service: {name: server, port: 80}, model: m}";
        String load = "load: {requestRates: [5], numPrompts: 10}";
        Map<String, String> expected =
                Map.of(
                        "api", "http://192.0.2.10:8000/metrics",
                        "vllm-metrics", "http://192.0.2.10:9400/metrics",
                        "9100", "http://192.0.2.10:9100/metrics");
        {
            MetricsEndpoints endpoints = new MetricsEndpoints(client);
            for (Map.Entry<String, String> e : expected.entrySet()) {
                BenchmarkRun run =
                        parse(
                                "port-" + e.getKey(),
                                "%s\n%s\nmetrics: {port: %s}".formatted(target, load, e.getKey()));
                assertThat(endpoints.resolve(run))
                        .as("spec.metrics.port %s", e.getKey())
                        .containsExactly(
                                Map.entry(
                                        "server-0",
                                        new MetricsEndpoints.MetricsEndpoint(
                                                URI.create(e.getValue()), null)));
            }
            // No spec.metrics.port: pods are scraped on the Service port's target (8000), not on
            // the Service port itself (80).
            assertThat(endpoints.resolve(parse("port-default", target + "\n" + load)))
                    .containsExactly(
                            Map.entry(
                                    "server-0",
                                    new MetricsEndpoints.MetricsEndpoint(
                                            URI.create("http://192.0.2.10:8000/metrics"), null)));
            BenchmarkRun urlTarget =
                    parse(
                            "port-name-url",
                            ("target: {url: \"http://127.0.0.1:1\", model: m}\n%s\nmetrics:"
                                            + " {port: metrics}")
                                    .formatted(load));
            assertThat(endpoints.resolve(urlTarget).get("127.0.0.1").problem())
                    .isEqualTo(
                            "spec.metrics.port: the port name 'metrics' needs"
                                    + " spec.target.service (a URL target has no port names);"
                                    + " give a number");
        }

        BenchmarkRun unknown =
                create(
                        "port-unknown-name",
                        """
                        %s
                        %s
                        metrics: {port: nope, interval: 500ms}
                        """
                                .formatted(target, load));
        RunParts.playStage(
                cluster,
                unknown,
                Duration.ofSeconds(2),
                stageDone(1, unknown.getMetadata().getUid()));
        BenchmarkRunStatus status =
                awaitStatus("port-unknown-name", s -> s.getPhase() == Phase.SUCCEEDED);
        assertThat(status.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                .hasValueSatisfying(
                        c -> {
                            System.out.println("unknown metrics port name: " + c.getMessage());
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getReason()).isEqualTo("ScrapesFailed");
                            assertThat(c.getMessage())
                                    .contains(
                                            "server-0: spec.metrics.port: no port named 'nope':"
                                                    + " Service server has [api] and pod server-0"
                                                    + " has container ports [http, vllm-metrics]");
                        });
    }

    /**
     * A healthy run's coverage expects every round the operator attempted in the window, its start
     * barrier's and end's included: succeeded equals expected, not more.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aHealthyRunScrapesEveryExpectedRoundAndNoMore() throws Exception {
        com.sun.net.httpserver.HttpServer server = metricsServer(4, new CopyOnWriteArrayList<>());
        try {
            int port = server.getAddress().getPort();
            BenchmarkRun run =
                    create(
                            "healthy",
                            """
                            target: {url: "http://127.0.0.1:%d", model: m}
                            load: {requestRates: [5], numPrompts: 10}
                            metrics: {port: %d, interval: 500ms}
                            """
                                    .formatted(port, port));
            // The first request goes out 100 ms after the barrier, as a runner pod's would
            // (after it): the barrier's round, answered around the barrier, is not late.
            Instant start = RunParts.startStage(cluster, run, 1);
            await().atMost(Duration.ofSeconds(40))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> !Instant.now().isBefore(start.plusSeconds(3)));
            RunParts.finishRun(
                    cluster.client(),
                    run,
                    0,
                    stageDone(1, run.getMetadata().getUid(), start.plusMillis(100)));
            BenchmarkRunStatus status =
                    awaitStatus("healthy", s -> s.getPhase() == Phase.SUCCEEDED);
            JsonNode coverage =
                    status.getProfiles().getFirst().at("/metrics/server_metrics_coverage");
            System.out.println("healthy run, 500 ms interval, 3 s+ window: coverage " + coverage);
            // 3 s at 500 ms: at least 6 periodic rounds, plus the barrier's and the end's
            assertThat(coverage.path("succeeded").asInt())
                    .as("coverage %s", coverage)
                    .isEqualTo(coverage.path("expected").asInt())
                    .isGreaterThanOrEqualTo(8);
            assertThat(coverage.path("failed").asInt()).isZero();
            assertThat(coverage.path("ratio").asDouble()).isEqualTo(1.0);
            assertThat(runningMean(status)).isEqualTo("4");
            assertThat(status.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
        } finally {
            server.stop(0);
        }
    }

    /**
     * Serves {@code /metrics} with {@code vllm:num_requests_running} at a fixed value, adding each
     * scrape's time (epoch ms) to {@code scrapeTimes}.
     */
    private static com.sun.net.httpserver.HttpServer metricsServer(
            int running, List<Long> scrapeTimes) throws IOException {
        com.sun.net.httpserver.HttpServer server =
                com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext(
                "/metrics",
                exchange -> {
                    scrapeTimes.add(System.currentTimeMillis());
                    MetricsPage.send(
                            exchange,
                            "# TYPE vllm:num_requests_running gauge\n"
                                    + "vllm:num_requests_running{model_name=\"m\"} "
                                    + running
                                    + "\n");
                });
        server.start();
        return server;
    }

    /** The profile's mean of {@code vllm:num_requests_running} over the stage window. */
    private static String runningMean(BenchmarkRunStatus status) {
        return status.getProfiles()
                .getFirst()
                .at("/metrics/server_metrics/vllm:num_requests_running/Mean")
                .asText();
    }

    /** The runner pod (part 0) finished the run's one stage; waits until it has Succeeded. */
    private BenchmarkRunStatus finishAndAwaitSucceeded(BenchmarkRun run) {
        RunParts.finishRun(client, run, 0, stageDone(1, run.getMetadata().getUid()));
        return awaitStatus(run.getMetadata().getName(), s -> s.getPhase() == Phase.SUCCEEDED);
    }

    // ------------------------------------------------------------------ helpers

    private BenchmarkRun create(String name, String specBody) {
        return cluster.createRun(namespace, OperatorTestCluster.runYaml(name, null, specBody));
    }

    /** A run as the operator would read it, not created in the API server. */
    private BenchmarkRun parse(String name, String specBody) {
        return client.getKubernetesSerialization()
                .unmarshal(
                        OperatorTestCluster.runYaml(name, namespace, specBody), BenchmarkRun.class);
    }

    private BenchmarkRunStatus awaitStatus(
            String name, java.util.function.Predicate<BenchmarkRunStatus> predicate) {
        return cluster.awaitRunStatus(namespace, name, predicate);
    }

    private Map<String, String> stageDone(int stage, String uid) {
        return stageDone(stage, uid, Instant.ofEpochMilli(System.currentTimeMillis() - 4_000));
    }

    /** A finished stage of 10 requests at 5 req/s whose first went out at {@code first}. */
    private Map<String, String> stageDone(int stage, String uid, Instant first) {
        StageResult result =
                RunParts.completedStage(
                        stage, 5, 10, RunParts.epochNanos(first), 1_800_000_000L, 2_000_000_000L);
        RunParts.recordSteadyRequests(result, 0);
        return RunParts.report(PartReport.STATE_RUNNING, stage, uid, result);
    }

    private String get(String url) throws IOException, InterruptedException {
        return http.send(
                        HttpRequest.newBuilder(URI.create(url))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private void awaitOk(String url, Process process, Path log) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(
                        () -> {
                            if (!process.isAlive()) {
                                throw new AssertionError(
                                        url + ": process exited:\n" + Files.readString(log));
                            }
                            return http.send(
                                                    HttpRequest.newBuilder(URI.create(url))
                                                            .timeout(Duration.ofSeconds(2))
                                                            .build(),
                                                    HttpResponse.BodyHandlers.discarding())
                                            .statusCode()
                                    == 200;
                        });
    }

    /** The Prometheus binary from e2e/scripts/provision-prometheus.sh; skips when unavailable. */
    private static Path provisionPrometheus() throws Exception {
        Path script =
                Path.of(System.getProperty("user.dir"))
                        .toAbsolutePath()
                        .getParent()
                        .resolve("e2e/scripts/provision-prometheus.sh");
        Process p =
                new ProcessBuilder("bash", script.toString())
                        .redirectError(ProcessBuilder.Redirect.PIPE)
                        .start();
        Future<byte[]> err =
                Executors.newVirtualThreadPerTaskExecutor()
                        .submit(() -> p.getErrorStream().readAllBytes());
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean finished = p.waitFor(15, TimeUnit.MINUTES);
        String stderr = new String(err.get(), StandardCharsets.UTF_8);
        Assumptions.assumeTrue(
                finished && p.exitValue() == 0 && !out.isBlank(),
                () -> "skipped: no Prometheus server here (" + script + ": " + stderr + ")");
        return Path.of(out.strip());
    }

    private static void stopProcess(Process p) throws InterruptedException {
        if (p == null) {
            return;
        }
        p.destroy();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private static int freePort() throws IOException {
        return io.inferencebench.testkit.FreePorts.claim();
    }
}
