package io.inferencebench.profile.server.prometheus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.prom.Sample;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PrometheusApiSourceTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final long T2 = T0 + 2_000;
    private static final ServerMetricCatalog CATALOG =
            ServerMetricCatalog.forBackend("llm-d-inference-sim");

    /** Recorded answer of /api/v1/label/__name__/values (an uncatalogued name included). */
    private static final String NAMES =
            """
            {"status":"success","data":["go_goroutines","up","vllm:kv_cache_usage_perc",\
            "vllm:num_requests_running","vllm:request_success_total",\
            "vllm:time_to_first_token_seconds_bucket","vllm:time_to_first_token_seconds_count",\
            "vllm:time_to_first_token_seconds_sum"]}
            """;

    private static final String METADATA =
            """
            {"status":"success","data":{\
            "go_goroutines":[{"type":"gauge","help":"Goroutines.","unit":""}],\
            "vllm:kv_cache_usage_perc":[{"type":"gauge","help":"KV","unit":""}],\
            "vllm:num_requests_running":[{"type":"gauge","help":"Running","unit":""}],\
            "vllm:request_success_total":[{"type":"counter","help":"Success","unit":""}],\
            "vllm:time_to_first_token_seconds":[{"type":"histogram","help":"TTFT","unit":""}]}}
            """;

    /**
     * Recorded query_range answer for [T0, T0+2s] at step 1s: replicas sim-a and sim-b serve, sim-c
     * is down throughout, sim-b's counter series appears only after its first request.
     */
    private static final String MATRIX =
            """
            {"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"__name__":"up","instance":"10.0.0.1:8000","job":"sim","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"1"],[1700000001,"1"],[1700000002,"1"]]},
            {"metric":{"__name__":"up","instance":"10.0.0.2:8000","job":"sim","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"1"],[1700000001,"1"],[1700000002,"1"]]},
            {"metric":{"__name__":"up","instance":"10.0.0.3:8000","job":"sim","namespace":"llm","pod":"sim-c"},
             "values":[[1700000000,"0"],[1700000001,"0"],[1700000002,"0"]]},
            {"metric":{"__name__":"vllm:num_requests_running","instance":"10.0.0.1:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"2"],[1700000001,"3"],[1700000002,"1"]]},
            {"metric":{"__name__":"vllm:num_requests_running","instance":"10.0.0.2:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"0"],[1700000001,"1"],[1700000002,"4"]]},
            {"metric":{"__name__":"vllm:kv_cache_usage_perc","instance":"10.0.0.1:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"0.1"],[1700000001,"NaN"],[1700000002,"0.3"]]},
            {"metric":{"__name__":"vllm:request_success_total","finished_reason":"stop","instance":"10.0.0.1:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"10"],[1700000001,"14"],[1700000002,"20"]]},
            {"metric":{"__name__":"vllm:request_success_total","finished_reason":"stop","instance":"10.0.0.2:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000001,"3"],[1700000002,"5"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_bucket","instance":"10.0.0.1:8000","job":"sim","le":"0.01","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"1"],[1700000001,"2"],[1700000002,"4"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_bucket","instance":"10.0.0.1:8000","job":"sim","le":"0.05","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"5"],[1700000001,"8"],[1700000002,"13"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_bucket","instance":"10.0.0.1:8000","job":"sim","le":"+Inf","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"6"],[1700000001,"10"],[1700000002,"16"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_sum","instance":"10.0.0.1:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"0.2"],[1700000001,"0.35"],[1700000002,"0.6"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_count","instance":"10.0.0.1:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-a"},
             "values":[[1700000000,"6"],[1700000001,"10"],[1700000002,"16"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_bucket","instance":"10.0.0.2:8000","job":"sim","le":"0.01","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"0"],[1700000001,"0"],[1700000002,"1"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_bucket","instance":"10.0.0.2:8000","job":"sim","le":"0.05","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"1"],[1700000001,"3"],[1700000002,"4"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_bucket","instance":"10.0.0.2:8000","job":"sim","le":"+Inf","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"1"],[1700000001,"4"],[1700000002,"6"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_sum","instance":"10.0.0.2:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"0.03"],[1700000001,"0.2"],[1700000002,"0.31"]]},
            {"metric":{"__name__":"vllm:time_to_first_token_seconds_count","instance":"10.0.0.2:8000","job":"sim","model_name":"m","namespace":"llm","pod":"sim-b"},
             "values":[[1700000000,"1"],[1700000001,"4"],[1700000002,"6"]]}
            ]}}
            """;

    private PrometheusStub stub;

    @BeforeEach
    void start() throws Exception {
        stub = new PrometheusStub();
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private PrometheusSourceConfig config() {
        return PrometheusSourceConfig.of(stub.url(), "{namespace=\"llm\"}")
                .withStep(Duration.ofSeconds(1))
                .withTimeout(Duration.ofSeconds(5));
    }

    private void recordedServer() {
        stub.json("/api/v1/label/__name__/values", NAMES)
                .json("/api/v1/metadata", METADATA)
                .route("/api/v1/query_range", PrometheusApiSourceTest::recordedRange);
    }

    /** The recorded matrix restricted to the requested [start, end], as Prometheus would. */
    private static PrometheusStub.Answer recordedRange(PrometheusStub.Request r) {
        try {
            double from = Double.parseDouble(r.param("start"));
            double to = Double.parseDouble(r.param("end"));
            com.fasterxml.jackson.databind.ObjectMapper json =
                    new com.fasterxml.jackson.databind.ObjectMapper();
            com.fasterxml.jackson.databind.JsonNode root = json.readTree(MATRIX);
            for (com.fasterxml.jackson.databind.JsonNode series :
                    root.path("data").path("result")) {
                com.fasterxml.jackson.databind.node.ArrayNode values =
                        (com.fasterxml.jackson.databind.node.ArrayNode) series.path("values");
                for (int i = values.size() - 1; i >= 0; i--) {
                    double t = values.get(i).get(0).asDouble();
                    if (t < from || t > to) {
                        values.remove(i);
                    }
                }
            }
            return PrometheusStub.Answer.ok(json.writeValueAsString(root));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The same data as the recorded matrix, as the text pages a direct scrape would have read. */
    private static List<Scrape> directScrapes() {
        double[][] a = {
            {2, 0.1, 10, 1, 5, 6, 0.2, 6},
            {3, Double.NaN, 14, 2, 8, 10, 0.35, 10},
            {1, 0.3, 20, 4, 13, 16, 0.6, 16}
        };
        double[][] b = {
            {0, Double.NaN, Double.NaN, 0, 1, 1, 0.03, 1},
            {1, Double.NaN, 3, 0, 3, 4, 0.2, 4},
            {4, Double.NaN, 5, 1, 4, 6, 0.31, 6}
        };
        List<Scrape> scrapes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            scrapes.add(Scrape.success("sim-a", T0 + i * 1000L, textPage(a[i], true)));
            scrapes.add(Scrape.success("sim-b", T0 + i * 1000L, textPage(b[i], false)));
        }
        return scrapes;
    }

    private static io.inferencebench.profile.prom.ParsedPage textPage(double[] v, boolean kv) {
        StringBuilder t = new StringBuilder();
        t.append("# TYPE vllm:num_requests_running gauge\n");
        t.append("vllm:num_requests_running{model_name=\"m\"} ").append(v[0]).append('\n');
        t.append("# TYPE vllm:kv_cache_usage_perc gauge\n");
        if (kv) {
            t.append("vllm:kv_cache_usage_perc{model_name=\"m\"} ").append(v[1]).append('\n');
        }
        t.append("# TYPE vllm:request_success_total counter\n");
        if (!Double.isNaN(v[2])) {
            t.append("vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} ")
                    .append(v[2])
                    .append('\n');
        }
        t.append("# TYPE vllm:time_to_first_token_seconds histogram\n");
        String h = "vllm:time_to_first_token_seconds";
        t.append(h).append("_bucket{le=\"0.01\",model_name=\"m\"} ").append(v[3]).append('\n');
        t.append(h).append("_bucket{le=\"0.05\",model_name=\"m\"} ").append(v[4]).append('\n');
        t.append(h).append("_bucket{le=\"+Inf\",model_name=\"m\"} ").append(v[5]).append('\n');
        t.append(h).append("_sum{model_name=\"m\"} ").append(v[6]).append('\n');
        t.append(h).append("_count{model_name=\"m\"} ").append(v[7]).append('\n');
        return PrometheusTextParser.parse(t.toString());
    }

    @Test
    void decodesMatrixIntoOneScrapePerReplicaAndTime() throws Exception {
        recordedServer();
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            PrometheusApiSource.Window w = source.fetch(CATALOG, T0, T2);

            assertThat(w.replicas()).containsExactly("sim-a", "sim-b", "sim-c");
            assertThat(w.stepMillis()).isEqualTo(1000);
            assertThat(w.expectedScrapes()).isEqualTo(9);
            assertThat(w.scrapes()).hasSize(9);
            assertThat(w.scrapes().stream().filter(s -> !s.succeeded()))
                    .hasSize(3)
                    .allSatisfy(
                            s -> {
                                assertThat(s.replica()).isEqualTo("sim-c");
                                assertThat(s.error()).contains("up=0");
                            });
            Scrape a1 =
                    w.scrapes().stream()
                            .filter(
                                    s ->
                                            s.replica().equals("sim-a")
                                                    && s.timestampMillis() == T0 + 1000)
                            .findFirst()
                            .orElseThrow();
            var ttft = a1.page().family("vllm:time_to_first_token_seconds");
            assertThat(ttft.type()).isEqualTo(io.inferencebench.profile.prom.MetricType.HISTOGRAM);
            assertThat(ttft.samples())
                    .extracting(Sample::name)
                    .contains(
                            "vllm:time_to_first_token_seconds_bucket",
                            "vllm:time_to_first_token_seconds_sum",
                            "vllm:time_to_first_token_seconds_count");
            assertThat(a1.page().family("vllm:request_success_total").type())
                    .isEqualTo(io.inferencebench.profile.prom.MetricType.COUNTER);
            Sample kv = a1.page().family("vllm:kv_cache_usage_perc").samples().get(0);
            assertThat(kv.value()).isNaN();
            assertThat(kv.labels()).doesNotContainKey("__name__").containsEntry("pod", "sim-a");
            assertThat(a1.page().family("go_goroutines")).isNull();
        }

        List<PrometheusStub.Request> ranges = stub.requests("/api/v1/query_range");
        assertThat(ranges).hasSize(2);
        PrometheusStub.Request q = ranges.get(0);
        assertThat(q.method()).isEqualTo("POST");
        assertThat(q.param("start")).isEqualTo("1700000000.000");
        assertThat(q.param("end")).isEqualTo("1700000001.000");
        assertThat(q.param("step")).isEqualTo("1.000");
        // the window end is evaluated on its own, so it is a point whatever the step rounding
        assertThat(ranges.get(1).param("start")).isEqualTo("1700000002.000");
        assertThat(ranges.get(1).param("end")).isEqualTo("1700000002.000");
        assertThat(q.param("query"))
                .startsWith("{__name__=~\"")
                .contains("vllm:time_to_first_token_seconds_bucket", "up", "namespace=\"llm\"")
                .doesNotContain("go_goroutines");
        assertThat(stub.requests("/api/v1/label/__name__/values").get(0).param("match[]"))
                .isEqualTo("{__name__=~\".+\",namespace=\"llm\"}");
    }

    @Test
    void statisticsEqualThoseOfTheSameDataScrapedDirectly() {
        recordedServer();
        ServerMetricsReport viaPrometheus;
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            viaPrometheus = source.report(CATALOG, T0, T2);
        }
        ServerMetricsReport direct = WindowStatistics.compute(CATALOG, directScrapes(), T0, T2, 6);

        assertThat(viaPrometheus.aggregate()).isNotEmpty().isEqualTo(direct.aggregate());
        assertThat(viaPrometheus.perReplica()).isEqualTo(direct.perReplica());
        ServerMetricSummary ttft = byName(viaPrometheus, "vllm:time_to_first_token_seconds");
        // Δcount = (16-6) + (6-1) = 15, Δsum = 0.4 + 0.28
        assertThat(ttft.increase()).isEqualTo(15.0);
        assertThat(ttft.mean()).isCloseTo(0.68 / 15, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(byName(viaPrometheus, "vllm:request_success_total").increase()).isEqualTo(15.0);
        assertThat(viaPrometheus.coverage().succeeded()).isEqualTo(6);
        assertThat(viaPrometheus.coverage().failed()).isEqualTo(3);
        assertThat(viaPrometheus.coverage().expected()).isEqualTo(9);
    }

    private static ServerMetricSummary byName(ServerMetricsReport r, String name) {
        return r.aggregate().stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " missing from " + r.aggregate()));
    }

    @Test
    void infiniteGaugeValuesAreKeptInThePageAndUnparsableOnesWarned() throws Exception {
        stub.json(
                        "/api/v1/label/__name__/values",
                        "{\"status\":\"success\",\"data\":[\"vllm:num_requests_running\"]}")
                .json("/api/v1/metadata", "{\"status\":\"success\",\"data\":{}}")
                .json(
                        "/api/v1/query_range",
                        """
                        {"status":"success","data":{"resultType":"matrix","result":[
                        {"metric":{"__name__":"vllm:num_requests_running","instance":"h:1"},
                         "values":[[1700000000,"+Inf"],[1700000001,"-Inf"],[1700000002,"bogus"]]}]}}
                        """);
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            PrometheusApiSource.Window w = source.fetch(CATALOG, T0, T2);
            assertThat(w.scrapes()).hasSize(2);
            assertThat(w.scrapes().get(0).replica()).isEqualTo("h:1");
            assertThat(
                            w.scrapes()
                                    .get(0)
                                    .page()
                                    .family("vllm:num_requests_running")
                                    .samples()
                                    .get(0)
                                    .value())
                    .isEqualTo(Double.POSITIVE_INFINITY);
            assertThat(
                            w.scrapes()
                                    .get(1)
                                    .page()
                                    .family("vllm:num_requests_running")
                                    .samples()
                                    .get(0)
                                    .value())
                    .isEqualTo(Double.NEGATIVE_INFINITY);
            assertThat(w.warnings()).anyMatch(x -> x.contains("bogus"));
        }
    }

    @Test
    void errorResponseBecomesAClearMessage() {
        stub.json("/api/v1/label/__name__/values", NAMES)
                .json("/api/v1/metadata", METADATA)
                .route(
                        "/api/v1/query_range",
                        r ->
                                new PrometheusStub.Answer(
                                        400,
                                        "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":"
                                                + "\"exceeded maximum resolution of 11,000 points per"
                                                + " timeseries. Try decreasing the query resolution"
                                                + " (?step=XX)\"}",
                                        0));
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage())
                    .contains(stub.url().toString())
                    .contains("/api/v1/query_range")
                    .contains("HTTP 400")
                    .contains("bad_data")
                    .contains("exceeded maximum resolution");

            ServerMetricsReport report = source.report(CATALOG, T0, T2);
            assertThat(report.aggregate()).isEmpty();
            assertThat(report.coverage().succeeded()).isZero();
            assertThat(report.coverage().failed()).isEqualTo(1);
            assertThat(report.coverage().errors()).singleElement().asString().contains("bad_data");
        }
    }

    @Test
    void nonJsonAnswerAndMissingApiAreNamed() {
        stub.route(
                "/api/v1/label/__name__/values",
                r -> new PrometheusStub.Answer(502, "<html>Bad Gateway</html>", 0));
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage())
                    .contains("HTTP 502", "not Prometheus API JSON", "Bad Gateway");
        }
        stub.route("/api/v1/label/__name__/values", r -> new PrometheusStub.Answer(302, "", 0));
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage()).contains("HTTP 302", "redirect", "(empty)");
        }
        PrometheusSourceConfig wrongPrefix =
                PrometheusSourceConfig.of(URI.create(stub.url() + "/nothing-here"), null)
                        .withStep(Duration.ofSeconds(1));
        try (PrometheusApiSource source = new PrometheusApiSource(wrongPrefix)) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage()).contains("HTTP 404", "check the URL");
        }
    }

    @Test
    void bearerTokenIsSentOnEveryRequestAndNeverAppearsInMessages() {
        String token = "s3cr3t-T0ken-value";
        recordedServer();
        PrometheusSourceConfig withToken = config().withBearerToken(token);
        try (PrometheusApiSource source = new PrometheusApiSource(withToken)) {
            ServerMetricsReport ok = source.report(CATALOG, T0, T2);
            assertThat(ok.aggregate()).isNotEmpty();
        }
        assertThat(stub.requests)
                .hasSizeGreaterThanOrEqualTo(3)
                .allSatisfy(r -> assertThat(r.auth()).isEqualTo("Bearer " + token));

        // a server that echoes the credentials in its error must not leak them into our messages
        stub.route(
                "/api/v1/label/__name__/values",
                r ->
                        new PrometheusStub.Answer(
                                401,
                                "{\"status\":\"error\",\"errorType\":\"unauthorized\",\"error\":"
                                        + "\"bad token "
                                        + token
                                        + "\"}",
                                0));
        try (PrometheusApiSource source = new PrometheusApiSource(withToken)) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage()).contains("HTTP 401", "bearer token").doesNotContain(token);
            ServerMetricsReport failed = source.report(CATALOG, T0, T2);
            assertThat(failed.coverage().errors())
                    .isNotEmpty()
                    .allSatisfy(m -> assertThat(m).doesNotContain(token));
        }
        assertThat(withToken.toString()).doesNotContain(token).contains("<redacted>");
        PrometheusSourceConfig badToken = config().withBearerToken(token + "\n");
        assertThat(badToken.validate("spec.metrics.prometheus"))
                .singleElement()
                .asString()
                .contains("spec.metrics.prometheus.bearerToken")
                .doesNotContain(token);
    }

    @Test
    void slowServerTimesOutWithAMessage() {
        stub.route(
                "/api/v1/label/__name__/values", r -> new PrometheusStub.Answer(200, NAMES, 3_000));
        PrometheusSourceConfig quick = config().withTimeout(Duration.ofMillis(300));
        try (PrometheusApiSource source = new PrometheusApiSource(quick)) {
            long t = System.nanoTime();
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage()).contains("did not answer", "within 300 ms");
            assertThat((System.nanoTime() - t) / 1_000_000).isLessThan(2_500);
        }
    }

    @Test
    void unreachableServerIsNamedWithoutCredentials() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        PrometheusSourceConfig cfg =
                PrometheusSourceConfig.of(URI.create("http://user:pw@127.0.0.1:" + port), null)
                        .withStep(Duration.ofSeconds(1))
                        .withTimeout(Duration.ofSeconds(2));
        try (PrometheusApiSource source = new PrometheusApiSource(cfg)) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.getMessage())
                    .contains("127.0.0.1:" + port)
                    .doesNotContain("pw")
                    .containsAnyOf("cannot connect", "failed");
        }
    }

    @Test
    void emptyResultGivesNoScrapesAndSaysWhy() throws Exception {
        stub.json("/api/v1/label/__name__/values", "{\"status\":\"success\",\"data\":[]}")
                .json("/api/v1/metadata", METADATA)
                .json(
                        "/api/v1/query_range",
                        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}");
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            PrometheusApiSource.Window w = source.fetch(CATALOG, T0, T2);
            assertThat(w.scrapes()).isEmpty();
            assertThat(w.expectedScrapes()).isZero();
            assertThat(w.warnings()).singleElement().asString().contains("no series match");
            ServerMetricsReport r = source.report(CATALOG, T0, T2);
            assertThat(r.aggregate()).isEmpty();
            assertThat(r.coverage().succeeded()).isZero();
            assertThat(r.coverage().errors()).anyMatch(m -> m.contains("no series match"));
        }
    }

    @Test
    void stepDefaultsToTheScrapeIntervalOfMatchingTargets() throws Exception {
        recordedServer();
        stub.json(
                "/api/v1/targets",
                """
                {"status":"success","data":{"activeTargets":[
                 {"labels":{"job":"other","namespace":"kube-system"},"scrapeInterval":"100ms"},
                 {"labels":{"job":"sim","namespace":"llm"},"scrapeInterval":"1s"},
                 {"labels":{"job":"sim2","namespace":"llm"},"scrapeInterval":"1m30s"}],
                 "droppedTargets":[]}}
                """);
        PrometheusSourceConfig noStep =
                PrometheusSourceConfig.of(stub.url(), "{namespace=\"llm\"}");
        try (PrometheusApiSource source = new PrometheusApiSource(noStep)) {
            PrometheusApiSource.Window w = source.fetch(CATALOG, T0, T2);
            assertThat(w.stepMillis()).isEqualTo(1000);
        }
        try (PrometheusApiSource source = new PrometheusApiSource(noStep)) {
            // what a caller waits for after a window's end before querying it
            assertThat(source.step()).isEqualTo(Duration.ofSeconds(1));
        }
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            assertThat(source.step()).isEqualTo(Duration.ofSeconds(1));
        }
        try (PrometheusApiSource source =
                new PrometheusApiSource(config().withStep(Duration.ofMillis(700)))) {
            assertThat(source.step()).isEqualTo(Duration.ofMillis(700));
        }
        assertThat(PrometheusAnswers.parseDuration("1m30s")).isEqualTo(90_000);
        assertThat(PrometheusAnswers.parseDuration("250ms")).isEqualTo(250);
        assertThat(PrometheusAnswers.parseDuration("1x")).isEqualTo(-1);
    }

    @Test
    void stepIsAlignedSoTheWindowEndIsAnEvaluationPoint() throws Exception {
        recordedServer();
        PrometheusSourceConfig cfg = config().withStep(Duration.ofMillis(700));
        try (PrometheusApiSource source = new PrometheusApiSource(cfg)) {
            PrometheusApiSource.Window w = source.fetch(CATALOG, T0, T2);
            // 2000 ms in ceil(2000/700) = 3 intervals of 666 ms
            assertThat(w.stepMillis()).isEqualTo(666);
        }
        List<PrometheusStub.Request> ranges = stub.requests("/api/v1/query_range");
        assertThat(ranges)
                .extracting(r -> r.param("start"), r -> r.param("end"))
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("1700000000.000", "1700000001.332"),
                        org.assertj.core.groups.Tuple.tuple("1700000002.000", "1700000002.000"));
        assertThat(ranges.get(0).param("step")).isEqualTo("0.666");
    }

    @Test
    void longWindowsAreSplitBelowThePointLimit() throws Exception {
        stub.json("/api/v1/label/__name__/values", NAMES)
                .json("/api/v1/metadata", METADATA)
                .json(
                        "/api/v1/query_range",
                        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}");
        PrometheusSourceConfig cfg = config().withStep(Duration.ofSeconds(1));
        long end = T0 + 25_000_000L; // 25,001 points at 1 s
        try (PrometheusApiSource source = new PrometheusApiSource(cfg)) {
            source.fetch(CATALOG, T0, end);
        }
        List<PrometheusStub.Request> calls = stub.requests("/api/v1/query_range");
        // 25,000 regular points in chunks of 11,000, 11,000 and 3,000, then the end point
        assertThat(calls).hasSize(4);
        assertThat(calls.get(0).param("start")).isEqualTo("1700000000.000");
        assertThat(calls.get(0).param("end")).isEqualTo("1700010999.000");
        assertThat(calls.get(1).param("start")).isEqualTo("1700011000.000");
        assertThat(calls.get(2).param("end")).isEqualTo("1700024999.000");
        assertThat(calls.get(3).param("start")).isEqualTo("1700025000.000");
        assertThat(calls.get(3).param("end")).isEqualTo("1700025000.000");
        for (PrometheusStub.Request c : calls) {
            double points =
                    (Double.parseDouble(c.param("end")) - Double.parseDouble(c.param("start")))
                                    / Double.parseDouble(c.param("step"))
                            + 1;
            assertThat(points).isLessThanOrEqualTo(PrometheusApiSource.MAX_POINTS_PER_QUERY);
        }
    }

    /** The recorded answer's size for the points in [from, to] (epoch seconds). */
    private static int rangeAnswerBytes(long fromSeconds, long toSeconds) {
        PrometheusStub.Request r =
                new PrometheusStub.Request(
                        "POST",
                        "/api/v1/query_range",
                        Map.of(
                                "start", List.of(Long.toString(fromSeconds)),
                                "end", List.of(Long.toString(toSeconds))),
                        null);
        return recordedRange(r).body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }

    @Test
    void aRangeAnswerOverTheBoundIsAskedAgainInParts() throws Exception {
        recordedServer();
        PrometheusApiSource.Window whole;
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            whole = source.fetch(CATALOG, T0, T2);
        }
        stub.requests.clear();
        // Between the size of the window's first two points and that of one point: the first
        // query_range answer is over the bound, each half of it fits.
        int onePoint = rangeAnswerBytes(T0 / 1000, T0 / 1000);
        int twoPoints = rangeAnswerBytes(T0 / 1000, T0 / 1000 + 1);
        assertThat(twoPoints).isGreaterThan(onePoint + 2);
        long bound = (onePoint + twoPoints) / 2;
        PrometheusApiSource.Window parts;
        try (PrometheusApiSource source = new PrometheusApiSource(config(), bound)) {
            parts = source.fetch(CATALOG, T0, T2);
        }

        assertThat(parts.scrapes()).isEqualTo(whole.scrapes());
        assertThat(parts.expectedScrapes()).isEqualTo(whole.expectedScrapes());
        assertThat(parts.warnings())
                .contains(
                        "query_range answers over "
                                + bound
                                + " bytes: the window was asked in smaller parts");
        // [T0, T0+1] refused, then [T0, T0] and [T0+1, T0+1], then the end point
        List<PrometheusStub.Request> ranges = stub.requests("/api/v1/query_range");
        assertThat(ranges)
                .extracting(r -> r.param("start") + "-" + r.param("end"))
                .containsExactly(
                        "1700000000.000-1700000001.000",
                        "1700000000.000-1700000000.000",
                        "1700000001.000-1700000001.000",
                        "1700000002.000-1700000002.000");
    }

    @Test
    void aSinglePointOverTheBoundFailsTheWindowWithTheReason() {
        recordedServer();
        try (PrometheusApiSource source = new PrometheusApiSource(config(), 1000)) {
            PrometheusQueryException e =
                    catchThrowableOfType(
                            PrometheusQueryException.class, () -> source.fetch(CATALOG, T0, T2));
            assertThat(e.kind()).isEqualTo(PrometheusQueryException.Kind.TOO_LARGE);
            assertThat(e.getMessage())
                    .contains("answered /api/v1/query_range with HTTP 200")
                    .endsWith("body that was refused: body exceeds 1000 bytes");
        }
        // halved down to one point (2 points, then the first one), never more
        assertThat(stub.requests("/api/v1/query_range")).hasSize(2);
    }

    @Test
    void aCancelAbortsTheQueryInFlightAndEveryLaterOne() throws Exception {
        stub.route(
                "/api/v1/label/__name__/values",
                r -> new PrometheusStub.Answer(200, NAMES, 20_000));
        try (PrometheusApiSource source = new PrometheusApiSource(config())) {
            java.util.concurrent.CompletableFuture<Throwable> failure =
                    java.util.concurrent.CompletableFuture.supplyAsync(
                            () ->
                                    catchThrowableOfType(
                                            PrometheusQueryException.class,
                                            () -> source.fetch(CATALOG, T0, T2)));
            while (stub.requests("/api/v1/label/__name__/values").isEmpty()) {
                Thread.sleep(10);
            }
            long t = System.nanoTime();
            source.cancel();
            PrometheusQueryException e =
                    (PrometheusQueryException)
                            failure.get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertThat((System.nanoTime() - t) / 1_000_000).isLessThan(2_000);
            assertThat(e.kind()).isEqualTo(PrometheusQueryException.Kind.INTERRUPTED);
            assertThat(e.getMessage())
                    .isEqualTo("interrupted while querying Prometheus at " + stub.url());
            ServerMetricsReport later = source.report(CATALOG, T0, T2);
            assertThat(later.coverage().errors())
                    .containsExactly(
                            "prometheus: interrupted while querying Prometheus at " + stub.url());
        }
        assertThat(stub.requests("/api/v1/label/__name__/values")).hasSize(1);
    }

    @Test
    void invalidConfigurationIsRejectedWithFieldNames() {
        PrometheusSourceConfig bad =
                new PrometheusSourceConfig(
                        URI.create("ftp://x"),
                        null,
                        "{namespace=x}",
                        Map.of("9bad", "v"),
                        " ",
                        "has-dash",
                        Duration.ZERO,
                        null);
        assertThat(bad.validate("spec.metrics.prometheus"))
                .anyMatch(m -> m.startsWith("spec.metrics.prometheus.url:"))
                .anyMatch(
                        m ->
                                m.startsWith("spec.metrics.prometheus.selector:")
                                        && m.contains("quoted"))
                .anyMatch(m -> m.startsWith("spec.metrics.prometheus.labels:"))
                .anyMatch(m -> m.startsWith("spec.metrics.prometheus.job:"))
                .anyMatch(m -> m.startsWith("spec.metrics.prometheus.replicaLabel:"))
                .anyMatch(m -> m.startsWith("spec.metrics.prometheus.step:"));
        assertThatThrownBy(() -> new PrometheusApiSource(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prometheus.url");
        assertThatThrownBy(
                        () -> {
                            try (PrometheusApiSource s = new PrometheusApiSource(config())) {
                                s.fetch(CATALOG, T2, T0);
                            }
                        })
                .isInstanceOf(PrometheusQueryException.class)
                .hasMessageContaining("before its start");
    }
}
