package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * LPG parity, for each dialect, of a real run against the simulator with injected failures and its
 * metrics scraped: every key that LPG's last code and its readers (inference-benchmark's
 * analyze.py, the gateway-api-inference-extension notebook) use, with LPG's JSON type and unit;
 * {@code throughput} and {@code throughput_rps} against the totals; LPG's six error counters
 * against the failure classes the injected failures got; both vLLM names of a metric the simulator
 * exposes under an old and a new name. The expectations are written out here from LPG's code (the
 * field table in docs/formats.md), not taken from the writer.
 */
@Timeout(180)
class LpgParityTest {

    /** A strict JSON parser: no NaN, no Infinity, no comments (Python's json.loads is laxer). */
    private static final ObjectMapper STRICT = new ObjectMapper();

    private static final int PROMPTS = 60;

    /** SimServer's --random-output-len, exact with --ignore-eos. */
    private static final int OUTPUT_TOKENS = 16;

    /** Statistics of LPG's families. */
    private static final List<String> STATS =
            List.of("avg", "median", "sd", "min", "max", "p90", "p99");

    @Test
    void bothDialectsCarryLpgsKeysWithItsTypesAndUnits(@TempDir Path tmp) throws Exception {
        try (SimServer sim = failingSim(tmp)) {
            for (String dialect : List.of("seed", "final")) {
                Path results = tmp.resolve(dialect);
                SimServer.Outcome o =
                        SimServer.cli(
                                sim.run(
                                        results,
                                        "--num-prompts",
                                        Integer.toString(PROMPTS),
                                        "--request-rate",
                                        "200",
                                        "--scrape-metrics",
                                        sim.baseUrl + "/metrics",
                                        "--scrape-interval",
                                        "100ms",
                                        "--lpg-dialect",
                                        dialect));
                // over the default failure limit: exit 1, the profile is written all the same
                assertThat(o.code()).as(o.out() + o.err()).isIn(0, 1);
                JsonNode profile = onlyProfile(results);
                checkDialect(dialect, profile);
            }
        }
    }

    @Test
    void anUnboundedRateIsTheStringInfAndTheFileParsesStrictly(@TempDir Path tmp) throws Exception {
        try (SimServer sim = new SimServer(tmp.resolve("sim.log"), "--max-num-seqs", "100")) {
            for (String dialect : List.of("seed", "final")) {
                Path results = tmp.resolve(dialect);
                SimServer.Outcome o =
                        SimServer.cli(
                                sim.run(
                                        results,
                                        "--num-prompts",
                                        "12",
                                        "--request-rate",
                                        "inf",
                                        "--lpg-dialect",
                                        dialect));
                assertThat(o.code()).as(o.out() + o.err()).isZero();
                Path file = onlyFile(results, ".json");
                String text = Files.readString(file);
                // LPG wrote a bare Infinity here, which no strict JSON parser reads
                assertThat(text).doesNotContain("Infinity").doesNotContain("NaN");
                JsonNode profile = STRICT.readTree(text);
                assertThat(profile.at("/metrics/request_rate").isTextual()).isTrue();
                assertThat(profile.at("/metrics/request_rate").asText()).isEqualTo("inf");
                assertThat(profile.at("/summary_stats/stats/0/request_rate").asText())
                        .isEqualTo("inf");
            }
        }
    }

    @Test
    void ttftKeysAreWrittenOnlyWhenTheStageStreamed(@TempDir Path tmp) throws Exception {
        try (SimServer sim = new SimServer(tmp.resolve("sim.log"), "--max-num-seqs", "100")) {
            Path results = tmp.resolve("no-stream");
            SimServer.Outcome o =
                    SimServer.cli(
                            sim.run(
                                    results,
                                    "--num-prompts",
                                    "10",
                                    "--request-rate",
                                    "100",
                                    "--no-stream",
                                    "--lpg-dialect",
                                    "final"));
            assertThat(o.code()).as(o.out() + o.err()).isZero();
            JsonNode m = onlyProfile(results).get("metrics");
            for (String stat : STATS) {
                assertThat(m.has(stat + "_TTFT")).as(stat + "_TTFT").isFalse();
            }
            // everything else is there without streaming
            assertThat(m.get("avg_normalized_time_per_output_token_ms").isNumber()).isTrue();
            assertThat(m.get("throughput_rps").isNumber()).isTrue();
        }
    }

