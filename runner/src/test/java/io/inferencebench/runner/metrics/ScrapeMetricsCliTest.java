package io.inferencebench.runner.metrics;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.Main;
import io.inferencebench.testkit.ModelSim;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --scrape-metrics} end to end against model-sim on loopback: the profile's server
 * metrics, failures that must not fail the run, and no effect on the load's timing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ScrapeMetricsCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    record Outcome(int code, String out, String err) {}

    /** A model-sim process on a free loopback port, killed on close. */
    static final class Sim implements AutoCloseable {
        final Process process;
        final String baseUrl;

        Sim(Path log, String... flags) throws Exception {
            this(freePort(), log, flags);
        }

        Sim(int port, Path log, String... flags) throws Exception {
            process = ModelSim.startOnLoopback(port, log, "/metrics", flags);
            baseUrl = "http://127.0.0.1:" + port;
        }

        @Override
        public void close() throws Exception {
            ModelSim.stop(process);
        }
    }

    static int freePort() throws IOException {
        return io.inferencebench.testkit.FreePorts.claim();
    }

    static Outcome run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Outcome(code, out.toString(), err.toString());
    }

    /**
     * Runs {@link #load} against {@code baseUrl} with {@code flags} ({@link
     * io.inferencebench.testkit.Argv#argv} form, {@code values} for its {@code %s}) and asserts it
     * exits 0.
     */
    static Outcome succeeds(String baseUrl, Path results, String flags, Object... values) {
        Outcome o = run(load(baseUrl, results, argv(flags, values)));
        assertThat(o.code()).as(o.err()).isZero();
        return o;
    }

    static String[] load(String baseUrl, Path results, String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                argv(
                                        "run --base-url %s --backend vllm --model sim"
                                                + " --random-input-len 16 --random-output-len 8"
                                                + " --arrival constant --no-self-warmup --progress none"
                                                + " --cooldown 0 --result-dir %s",
                                        baseUrl, results.toString())));
        args.addAll(Arrays.asList(extra));
        return args.toArray(String[]::new);
    }

    static List<JsonNode> profiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<JsonNode> out = new ArrayList<>();
            for (Path p : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
                out.add(JSON.readTree(p.toFile()));
            }
            return out;
        }
    }

    private static void assertConstantGauge(JsonNode serverMetrics, String name, String value) {
        JsonNode m = serverMetrics.path(name);
        assertThat(m.isObject()).as(name + " in " + serverMetrics).isTrue();
        for (String key : List.of("Median", "Min", "Max", "P90", "P99")) {
            assertThat(m.path(key).asText()).as(name + " " + key).isEqualTo(value);
        }
        // numpy's pairwise sum of n copies of 0.42 is not always n * 0.42 (n = the scrapes taken,
        // which depends on timing), so the mean may differ from the value in its last bit and the
        // SD by that much: compare those to the double, not to the string.
        double expected = Double.parseDouble(value);
        assertThat(Double.parseDouble(m.path("Mean").asText()))
                .as(name + " Mean")
                .isCloseTo(expected, org.assertj.core.data.Offset.offset(Math.ulp(expected) * 4));
        assertThat(Double.parseDouble(m.path("Sd").asText()))
                .as(name + " Sd")
                .isLessThanOrEqualTo(Math.ulp(expected) * 4);
    }

    @Test
    void fakeMetricsGiveTheirExactStatistics(@TempDir Path tmp) throws Exception {
        String fake =
                "{\"running-requests\":7,\"waiting-requests\":3,\"kv-cache-usage\":0.42,"
                        + "\"ttft-buckets-values\":[1,2,3],\"request-success-total\":{\"stop\":9}}";
        try (Sim sim = new Sim(tmp.resolve("sim.log"), "--fake-metrics", fake)) {
            Path results = tmp.resolve("results");
            Outcome o =
                    succeeds(
                            sim.baseUrl,
                            results,
                            "--request-rate 20,40 --num-prompts 20 --scrape-metrics"
                                    + " --scrape-interval 200ms");
            List<JsonNode> profiles = profiles(results);
            assertThat(profiles).hasSize(2);
            for (JsonNode profile : profiles) {
                JsonNode metrics = profile.path("metrics");
                JsonNode server = metrics.path("server_metrics");
                assertConstantGauge(server, "vllm:num_requests_running", "7");
                assertConstantGauge(server, "vllm:num_requests_waiting", "3");
                assertConstantGauge(server, "vllm:kv_cache_usage_perc", "0.42");
                // fixed buckets and counters do not move inside the window: no observations
                JsonNode ttft = server.path("vllm:time_to_first_token_seconds");
                assertThat(ttft.path("Count").asText()).isEqualTo("0");
                assertThat(ttft.has("Mean")).isFalse();
                JsonNode success = server.path("vllm:request_success_total");
                assertThat(success.path("Increase").asText()).isEqualTo("0");
                assertThat(success.path("Rate").asText()).isEqualTo("0");
                // a ~1 s stage at 200 ms: start, end and the ticks between all succeeded
                JsonNode coverage = metrics.path("server_metrics_coverage");
                assertThat(coverage.path("failed").asInt()).isZero();
                assertThat(coverage.path("succeeded").asInt()).isGreaterThanOrEqualTo(4);
                assertThat(coverage.path("ratio").asDouble()).isEqualTo(1.0);
                assertThat(coverage.path("replicas").asInt()).isEqualTo(1);
                String replica = URI.create(sim.baseUrl).getAuthority();
                assertThat(
                                metrics.path("server_metrics_by_replica")
                                        .path(replica)
                                        .path("vllm:num_requests_running")
                                        .path("Mean")
                                        .asText())
                        .isEqualTo("7");
                // the same numbers in LPG's summary_stats list, with names
                JsonNode list =
                        profile.path("summary_stats")
                                .path("stats")
                                .path(0)
                                .path("model_server_metrics");
                JsonNode kv = null;
                for (JsonNode entry : list) {
                    if (entry.path("Name").asText().equals("vllm:kv_cache_usage_perc")) {
                        kv = entry;
                    }
                }
                assertThat(kv).as(list.toString()).isNotNull();
                assertThat(kv.path("Mean").asText())
                        .isEqualTo(server.path("vllm:kv_cache_usage_perc").path("Mean").asText());
            }
            assertThat(o.out())
                    .contains("stage 1 server:")
                    .contains("running 7.00")
                    .contains("waiting 3.00")
                    .contains("kv 42.0 %");
        }
    }

    @Test
    void impossibleAndNanGaugesAreShownAsTheServerSaidAndFlagged(@TempDir Path tmp)
            throws Exception {
        // The simulator refuses such values; a server with a broken exporter sends them.
        io.inferencebench.runner.stub.OpenAiStub completions =
                new io.inferencebench.runner.stub.OpenAiStub(1, 1, true);
        String page =
                "# TYPE vllm:num_requests_running gauge\n"
                        + "vllm:num_requests_running{model_name=\"sim\"} NaN\n"
                        + "# TYPE vllm:num_requests_waiting gauge\n"
                        + "vllm:num_requests_waiting{model_name=\"sim\"} 0\n"
                        + "# TYPE vllm:kv_cache_usage_perc gauge\n"
                        + "vllm:kv_cache_usage_perc{model_name=\"sim\"} -5\n";
        try (io.inferencebench.runner.stub.StubServer server =
                new io.inferencebench.runner.stub.StubServer(
                        (request, exchange) -> {
                            if (request.path().equals("/metrics")) {
                                exchange.respond(200, "text/plain; version=0.0.4", page);
                            } else if (request.path().endsWith("tokenize")) {
                                exchange.respond(404, "application/json", "{}");
                            } else {
                                completions.handle(request, exchange);
                            }
                        })) {
            Path results = tmp.resolve("results");
            Outcome o =
                    succeeds(
                            server.baseUrl(),
                            results,
                            "--request-rate 20 --num-prompts 10 --scrape-metrics"
                                    + " --scrape-interval 200ms");
            assertThat(o.out())
                    .contains("stage 1 server:")
                    .contains("kv -5 (impossible for a ratio)")
                    .containsPattern(
                            "running NaN \\(the server reported NaN in all \\d+ samples\\)")
                    .doesNotContain("-500");
            JsonNode metrics = profiles(results).get(0).path("metrics").path("server_metrics");
            assertThat(metrics.path("vllm:kv_cache_usage_perc").path("Mean").asText())
                    .isEqualTo("-5");
            assertThat(metrics.path("vllm:num_requests_running").path("NanSamples").asInt())
                    .isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void twoReplicasAggregateBySumOrMeanAndKeepTheirOwnBreakdown(@TempDir Path tmp)
            throws Exception {
        try (Sim first =
                        new Sim(
                                tmp.resolve("a.log"),
                                "--fake-metrics",
                                "{\"running-requests\":7,\"waiting-requests\":3,"
                                        + "\"kv-cache-usage\":0.42}");
                Sim second =
                        new Sim(
                                tmp.resolve("b.log"),
                                "--fake-metrics",
                                "{\"running-requests\":2,\"waiting-requests\":0,"
                                        + "\"kv-cache-usage\":0.1}")) {
            Path results = tmp.resolve("results");
            Outcome o =
                    succeeds(
                            first.baseUrl,
                            results,
                            "--request-rate 20 --num-prompts 10 --scrape-metrics %s"
                                    + " --scrape-interval 200ms",
                            first.baseUrl + "/metrics," + second.baseUrl + "/metrics");
            JsonNode metrics = profiles(results).get(0).path("metrics");
            JsonNode server = metrics.path("server_metrics");
            // requests add up across replicas, cache usage is a per-replica fraction: mean
            assertConstantGauge(server, "vllm:num_requests_running", "9");
            assertConstantGauge(server, "vllm:num_requests_waiting", "3");
            assertConstantGauge(server, "vllm:kv_cache_usage_perc", "0.26");
            JsonNode byReplica = metrics.path("server_metrics_by_replica");
            assertConstantGauge(
                    byReplica.path(URI.create(first.baseUrl).getAuthority()),
                    "vllm:num_requests_running",
                    "7");
            assertConstantGauge(
                    byReplica.path(URI.create(second.baseUrl).getAuthority()),
                    "vllm:kv_cache_usage_perc",
                    "0.1");
            JsonNode coverage = metrics.path("server_metrics_coverage");
            assertThat(coverage.path("replicas").asInt()).isEqualTo(2);
            assertThat(coverage.path("ratio").asDouble()).isEqualTo(1.0);
            assertThat(coverage.path("succeeded").asInt() % 2).isZero();
        }
    }

    @Test
    void realLatencyTtftHistogramMeanIsWithinOneBucketOfTheConfiguredTtft(@TempDir Path tmp)
            throws Exception {
        try (Sim sim =
                new Sim(
                        tmp.resolve("sim.log"),
                        argv(
                                "--time-to-first-token 30 --inter-token-latency 5"
                                        + " --max-num-seqs 100"))) {
            Path results = tmp.resolve("results");
            int prompts = 40;
            Outcome o =
                    succeeds(
                            sim.baseUrl,
                            results,
                            "--request-rate 20 --num-prompts %s --scrape-metrics %s"
                                    + " --scrape-interval 500ms",
                            Integer.toString(prompts),
                            sim.baseUrl + "/metrics");
            JsonNode metrics = profiles(results).get(0).path("metrics");
            JsonNode ttft = metrics.path("server_metrics").path("vllm:time_to_first_token_seconds");
            assertThat(ttft.isObject()).as(metrics.path("server_metrics").toString()).isTrue();
            // every request of the stage is observed inside the window, none before or after it
            assertThat(ttft.path("Count").asText()).isEqualTo(Integer.toString(prompts));
            // buckets around 30 ms are (0.02, 0.04]
            double mean = Double.parseDouble(ttft.path("Mean").asText());
            assertThat(mean).isBetween(0.02, 0.04);
            assertThat(Double.parseDouble(ttft.path("Median").asText())).isBetween(0.02, 0.04);
            JsonNode running = metrics.path("server_metrics").path("vllm:num_requests_running");
            assertThat(Double.parseDouble(running.path("Max").asText())).isGreaterThan(0);
            JsonNode generated =
                    metrics.path("server_metrics").path("vllm:generation_tokens_total");
            assertThat(generated.path("Increase").asText())
                    .isEqualTo(Integer.toString(prompts * 8));
            assertThat(metrics.path("server_metrics_coverage").path("ratio").asDouble())
                    .isEqualTo(1.0);
            assertThat(o.out()).containsPattern("stage 1 server: ttft mean 3\\d\\.\\d ms");
        }
    }

    @Test
    void refusedScrapesLeaveTheRunSuccessfulWithZeroCoverageAndOneWarning(@TempDir Path tmp)
            throws Exception {
        int dead = freePort();
        try (Sim sim = new Sim(tmp.resolve("sim.log"), "--time-to-first-token", "5")) {
            Path results = tmp.resolve("results");
            Outcome o =
                    succeeds(
                            sim.baseUrl,
                            results,
                            "--request-rate 20,20 --num-prompts 10 --scrape-metrics %s"
                                    + " --scrape-interval 200ms",
                            "http://127.0.0.1:" + dead + "/metrics");
            assertThat(o.err().split("warning: server metrics", -1)).hasSize(2);
            assertThat(o.err()).contains("127.0.0.1:" + dead).contains("connection refused");
            List<JsonNode> profiles = profiles(results);
            assertThat(profiles).hasSize(2);
            for (JsonNode profile : profiles) {
                JsonNode metrics = profile.path("metrics");
                assertThat(metrics.path("completed").asLong(10)).isEqualTo(10);
                JsonNode coverage = metrics.path("server_metrics_coverage");
                assertThat(coverage.path("ratio").asDouble()).isZero();
                assertThat(coverage.path("succeeded").asInt()).isZero();
                assertThat(coverage.path("failed").asInt()).isGreaterThanOrEqualTo(2);
                assertThat(coverage.path("errors").toString()).contains("connection refused");
                assertThat(metrics.path("server_metrics").size()).isZero();
            }
            assertThat(o.out()).contains("coverage 0/");
        }
    }

    @Test
    void unreachablePrometheusLeavesTheRunSuccessful(@TempDir Path tmp) throws Exception {
        int dead = freePort();
        try (Sim sim = new Sim(tmp.resolve("sim.log"), "--time-to-first-token", "5")) {
            Path results = tmp.resolve("results");
            Outcome o =
                    succeeds(
                            sim.baseUrl,
                            results,
                            "--request-rate 20,20 --num-prompts 5 --prometheus-url %s"
                                    + " --prometheus-selector %s",
                            "http://127.0.0.1:" + dead,
                            "{job=\"model-sim\"}");
            JsonNode coverage =
                    profiles(results).get(0).path("metrics").path("server_metrics_coverage");
            assertThat(coverage.path("succeeded").asInt()).isZero();
            assertThat(coverage.path("errors").path(0).asText()).startsWith("prometheus: ");
            assertThat(o.err().split("warning: server metrics", -1)).hasSize(2);
        }
    }

    @Test
    void scrapingDoesNotChangeTheAchievedRate(@TempDir Path tmp) throws Exception {
        try (Sim sim = new Sim(tmp.resolve("sim.log"), "--time-to-first-token", "2")) {
            double rate = 100;
            String[] stage = {"--request-rate", "100", "--num-prompts", "200", "--seed", "7"};
            Path plain = tmp.resolve("plain");
            Outcome without = run(load(sim.baseUrl, plain, stage));
            Path scraped = tmp.resolve("scraped");
            List<String> withArgs = new ArrayList<>(Arrays.asList(stage));
            withArgs.addAll(List.of("--scrape-metrics", "--scrape-interval", "100ms"));
            Outcome with = run(load(sim.baseUrl, scraped, withArgs.toArray(String[]::new)));
            assertThat(without.code()).as(without.err()).isZero();
            assertThat(with.code()).as(with.err()).isZero();
            JsonNode a = profiles(plain).get(0).path("metrics");
            JsonNode b = profiles(scraped).get(0).path("metrics");
            assertThat(b.path("server_metrics_coverage").path("succeeded").asInt())
                    .isGreaterThanOrEqualTo(10);
            double achievedWithout = a.path("achieved_rate").asDouble();
            double achievedWith = b.path("achieved_rate").asDouble();
            assertThat(achievedWithout).isCloseTo(rate, within(rate * 0.03));
            assertThat(achievedWith).isCloseTo(rate, within(rate * 0.03));
            assertThat(achievedWith).isCloseTo(achievedWithout, within(rate * 0.03));
        }
    }

    @Test
    void badFlagsAreUsageErrorsNamingTheFlag() {
        Outcome both =
                run(
                        argv(
                                "run --scrape-metrics --prometheus-url http://127.0.0.1:9"
                                        + " --request-rate 1"));
        assertThat(both.code()).isEqualTo(Main.EXIT_USAGE);
        assertThat(both.err()).contains("--scrape-metrics and --prometheus-url");

        Outcome interval =
                run("run", "--scrape-metrics", "--scrape-interval", "fast", "--request-rate", "1");
        assertThat(interval.code()).isEqualTo(Main.EXIT_USAGE);
        assertThat(interval.err()).contains("--scrape-interval: 'fast' is not a duration");

        Outcome selector =
                run(
                        argv(
                                "run --scrape-metrics --metrics-include bad-name"
                                        + " --metrics-exclude %s --request-rate 1",
                                "a b"));
        assertThat(selector.code()).isEqualTo(Main.EXIT_USAGE);
        assertThat(selector.err())
                .contains("--metrics-include[0]")
                .contains("--metrics-exclude[0]");

        Outcome url = run("run", "--scrape-metrics", "ftp://host/metrics", "--request-rate", "1");
        assertThat(url.code()).isEqualTo(Main.EXIT_USAGE);
        assertThat(url.err()).contains("--scrape-metrics: 'ftp://host/metrics'");

        Outcome orphan = run("run", "--scrape-interval", "1s", "--request-rate", "1");
        assertThat(orphan.code()).isEqualTo(Main.EXIT_USAGE);
        assertThat(orphan.err()).contains("need --scrape-metrics or --prometheus-url");
    }
}
