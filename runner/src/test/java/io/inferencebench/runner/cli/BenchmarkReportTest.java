package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.inferencebench.profile.br.BenchmarkReportWriter;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.testkit.BenchmarkReportSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Benchmark Report v0.2 beside the LPG profiles: every file the CLI writes, and the reports of
 * the stages a run can end with (all failed, not streamed, cancelled, one request, histogram
 * statistics), validate against llm-d-benchmark's schema and its unit rules, and say what the
 * profile beside says.
 */
@Timeout(180)
class BenchmarkReportTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final YAMLMapper YAML = new YAMLMapper();

    /**
     * A number in exponent notation: YAML 1.1 readers (PyYAML, which llm-d-benchmark loads reports
     * with) read 1.2E7 as a string.
     */
    private static final Pattern EXPONENT = Pattern.compile(":\\s+-?[0-9.]+[eE][-+]?[0-9]+\\s*$");

    @Test
    void everyReportTheCliWritesValidatesAndMatchesItsProfile(@TempDir Path tmp) throws Exception {
        Path results = tmp.resolve("results");
        try (SimServer sim =
                new SimServer(
                        tmp.resolve("sim.log"),
                        argv(
                                "--time-to-first-token 20 --inter-token-latency 2 --max-num-seqs 200 --failure-injection-rate 20 --failure-types server_error"))) {
            SimServer.Outcome o =
                    SimServer.cli(
                            sim.run(
                                    results,
                                    "--num-prompts",
                                    "30",
                                    "--request-rate",
                                    "100,200",
                                    "--output-format",
                                    "lpg,br0.2",
                                    "--lpg-dialect",
                                    "final"));
            assertThat(o.code()).as(o.out() + o.err()).isIn(0, 1);
            assertThat(o.out()).contains("benchmark report: ");
        }
        Map<String, Path> profiles = new LinkedHashMap<>();
        Map<String, Path> reports = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(results)) {
            for (Path f : files.sorted().toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(BenchmarkReportWriter.FILE_SUFFIX)) {
                    reports.put(name.substring(0, name.indexOf(".br0.2.yaml")), f);
                } else if (name.endsWith(".json")) {
                    profiles.put(name.substring(0, name.length() - 5), f);
                }
            }
        }
        assertThat(profiles).hasSize(2);
        assertThat(reports.keySet())
                .as("a report beside each profile")
                .isEqualTo(profiles.keySet());

        Set<String> uids = new HashSet<>();
        Set<String> eids = new HashSet<>();
        for (Map.Entry<String, Path> e : reports.entrySet()) {
            Path file = e.getValue();
            assertThat(BenchmarkReportSchema.problems(file)).as(file.toString()).isEmpty();
            assertPlainNumbers(Files.readString(file));
            JsonNode report = YAML.readTree(file.toFile());
            JsonNode m = JSON.readTree(profiles.get(e.getKey()).toFile()).get("metrics");
            assertThat(report.get("version").asText()).isEqualTo("0.2.1");
            uids.add(report.at("/run/uid").asText());
            eids.add(report.at("/run/eid").asText());
            JsonNode aggregate = report.at("/results/request_performance/aggregate");
            assertThat(aggregate.at("/requests/total").asLong())
                    .isEqualTo(m.get("requests_sent").asLong());
            assertThat(aggregate.at("/requests/failures").asLong())
                    .isEqualTo(m.get("failures").asLong())
                    .isPositive();
            assertThat(aggregate.at("/latency/time_to_first_token/mean").asDouble())
                    .isCloseTo(m.get("avg_ttft_ms").asDouble(), within(1e-9));
            assertThat(aggregate.at("/latency/time_to_first_token/p99").asDouble())
                    .isCloseTo(m.get("p99_ttft_ms").asDouble(), within(1e-9));
            assertThat(aggregate.at("/latency/request_latency/p50").asDouble())
                    .isCloseTo(m.get("median_latency").asDouble(), within(1e-9));
            assertThat(aggregate.at("/latency/normalized_time_per_output_token/mean").asDouble())
                    .isCloseTo(m.get("avg_per_output_token_latency").asDouble(), within(1e-9));
            assertThat(aggregate.at("/latency/time_per_output_token/p90").asDouble())
                    .isCloseTo(m.get("p90_tpot_ms").asDouble(), within(1e-9));
            assertThat(aggregate.at("/latency/inter_token_latency/max").asDouble())
                    .isCloseTo(m.get("max_itl_ms").asDouble(), within(1e-9));
            double seconds = m.get("benchmark_time").asDouble();
            assertThat(aggregate.at("/throughput/output_token_rate/mean").asDouble())
                    .isCloseTo(m.get("total_output_token").asLong() / seconds, within(1e-6))
                    .isCloseTo(m.get("throughput").asDouble(), within(1e-6));
            assertThat(aggregate.at("/throughput/request_rate/mean").asDouble())
                    .isCloseTo(m.get("throughput_rps").asDouble(), within(1e-9));
            assertThat(aggregate.at("/requests/output_length/mean").asDouble()).isEqualTo(16.0);
            // the sample SD (ddof = 1) from the profile's population SD
            long n = m.get("count_ttft_ms").asLong();
            assertThat(aggregate.at("/latency/time_to_first_token/stddev").asDouble())
                    .isCloseTo(
                            m.get("sd_ttft_ms").asDouble() * Math.sqrt((double) n / (n - 1)),
                            within(1e-9));
            assertThat(report.at("/run/time/duration").asText()).startsWith("PT");
        }
        assertThat(uids).as("run.uid per stage").hasSize(2);
        assertThat(eids).as("run.eid shared by the run's stages").hasSize(1);
    }

    @Test
    void reportsOfEveryKindOfStageValidate() {
        Map<String, StageResult> stages = new LinkedHashMap<>();

        StageResult allFailed = stage(0);
        for (int i = 0; i < 5; i++) {
            allFailed.sent++;
            allFailed.countFailure("http_5xx");
        }
        allFailed.lastCompletionEpochNanos = allFailed.firstDispatchEpochNanos + 5_000_000;
        stages.put("all failed", allFailed);

        StageResult notStreamed = stage(1);
        for (int i = 0; i < 4; i++) {
            success(notStreamed, 120 + i, Double.NaN, 10, 20);
        }
        stages.put("not streamed", notStreamed);

        StageResult one = stage(2);
        success(one, 80, 12, 7, 1);
        stages.put("one request of one token", one);

        StageResult cancelled = stage(3);
        success(cancelled, 50, 5, 8, 8, 6, 6);
        cancelled.sent += 3;
        cancelled.partial = true;
        cancelled.cancelledRequests = 3;
        stages.put("cancelled", cancelled);

        // large and small values (a slow server's ms, a fast one's s/token): plain decimals
        StageResult histograms = stage(4, 10);
        for (int i = 0; i < 40; i++) {
            success(histograms, 1.25e7 + i * 1e5, 3.5e6 + i, 200_000, 4096, 1e-5 * (i + 1));
        }
        assertThat(histograms.latencyMs.exact()).isFalse();
        stages.put("histogram statistics, large values", histograms);

        StageResult nothing = stage(5);
        nothing.firstDispatchEpochNanos = 0;
        stages.put("nothing sent", nothing);

        stages.forEach(
                (what, stage) -> {
                    JsonNode report = BenchmarkReportWriter.write(stage, "exp-" + what.length());
                    assertThat(BenchmarkReportSchema.problems(report)).as(what).isEmpty();
                    String yaml = BenchmarkReportWriter.toYaml(report);
                    assertPlainNumbers(yaml);
                    try {
                        JsonNode back = YAML.readTree(yaml);
                        assertThat(BenchmarkReportSchema.problems(back)).as(what).isEmpty();
                        assertThat(
                                        back.at(
                                                        "/results/request_performance/aggregate/requests/total")
                                                .asLong())
                                .isEqualTo(stage.sent);
                    } catch (Exception e) {
                        throw new AssertionError(what, e);
                    }
                });

        JsonNode failed = BenchmarkReportWriter.write(allFailed, "x");
        JsonNode agg = failed.at("/results/request_performance/aggregate");
        assertThat(agg.has("latency")).as("no latency of no success").isFalse();
        assertThat(agg.has("throughput")).as("no rate without a success").isFalse();
        assertThat(agg.at("/requests/failures").asLong()).isEqualTo(5);

        JsonNode plain = BenchmarkReportWriter.write(notStreamed, "x");
        JsonNode latency = plain.at("/results/request_performance/aggregate/latency");
        assertThat(latency.has("time_to_first_token")).isFalse();
        assertThat(latency.has("inter_token_latency")).isFalse();
        assertThat(latency.at("/request_latency/units").asText()).isEqualTo("ms");

        JsonNode single = BenchmarkReportWriter.write(one, "x");
        assertThat(
                        single.at("/results/request_performance/aggregate/latency/request_latency")
                                .has("stddev"))
                .as("no sample SD of one value")
                .isFalse();

        assertThat(
                        BenchmarkReportWriter.write(cancelled, "x")
                                .at("/results/request_performance/aggregate/requests/incomplete")
                                .asLong())
                .isEqualTo(3);
        assertThat(BenchmarkReportWriter.write(nothing, "x").at("/run").has("time")).isFalse();
    }

    /** The schema check itself fails what it should: a wrong unit, a missing field, a bad date. */
    @Test
    void theSchemaCheckRefusesWhatTheSchemaRefuses() throws Exception {
        StageResult s = stage(0);
        success(s, 100, 10, 5, 5, 20, 20, 20, 20);
        JsonNode good = BenchmarkReportWriter.write(s, "e");
        assertThat(BenchmarkReportSchema.problems(good)).isEmpty();

        var wrongUnit = good.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode)
                        wrongUnit.at(
                                "/results/request_performance/aggregate/latency/request_latency"))
                .put("units", "tokens/s");
        assertThat(BenchmarkReportSchema.problems(wrongUnit))
                .anyMatch(p -> p.contains("request_latency.units"));

        var noUid = good.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) noUid.get("run")).remove("uid");
        assertThat(BenchmarkReportSchema.problems(noUid)).isNotEmpty();

        var badDate = good.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) badDate.at("/run/time"))
                .put("start", "yesterday");
        assertThat(BenchmarkReportSchema.problems(badDate)).isNotEmpty();

        var extra = good.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) extra.get("results")).put("x", 1);
        assertThat(BenchmarkReportSchema.problems(extra)).isNotEmpty();
    }

    @Test
    void outputFormatFlagsAreChecked(@TempDir Path tmp) {
        for (List<String> bad :
                List.of(
                        List.of("br0.2", "must include lpg"),
                        List.of("lpg,xml", "unknown format 'xml'; allowed: lpg, br0.2"))) {
            SimServer.Outcome o =
                    SimServer.cli(
                            argv(
                                    "run --base-url http://127.0.0.1:9 --model m --num-prompts 1 --result-dir %s --output-format %s",
                                    tmp.resolve("r").toString(), bad.get(0)));
            assertThat(o.code()).as(o.err()).isEqualTo(Main.EXIT_USAGE);
            assertThat(o.err()).contains("--output-format: " + bad.get(1));
        }
        assertThat(tmp.resolve("r")).doesNotExist();
    }

    // ---------------------------------------------------------------- helpers

    private static void assertPlainNumbers(String yaml) {
        for (String line : yaml.split("\n")) {
            assertThat(EXPONENT.matcher(line).find()).as("plain decimal: " + line).isFalse();
        }
    }

    private static StageResult stage(int index) {
        return stage(index, 100_000);
    }

    private static StageResult stage(int index, int sampleCap) {
        StageResult s = new StageResult(sampleCap);
        s.stageIndex = index;
        s.requestedRate = 5.0;
        s.firstDispatchEpochNanos = 1_796_000_000_000_000_000L + index * 1_000_000_000L;
        s.lastCompletionEpochNanos = s.firstDispatchEpochNanos;
        return s;
    }

    /** One successful request, as the engine records it (NaN TTFT: not streamed). */
    private static void success(
            StageResult s, double latencyMs, double ttftMs, long in, long out, double... itlMs) {
        s.sent++;
        s.completed++;
        s.latencyMs.record(latencyMs);
        if (!Double.isNaN(ttftMs)) {
            s.ttftMs.record(ttftMs);
            for (double gap : itlMs) {
                s.itlMs.record(gap);
            }
            if (out > 1) {
                s.tpotMs.record((latencyMs - ttftMs) / (out - 1));
            }
        } else {
            s.nonStreamedRequests++;
        }
        s.perTokenLatencySec.record(latencyMs / 1000.0 / (in + out));
        s.perOutputTokenLatencyMs.record(latencyMs / out);
        s.inputLen.record(in);
        s.outputLen.record(out);
        s.totalInputTokens += in;
        s.totalOutputTokens += out;
        s.lastCompletionEpochNanos =
                Math.max(
                        s.lastCompletionEpochNanos,
                        s.firstDispatchEpochNanos + (long) (latencyMs * 1e6));
    }
}