    @Test
    void badDialectOrFormatIsAUsageErrorNamingTheFlag(@TempDir Path tmp) {
        SimServer.Outcome dialect =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --model m --num-prompts 1 --result-dir %s --lpg-dialect newest",
                                tmp.resolve("r").toString()));
        assertThat(dialect.code()).isEqualTo(Main.EXIT_USAGE);
        assertThat(dialect.err()).contains("--lpg-dialect: must be seed or final, got 'newest'");
        assertThat(tmp.resolve("r")).doesNotExist();
    }

    // ---------------------------------------------------------------- checks

    private static void checkDialect(String dialect, JsonNode profile) {
        JsonNode m = profile.get("metrics");
        String where = dialect + " " + m;
        assertThat(profile.at("/dimensions/lpg_dialect").asText()).isEqualTo(dialect);

        // counts: integers, as LPG's client counted them
        JsonNode attempted = m.get("num_prompts_attempted");
        JsonNode succeeded = m.get("num_prompts_succeeded");
        assertThat(attempted.isIntegralNumber()).as(where).isTrue();
        assertThat(succeeded.isIntegralNumber()).as(where).isTrue();
        assertThat(attempted.asLong())
                .isEqualTo(PROMPTS)
                .isEqualTo(m.get("requests_sent").asLong());
        assertThat(succeeded.asLong()).isEqualTo(m.get("completed").asLong());
        long failures = m.get("failures").asLong();
        assertThat(failures)
                .as("the injected failures happened (else nothing below is tested)")
                .isPositive()
                .isEqualTo(attempted.asLong() - succeeded.asLong());
        assertThat(succeeded.asLong()).as(where).isPositive();

        // LPG's six counters, at the top of metrics: every injected failure is an HTTP error
        // status (429, 400, 503), which LPG's client had no counter for: unknown_error
        JsonNode classes = m.get("errors_by_class");
        long http =
                classes.get("http_429").asLong()
                        + classes.get("http_4xx").asLong()
                        + classes.get("http_5xx").asLong();
        assertThat(http).as("injected failures are HTTP errors: " + classes).isEqualTo(failures);
        Map<String, Long> expectedCounters =
                Map.of(
                        "ClientConnectorError",
                        classes.get("connect").asLong() + classes.get("tls").asLong(),
                        "TimeoutError",
                        classes.get("timeout").asLong(),
                        "ContentTypeError",
                        classes.get("malformed_stream").asLong(),
                        "ClientOSError",
                        0L,
                        "ServerDisconnectedError",
                        classes.get("reset").asLong(),
                        "unknown_error",
                        http
                                + classes.get("error_payload").asLong()
                                + classes.get("empty_response").asLong()
                                + classes.get("other").asLong());
        long sum = 0;
        for (Map.Entry<String, Long> e : expectedCounters.entrySet()) {
            JsonNode counter = m.get(e.getKey());
            assertThat(counter).as(e.getKey() + " in " + where).isNotNull();
            assertThat(counter.isIntegralNumber()).as(e.getKey()).isTrue();
            assertThat(counter.asLong()).as(e.getKey()).isEqualTo(e.getValue());
            sum += counter.asLong();
        }
        assertThat(m.get("unknown_error").asLong()).isEqualTo(failures);
        assertThat(sum).as("every failure in exactly one counter").isEqualTo(failures);

        // config.num_models: an int the notebook multiplies request_rate by
        JsonNode numModels = profile.at("/config/num_models");
        assertThat(numModels.isIntegralNumber()).isTrue();
        assertThat(numModels.asInt()).isEqualTo(1);
        assertThat(m.get("request_rate").isNumber()).isTrue();
        assertThat(m.get("request_rate").asDouble()).isEqualTo(200.0);

        // throughput against the totals
        double seconds = m.get("benchmark_time").asDouble();
        assertThat(seconds).isPositive();
        long outputTokens = m.get("total_output_token").asLong();
        assertThat(outputTokens).isEqualTo(succeeded.asLong() * OUTPUT_TOKENS);
        JsonNode rps = m.get("throughput_rps");
        assertThat(rps.isFloatingPointNumber()).isTrue();
        assertThat(rps.asDouble())
                .as("throughput_rps: completed requests per second")
                .isCloseTo(succeeded.asLong() / seconds, within(1e-9));
        double throughput = m.get("throughput").asDouble();
        if (dialect.equals("final")) {
            assertThat(throughput)
                    .as("final: throughput in output tokens per second")
                    .isCloseTo(outputTokens / seconds, within(1e-9));
            assertThat(throughput).isCloseTo(rps.asDouble() * OUTPUT_TOKENS, within(1e-6));
        } else {
            assertThat(throughput)
                    .as("seed: throughput in requests per second")
                    .isCloseTo(succeeded.asLong() / seconds, within(1e-9));
        }
        assertThat(profile.at("/summary_stats/stats/0/throughput/mean").asDouble())
                .isEqualTo(throughput);

        // TTFT in seconds (streamed): the same statistics as our ttft_ms, over 1000, near the
        // simulator's 40 ms
        for (String stat : STATS) {
            JsonNode v = m.get(stat + "_TTFT");
            assertThat(v).as(stat + "_TTFT in " + where).isNotNull();
            assertThat(v.isNumber()).isTrue();
            assertThat(v.asDouble())
                    .as(stat + "_TTFT")
                    .isCloseTo(m.get(stat + "_ttft_ms").asDouble() / 1000, within(1e-12));
        }
        assertThat(m.get("avg_TTFT").asDouble()).as("seconds, not ms").isBetween(0.035, 0.5);

        // analyze.py's two keys, in ms: latency over all tokens, latency over output tokens
        assertThat(m.get("min_input_len").asDouble()).isEqualTo(m.get("max_input_len").asDouble());
        double tokensPerRequest = m.get("avg_input_len").asDouble() + OUTPUT_TOKENS;
        assertThat(m.get("avg_per_token_latency_ms").asDouble())
                .isCloseTo(1000 * m.get("avg_per_token_latency").asDouble(), within(1e-9))
                .isCloseTo(m.get("avg_latency").asDouble() / tokensPerRequest, within(1e-6));
        assertThat(m.get("avg_normalized_time_per_output_token_ms").asDouble())
                .isCloseTo(m.get("avg_per_output_token_latency").asDouble(), within(1e-9))
                .isCloseTo(m.get("avg_latency").asDouble() / OUTPUT_TOKENS, within(1e-6));

        // server metrics: under both vLLM names the simulator exposes, strings or numbers
        JsonNode server = m.get("server_metrics");
        List<String> names = new ArrayList<>();
        server.fieldNames().forEachRemaining(names::add);
        assertThat(names)
                .contains(
                        "vllm:kv_cache_usage_perc",
                        "vllm:gpu_cache_usage_perc",
                        "vllm:inter_token_latency_seconds",
                        "vllm:time_per_output_token_seconds");
        JsonNode list = profile.at("/summary_stats/stats/0/model_server_metrics");
        List<String> listed = new ArrayList<>();
        list.forEach(entry -> listed.add(entry.get("Name").asText()));
        assertThat(listed).containsExactlyElementsOf(names);
        for (String name : names) {
            checkStatisticValues(dialect, name, server.get(name));
        }
        list.forEach(entry -> checkStatisticValues(dialect, entry.get("Name").asText(), entry));
        assertThat(server.get("vllm:inter_token_latency_seconds").get("Count"))
                .as("the histogram saw the stage's tokens")
                .isNotNull();
    }

    /** Every statistic of a server metric: a numeric string (seed) or a JSON number (final). */
    private static void checkStatisticValues(String dialect, String name, JsonNode stats) {
        Iterator<Map.Entry<String, JsonNode>> fields = stats.fields();
        int checked = 0;
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> e = fields.next();
            if (e.getKey().equals("Name") || e.getKey().equals("Type")) {
                assertThat(e.getValue().isTextual()).isTrue();
                continue;
            }
            JsonNode v = e.getValue();
            if (dialect.equals("final")) {
                assertThat(v.isNumber()).as(name + " " + e.getKey() + " = " + v).isTrue();
            } else {
                assertThat(v.isTextual()).as(name + " " + e.getKey() + " = " + v).isTrue();
                assertThat(Double.parseDouble(v.asText())).isFinite();
            }
            checked++;
        }
        assertThat(checked).as(name + " has statistics").isPositive();
    }

    // ---------------------------------------------------------------- fixtures

    /** A simulator answering a quarter of the requests with an injected HTTP error. */
    private static SimServer failingSim(Path tmp) throws Exception {
        return new SimServer(
                tmp.resolve("sim.log"),
                argv(
                        "--time-to-first-token 40 --inter-token-latency 2 --max-num-seqs 200 --failure-injection-rate 25 --failure-types rate_limit server_error invalid_request"));
    }

    static JsonNode onlyProfile(Path results) throws Exception {
        return STRICT.readTree(onlyFile(results, ".json").toFile());
    }

    static Path onlyFile(Path dir, String suffix) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> matching =
                    files.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
            assertThat(matching).as("%s files in %s", suffix, dir).hasSize(1);
            return matching.get(0);
        }
    }
}
