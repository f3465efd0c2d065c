package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LpgProfileWriterTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 =
            Instant.parse("2024-09-25T22:09:23Z").toEpochMilli() * 1_000_000L;

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "jetstream",
                    "google/gemma-7b",
                    "google/gemma-7b",
                    "jetstream",
                    Instant.parse("2024-09-25T22:09:00Z"),
                    "sweep",
                    "bench",
                    2,
                    "0.1.0",
                    Map.of("gpu", "tpu-v5e"));

    private static StageResult threeRequests() {
        StageResult s = new StageResult();
        s.stageIndex = 1;
        s.requestedRate = 20;
        s.numPromptsRequested = 3;
        s.firstDispatchEpochNanos = T0;
        s.lastDispatchEpochNanos = T0 + 100_000_000L;
        s.lastCompletionEpochNanos = T0 + 4_000_000_000L; // T = 4 s
        s.outputTokenSource = "usage";
        s.inputTokenSource = "usage";
        StageResults.success(s, 1000, 100, 10, 100, 9, 9);
        StageResults.success(s, 2000, 200, 20, 50, 36);
        StageResults.success(s, 4000, 400, 30, 10, 400);
        return s;
    }

    private static ServerMetricsReport jetstreamServerMetrics() {
        List<ServerMetricSummary> aggregate = new ArrayList<>();
        aggregate.add(
                gauge("jetstream_slots_used_percentage", 0.80625, 1, 0.3875, 0.03125, 1, 1, 1));
        aggregate.add(
                gauge("jetstream_prefill_backlog_size", 62.6, 50, 49.5, 0, 142, 121.6, 139.96));
        aggregate.add(
                histogram("jetstream_time_to_first_token", 0.13, 0.165, 0.01, 0.5, 0.23, 0.248));
        aggregate.add(
                histogram("jetstream_time_per_output_token", 0, 0.0297, 0.01, 2.5, 0.07, 2.5));
        aggregate.add(histogram("jetstream_time_per_request", 2.48, 2.17, 1, 10, 5.81, 9.58));
        return new ServerMetricsReport(
                aggregate,
                Map.of("pod-a", aggregate.subList(0, 2)),
                new ScrapeCoverage(10, 9, 1, 1, List.of("timeout"), Map.of("pod-a", 9)));
    }

    private static ServerMetricSummary gauge(
            String name,
            double mean,
            double median,
            double sd,
            double min,
            double max,
            double p90,
            double p99) {
        return new ServerMetricSummary(
                name, MetricType.GAUGE, mean, median, sd, min, max, p90, p99, null, null, 10);
    }

    private static ServerMetricSummary histogram(
            String name,
            double mean,
            double median,
            double min,
            double max,
            double p90,
            double p99) {
        return new ServerMetricSummary(
                name, MetricType.HISTOGRAM, mean, median, null, min, max, p90, p99, 600.0, null, 2);
    }

    @Test
    void everyKeyOfTheLpgExampleAppearsWithTheSameJsonType() throws Exception {
        JsonNode example;
        try (InputStream in =
                getClass().getResourceAsStream("/reference/lpg-profile-example.json")) {
            example = JSON.readTree(in);
        }
        ObjectNode ours =
                LpgProfileWriter.write(threeRequests(), CONTEXT, jetstreamServerMetrics());
        List<String> checked = new ArrayList<>();
        assertSameShape(example, ours, "", checked);
        // the example has 62 metrics keys, 7 server stats x 5 and 8 x 5 list entries etc.
        assertThat(checked).hasSizeGreaterThan(150);
        assertThat(checked).contains("/metrics/server_metrics/jetstream_prefill_backlog_size/Sd");
        // The reference's histograms have no Sd; neither do ours.
        assertThat(ours.at("/metrics/server_metrics/jetstream_time_to_first_token").has("Sd"))
                .isFalse();
        // Our JSON survives a text round trip with the same shape.
        JsonNode reparsed = JSON.readTree(LpgProfileWriter.toJson(ours));
        assertSameShape(example, reparsed, "", new ArrayList<>());
    }

    private static void assertSameShape(
            JsonNode expected, JsonNode actual, String path, List<String> checked) {
        assertThat(actual).as("missing " + path).isNotNull();
        assertThat(actual.getNodeType())
                .as("JSON type of " + path)
                .isEqualTo(expected.getNodeType());
        checked.add(path);
        if (expected.isObject()) {
            expected.properties()
                    .forEach(
                            e ->
                                    assertSameShape(
                                            e.getValue(),
                                            actual.get(e.getKey()),
                                            path + "/" + e.getKey(),
                                            checked));
        } else if (expected.isArray()) {
            assertThat(actual.size()).as("size of " + path).isEqualTo(expected.size());
            for (int i = 0; i < expected.size(); i++) {
                assertSameShape(expected.get(i), actual.get(i), path + "/" + i, checked);
            }
        }
    }

    @Test
    void valuesAndUnitsFollowTheFieldTable() {
        ObjectNode doc = LpgProfileWriter.write(threeRequests(), CONTEXT, null);
        JsonNode m = doc.get("metrics");
        assertThat(m.get("num_prompts").asLong()).isEqualTo(3);
        assertThat(m.get("request_rate").doubleValue()).isEqualTo(20.0);
        assertThat(m.get("benchmark_time").doubleValue()).isEqualTo(4.0);
        assertThat(m.get("throughput").doubleValue()).isEqualTo(0.75);
        assertThat(m.get("total_output_token").asLong()).isEqualTo(160);
        assertThat(m.get("total_input_tokens").asLong()).isEqualTo(60);
        assertThat(m.get("total_tokens").asLong()).isEqualTo(220);
        assertThat(m.get("output_tokens_per_min").doubleValue()).isEqualTo(2400.0);
        assertThat(m.get("input_tokens_per_min").doubleValue()).isEqualTo(900.0);
        assertThat(m.get("tokens_per_min").doubleValue()).isEqualTo(3300.0);
        // latency in ms
        assertThat(m.get("avg_latency").doubleValue()).isCloseTo(7000.0 / 3, within(1e-9));
        assertThat(m.get("median_latency").doubleValue()).isEqualTo(2000.0);
        assertThat(m.get("min_latency").doubleValue()).isEqualTo(1000.0);
        assertThat(m.get("max_latency").doubleValue()).isEqualTo(4000.0);
        // np.percentile([1000, 2000, 4000], 90) = 2000 + 0.8 * 2000 = 3600
        assertThat(m.get("p90_latency").doubleValue()).isCloseTo(3600.0, within(1e-9));
        // per_token_latency in SECONDS per token: 1/110, 2/70, 4/40
        assertThat(m.get("min_per_token_latency").doubleValue())
                .isCloseTo(1.0 / 110, within(1e-15));
        assertThat(m.get("max_per_token_latency").doubleValue()).isCloseTo(0.1, within(1e-15));
        // per_output_token_latency in ms per output token: 10, 40, 400
        assertThat(m.get("median_per_output_token_latency").doubleValue()).isEqualTo(40.0);
        assertThat(m.get("max_per_output_token_latency").doubleValue()).isEqualTo(400.0);
        assertThat(m.get("avg_output_len").doubleValue()).isCloseTo(160.0 / 3, within(1e-12));
        assertThat(m.get("median_input_len").doubleValue()).isEqualTo(20.0);
        // sd is the population SD (ddof=0) of 10, 20, 30
        assertThat(m.get("sd_input_len").doubleValue())
                .isCloseTo(Math.sqrt(200.0 / 3), within(1e-12));

        // additive keys
        assertThat(m.get("failures").asLong()).isZero();
        assertThat(m.get("errors_by_class").size()).isEqualTo(StageResult.ERROR_CLASSES.size());
        assertThat(m.get("achieved_rate").doubleValue()).isCloseTo(20.0, within(1e-9));
        assertThat(m.get("median_ttft_ms").doubleValue()).isEqualTo(200.0);
        assertThat(m.get("max_itl_ms").doubleValue()).isEqualTo(400.0);
        assertThat(m.get("count_itl_ms").asLong()).isEqualTo(4);
        // tpot = (latency - ttft) / (out - 1): 900/99, 1800/49, 3600/9
        assertThat(m.get("max_tpot_ms").doubleValue()).isCloseTo(400.0, within(1e-12));
        assertThat(m.get("p99_schedule_lag_ms").doubleValue()).isEqualTo(0.25);
        assertThat(m.get("statistics_mode").asText()).isEqualTo(LpgProfileWriter.MODE_EXACT);
        assertThat(m.get("output_token_source").asText()).isEqualTo("usage");
        assertThat(m.has("slo")).isFalse();
        assertThat(m.get("server_metrics").isObject()).isTrue();
        assertThat(m.get("server_metrics").size()).isZero();

        JsonNode stats = doc.at("/summary_stats/stats/0");
        assertThat(stats.at("/request_latency/p90").doubleValue()).isCloseTo(3600.0, within(1e-9));
        assertThat(stats.at("/tpot/median").doubleValue()).isEqualTo(40.0);
        assertThat(stats.at("/throughput/mean").doubleValue()).isEqualTo(0.75);
        assertThat(stats.get("model_server_metrics").isArray()).isTrue();

        JsonNode dims = doc.get("dimensions");
        assertThat(dims.get("date").asText()).isEqualTo("20240925-220923");
        assertThat(dims.get("backend").asText()).isEqualTo("jetstream");
        assertThat(dims.get("model_id").asText()).isEqualTo("google/gemma-7b");
        assertThat(dims.get("stage").asText()).as("1-based stage number").isEqualTo("2");
        assertThat(m.get("stage_index").asInt()).as("0-based index").isOne();
        assertThat(dims.get("parallelism").asText()).isEqualTo("2");
        assertThat(dims.get("gpu").asText()).isEqualTo("tpu-v5e");
        dims.properties()
                .forEach(e -> assertThat(e.getValue().isTextual()).as(e.getKey()).isTrue());
        assertThat(doc.at("/config/start_time/seconds").asLong()).isEqualTo(T0 / 1_000_000_000L);
        assertThat(doc.at("/config/start_time/nanos").asInt()).isZero();
        assertThat(doc.at("/config/model_server").asText()).isEqualTo("jetstream");
    }

    @Test
    void serverMetricValuesAreStringsAndListedInSummaryStats() {
        ObjectNode doc = LpgProfileWriter.write(threeRequests(), CONTEXT, jetstreamServerMetrics());
        JsonNode backlog = doc.at("/metrics/server_metrics/jetstream_prefill_backlog_size");
        assertThat(backlog.get("Mean").asText()).isEqualTo("62.6");
        assertThat(backlog.get("Min").asText()).isEqualTo("0");
        assertThat(backlog.get("Max").asText()).isEqualTo("142");
        assertThat(backlog.get("P99").asText()).isEqualTo("139.96");
        JsonNode list = doc.at("/summary_stats/stats/0/model_server_metrics");
        assertThat(list.size()).isEqualTo(5);
        assertThat(list.get(1).get("Name").asText()).isEqualTo("jetstream_prefill_backlog_size");
        assertThat(list.get(1).get("Median").asText()).isEqualTo("50");
        assertThat(doc.at("/metrics/server_metrics_by_replica/pod-a").size()).isEqualTo(2);
        assertThat(doc.at("/metrics/server_metrics_coverage/ratio").doubleValue()).isEqualTo(0.9);
        assertThat(doc.at("/metrics/server_metrics_coverage/errors/0").asText())
                .isEqualTo("timeout");
        assertThat(doc.at("/metrics/server_metrics_coverage").has("increases_left_out"))
                .as("only a window with increases left out carries the key")
                .isFalse();

        ObjectNode cut =
                LpgProfileWriter.write(
                        threeRequests(),
                        CONTEXT,
                        jetstreamServerMetrics()
                                .withoutWindowDeltas(Set.of("pod-a"), "late start"));
        assertThat(cut.at("/metrics/server_metrics_coverage/increases_left_out").toString())
                .isEqualTo("[\"pod-a\"]");
        assertThat(cut.at("/metrics/server_metrics_coverage/errors/1").asText())
                .isEqualTo("late start");
    }

    @Test
    void formatsServerValuesLikePrometheus() {
        assertThat(LpgProfileWriter.formatServerValue(1.0)).isEqualTo("1");
        assertThat(LpgProfileWriter.formatServerValue(0.0)).isEqualTo("0");
        assertThat(LpgProfileWriter.formatServerValue(-0.0)).isEqualTo("0");
        assertThat(LpgProfileWriter.formatServerValue(0.80625)).isEqualTo("0.80625");
        assertThat(LpgProfileWriter.formatServerValue(121.60000000000001))
                .isEqualTo("121.60000000000001");
        assertThat(LpgProfileWriter.formatServerValue(1e21)).isEqualTo("1000000000000000000000");
        assertThat(LpgProfileWriter.formatServerValue(2.5e-7)).isEqualTo("0.00000025");
    }

    @Test
    void emptyStageHasZerosAndNoNanOrInfinity() throws Exception {
        StageResult empty = new StageResult();
        empty.requestedRate = Double.POSITIVE_INFINITY;
        String json = LpgProfileWriter.toJson(LpgProfileWriter.write(empty, CONTEXT, null));
        assertNoNonFinite(json);
        JsonNode doc = JSON.readTree(json);
        assertThat(doc.at("/metrics/request_rate").asText()).isEqualTo("inf");
        assertThat(doc.at("/summary_stats/stats/0/request_rate").asText()).isEqualTo("inf");
        assertThat(doc.at("/metrics/benchmark_time").doubleValue()).isZero();
        assertThat(doc.at("/metrics/throughput").doubleValue()).isZero();
        assertThat(doc.at("/metrics/avg_latency").doubleValue()).isZero();
        assertThat(doc.at("/metrics/p99_per_token_latency").doubleValue()).isZero();
        assertThat(doc.at("/metrics/achieved_rate").doubleValue()).isZero();
        // falls back to the run start for the date
        assertThat(doc.at("/dimensions/date").asText()).isEqualTo("20240925-220900");
    }

    @Test
    void singleRequestAndAllFailedStagesStayFinite() throws Exception {
        StageResult single = new StageResult();
        single.requestedRate = 1;
        single.firstDispatchEpochNanos = T0;
        single.lastDispatchEpochNanos = T0;
        single.lastCompletionEpochNanos = T0 + 500_000_000L;
        single.sloTtftMs = 100.0;
        StageResults.success(single, 500, 50, 5, 1);
        single.goodputRequests = 1;
        String json = LpgProfileWriter.toJson(LpgProfileWriter.write(single, CONTEXT, null));
        assertNoNonFinite(json);
        JsonNode doc = JSON.readTree(json);
        assertThat(doc.at("/metrics/sd_latency").doubleValue()).isZero();
        assertThat(doc.at("/metrics/p99_latency").doubleValue()).isEqualTo(500.0);
        assertThat(doc.at("/metrics/count_tpot_ms").asLong()).isZero(); // out = 1: no TPOT
        assertThat(doc.at("/metrics/goodput").doubleValue()).isEqualTo(2.0);
        assertThat(doc.at("/metrics/slo_attainment").doubleValue()).isEqualTo(1.0);
        assertThat(doc.at("/metrics/slo/ttft_ms").doubleValue()).isEqualTo(100.0);

        StageResult failed = new StageResult();
        failed.requestedRate = 5;
        failed.firstDispatchEpochNanos = T0;
        failed.lastDispatchEpochNanos = T0 + 1_000_000_000L;
        failed.lastCompletionEpochNanos = T0 + 2_000_000_000L;
        failed.sent = 6;
        failed.sloE2elMs = 1000.0;
        for (String c : List.of("timeout", "http_5xx", "http_5xx", "reset", "bogus", "connect")) {
            failed.countFailure(c);
        }
        String failedJson = LpgProfileWriter.toJson(LpgProfileWriter.write(failed, CONTEXT, null));
        assertNoNonFinite(failedJson);
        JsonNode f = JSON.readTree(failedJson);
        assertThat(f.at("/metrics/failures").asLong()).isEqualTo(6);
        assertThat(f.at("/metrics/errors_by_class/http_5xx").asLong()).isEqualTo(2);
        assertThat(f.at("/metrics/errors_by_class/other").asLong()).isEqualTo(1);
        assertThat(f.at("/metrics/throughput").doubleValue()).isZero();
        assertThat(f.at("/metrics/slo_attainment").doubleValue()).isZero();
        assertThat(f.at("/metrics/achieved_rate").doubleValue()).isEqualTo(5.0);
        assertThat(f.at("/metrics/avg_latency").doubleValue()).isZero();
    }

    private static void assertNoNonFinite(String json) {
        assertThat(json).doesNotContain("NaN").doesNotContain("Infinity");
    }

    @Test
    void fileNamesFollowLpg() {
        StageResult s = threeRequests();
        assertThat(LpgProfileWriter.fileName(s, CONTEXT))
                .isEqualTo("jetstream-20.0qps-gemma-7b-20240925-220923.json");
        s.requestedRate = 0.5;
        assertThat(LpgProfileWriter.fileName(s, CONTEXT)).startsWith("jetstream-0.5qps-gemma-7b-");
        s.requestedRate = Double.POSITIVE_INFINITY;
        assertThat(LpgProfileWriter.fileName(s, CONTEXT)).startsWith("jetstream-infqps-gemma-7b-");
    }

    /** The context of {@link #CONTEXT} with another model id. */
    private static ProfileContext withModel(String modelId) {
        return new ProfileContext(
                CONTEXT.backend(),
                modelId,
                null,
                CONTEXT.modelServer(),
                CONTEXT.startTime(),
                null,
                null,
                1,
                "test",
                Map.of());
    }

    @Test
    void fileNamesAreBoundedAndFreeOfControlCharactersAndSeparators() throws Exception {
        StageResult s = threeRequests();
        String longId = "acme/" + "m".repeat(300);
        String name = LpgProfileWriter.fileName(s, withModel(longId));
        // Before: 340 bytes, "File name too long" on every common file system.
        // 255 bytes is the limit of common file systems; writers add suffixes (-partial, -2,
        // -stage3) and a ConfigMap key has at most 253 characters: 40 bytes are left for them.
        assertThat(name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(255 - 40);
        // LPG's shape kept: <backend>-<rate>qps-<model basename>-<date>.json
        assertThat(name).matches("jetstream-20\\.0qps-m{100,}-[0-9a-f]{8}-20240925-220923\\.json");
        // Two ids that differ only beyond the bound still get different names.
        assertThat(LpgProfileWriter.fileName(s, withModel(longId + "x"))).isNotEqualTo(name);
        // The full id stays in the profile.
        JsonNode doc = LpgProfileWriter.write(s, withModel(longId), null);
        assertThat(doc.at("/dimensions/model_id").asText()).isEqualTo(longId);
        assertThat(doc.at("/config/model").asText()).isEqualTo(longId);

        String odd = "org/line\nbreak\ttab\u0000nul\\back\u2028sep\u007fdel";
        String oddName = LpgProfileWriter.fileName(s, withModel(odd));
        assertThat(oddName)
                .isEqualTo(
                        "jetstream-20.0qps-line_break_tab_nul_back_sep_del-20240925-220923.json");
        assertThat(
                        LpgProfileWriter.write(s, withModel(odd), null)
                                .at("/dimensions/model_id")
                                .asText())
                .isEqualTo(odd);

        // An id that would retitle the terminal loses its escape sequences, not just their ESC.
        assertThat(
                        LpgProfileWriter.fileName(
                                s, withModel("evil\u001b]0;pwned\u0007-model\u001b[2J")))
                .isEqualTo("jetstream-20.0qps-evil-model-20240925-220923.json");

        // Multi-byte characters are cut between characters, never inside one.
        String wide = "\u6a21\u578b\uD83D\uDE80".repeat(80);
        String wideName = LpgProfileWriter.fileName(s, withModel(wide));
        byte[] bytes = wideName.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(bytes.length).isLessThanOrEqualTo(255 - 40);
        // (a half character, a lone surrogate, would come back as '?')
        assertThat(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(wideName);

        // Nothing left of the id: the name still has a model part.
        assertThat(LpgProfileWriter.fileName(s, withModel("///")))
                .isEqualTo("jetstream-20.0qps-model-20240925-220923.json");
    }

    @Test
    void statisticsModeSaysWhetherPercentilesAreExact() throws Exception {
        StageResult inMemory = StageResult.merge(List.of(threeRequests(), threeRequests()));
        assertThat(
                        LpgProfileWriter.write(inMemory, CONTEXT, null)
                                .at("/metrics/statistics_mode")
                                .asText())
                .isEqualTo(LpgProfileWriter.MODE_EXACT);

        // Parts read back from ConfigMaps carry snapshots: more than one means histogram
        // percentiles.
        StageResult a = JSON.readValue(JSON.writeValueAsString(threeRequests()), StageResult.class);
        StageResult b = JSON.readValue(JSON.writeValueAsString(threeRequests()), StageResult.class);
        StageResult merged = StageResult.merge(List.of(a, b));
        ObjectNode doc = LpgProfileWriter.write(merged, CONTEXT, null);
        assertThat(doc.at("/metrics/statistics_mode").asText())
                .isEqualTo(LpgProfileWriter.MODE_HISTOGRAM);
        assertThat(doc.at("/metrics/runner_count").asInt()).isEqualTo(2);
        assertThat(doc.at("/metrics/avg_latency").doubleValue())
                .isCloseTo(7000.0 / 3, within(1e-9));
        // np.percentile([1000, 1000, 2000, 2000, 4000, 4000], 90) = 4000 (virtual index 4.5);
        // histogram buckets are within 0.1 %
        assertThat(doc.at("/metrics/p90_latency").doubleValue()).isCloseTo(4000.0, within(4.0));
        assertThat(doc.at("/metrics/median_latency").doubleValue()).isCloseTo(2000.0, within(2.0));

        StageResult single = StageResult.merge(List.of(a));
        assertThat(
                        LpgProfileWriter.write(single, CONTEXT, null)
                                .at("/metrics/statistics_mode")
                                .asText())
                .isEqualTo(LpgProfileWriter.MODE_EXACT);
    }

    @Test
    void theMostStarvedRunnersCpuIsInTheProfileWhenMeasured() {
        assertThat(
                        LpgProfileWriter.write(threeRequests(), CONTEXT, null)
                                .at("/metrics")
                                .has("runner_cpu"))
                .isFalse();

        StageResult a = threeRequests();
        a.runnerCpu = sixSecondsOnOneCpu(1.5, 0.25, null, 0);
        StageResult b = threeRequests();
        b.runnerCpu = sixSecondsOnOneCpu(5.7, 3.5, 0.0, 1);
        JsonNode cpu =
                LpgProfileWriter.write(StageResult.merge(List.of(a, b)), CONTEXT, null)
                        .at("/metrics/runner_cpu");
        // Runner 1 is the one LoadDelivered judges: 95 % of its CPU and 3.5 s on a run queue.
        assertThat(cpu.get("runner").asInt()).isEqualTo(1);
        assertThat(cpu.get("cpu_seconds").doubleValue()).isEqualTo(5.7);
        assertThat(cpu.get("wall_seconds").doubleValue()).isEqualTo(6.0);
        assertThat(cpu.get("available_cpus").doubleValue()).isEqualTo(1.0);
        assertThat(cpu.get("utilization").doubleValue()).isCloseTo(0.95, within(1e-12));
        assertThat(cpu.get("run_queue_wait_seconds").doubleValue()).isEqualTo(3.5);
        assertThat(cpu.get("throttled_seconds").doubleValue()).isZero();
    }

    private static RunnerCpu sixSecondsOnOneCpu(
            double cpuSeconds, double runQueueWait, Double throttled, int runner) {
        RunnerCpu cpu = new RunnerCpu();
        cpu.cpuSeconds = cpuSeconds;
        cpu.wallSeconds = 6;
        cpu.availableCpus = 1;
        cpu.runQueueWaitSeconds = runQueueWait;
        cpu.throttledSeconds = throttled;
        cpu.runner = runner;
        return cpu;
    }
}
