package io.inferencebench.profile.br;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.stats.MetricRecorder;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Builds the Benchmark Report v0.2 of one stage: llm-d-benchmark's interchange format, as
 * inference-perf writes it per stage (version {@value #VERSION}, the current point release of the
 * BR0.2 family, which every 0.2 reader of llm-d-benchmark's loads).
 *
 * <p>Like inference-perf's, the report holds what the run itself measured: {@code version}, {@code
 * run.uid}, {@code run.eid}, {@code run.time} and {@code results.request_performance.aggregate}
 * ({@code requests}, {@code latency}, {@code throughput}). {@code scenario} (the stack and the load
 * description) is left for a composer to merge in. A statistic of no values is absent, never a
 * made-up zero, and so are the rates of a stage with no successful request. The field table with
 * our measurements behind each field is in the project's {@code docs/formats.md}.
 *
 * <p>Units: latencies in {@code ms}, per-token latencies in {@code ms/token}, token rates in {@code
 * tokens/s}, the request rate in {@code queries/s}, lengths in {@code count}, as the schema's unit
 * rules ask. {@code stddev} is the sample standard deviation (ddof = 1, as inference-perf writes
 * it; absent for a single value); the percentiles are the LPG profile's (exact, or from the merged
 * histograms within 0.1 %).
 */
public final class BenchmarkReportWriter {

    /** The schema version written. */
    public static final String VERSION = "0.2.1";

    /**
     * What a report's file name (and ConfigMap key) ends in, in place of the profile's {@code
     * .json}.
     */
    public static final String FILE_SUFFIX = ".br0.2.yaml";

    /** BR0.2's percentile set: key and percentile. */
    private static final Map<String, Double> PERCENTILES = new LinkedHashMap<>();

    static {
        PERCENTILES.put("p0p1", 0.1);
        PERCENTILES.put("p1", 1.0);
        PERCENTILES.put("p5", 5.0);
        PERCENTILES.put("p10", 10.0);
        PERCENTILES.put("p25", 25.0);
        PERCENTILES.put("p50", 50.0);
        PERCENTILES.put("p75", 75.0);
        PERCENTILES.put("p90", 90.0);
        PERCENTILES.put("p95", 95.0);
        PERCENTILES.put("p99", 99.0);
        PERCENTILES.put("p99p9", 99.9);
    }

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /**
     * Plain decimals, never exponents: YAML 1.1 readers (PyYAML, which llm-d-benchmark loads
     * reports with) read {@code 1.2E7} as a string; {@code 12000000.0} is a number to every reader.
     */
    private static final YAMLMapper YAML =
            YAMLMapper.builder()
                    .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
                    .disable(YAMLGenerator.Feature.SPLIT_LINES)
                    .build();

    private BenchmarkReportWriter() {}

    /**
     * The report's name beside a profile: the profile's name with {@code .json} replaced by {@link
     * #FILE_SUFFIX} ({@code vllm-5.0qps-gemma-7b-20261204-101010.br0.2.yaml}).
     *
     * @param profileName the LPG profile's file name or ConfigMap key
     * @return the report's name
     */
    public static String nameBeside(String profileName) {
        String stem =
                profileName.endsWith(".json")
                        ? profileName.substring(0, profileName.length() - ".json".length())
                        : profileName;
        return stem + FILE_SUFFIX;
    }

    /**
     * Builds the report of one stage.
     *
     * @param stage the (merged) stage result
     * @param experimentId {@code run.eid}, shared by the stages of one run; {@code run.uid} is it
     *     followed by {@code -stage-<n>}
     * @return the report
     * @throws IllegalStateException if a non-finite number slipped into the report (a bug)
     */
    public static ObjectNode write(StageResult stage, String experimentId) {
        ObjectNode root = NODES.objectNode();
        root.put("version", VERSION);
        ObjectNode run = root.putObject("run");
        run.put("uid", experimentId + "-stage-" + (stage.stageIndex + 1));
        run.put("eid", experimentId);
        if (stage.firstDispatchEpochNanos > 0
                && stage.lastCompletionEpochNanos >= stage.firstDispatchEpochNanos) {
            Instant start = instant(stage.firstDispatchEpochNanos);
            Instant end = instant(stage.lastCompletionEpochNanos);
            ObjectNode time = run.putObject("time");
            time.put("start", start.toString());
            time.put("end", end.toString());
            time.put("duration", Duration.between(start, end).toString());
        }

        ObjectNode aggregate =
                root.putObject("results").putObject("request_performance").putObject("aggregate");
        ObjectNode requests = aggregate.putObject("requests");
        requests.put("total", stage.sent);
        requests.put("failures", stage.failed);
        if (stage.partial) {
            // Aborted by the cancellation: neither completed nor failed.
            requests.put("incomplete", stage.cancelledRequests);
        }
        putStatistics(requests, "input_length", stage.inputLen, "count");
        putStatistics(requests, "output_length", stage.outputLen, "count");

        ObjectNode latency = aggregate.putObject("latency");
        putStatistics(latency, "time_to_first_token", stage.ttftMs, "ms");
        putStatistics(
                latency,
                "normalized_time_per_output_token",
                stage.perOutputTokenLatencyMs,
                "ms/token");
        putStatistics(latency, "time_per_output_token", stage.tpotMs, "ms/token");
        putStatistics(latency, "inter_token_latency", stage.itlMs, "ms/token");
        putStatistics(latency, "request_latency", stage.latencyMs, "ms");
        if (latency.isEmpty()) {
            aggregate.remove("latency");
        }

        double seconds = LpgProfileWriter.benchmarkTimeSeconds(stage);
        if (stage.completed > 0 && seconds > 0) {
            // The rates over LPG's window (first dispatch to last completion, failures included),
            // as inference-perf computes them.
            ObjectNode throughput = aggregate.putObject("throughput");
            putRate(throughput, "input_token_rate", stage.totalInputTokens / seconds, "tokens/s");
            putRate(throughput, "output_token_rate", stage.totalOutputTokens / seconds, "tokens/s");
            putRate(
                    throughput,
                    "total_token_rate",
                    (stage.totalInputTokens + stage.totalOutputTokens) / seconds,
                    "tokens/s");
            putRate(throughput, "request_rate", stage.completed / seconds, "queries/s");
        }
        requireFinite(root, "");
        return root;
    }

    /**
     * Writes a report as YAML (numbers as plain decimals).
     *
     * @param report a report from {@link #write}
     * @return the YAML text
     */
    public static String toYaml(JsonNode report) {
        requireFinite(report, "");
        try {
            return YAML.writeValueAsString(plainNumbers(report.deepCopy()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize benchmark report", e);
        }
    }

    private static void putStatistics(
            ObjectNode parent, String key, MetricRecorder r, String units) {
        if (r == null || r.count() == 0) {
            return;
        }
        ObjectNode s = parent.putObject(key);
        s.put("units", units);
        s.put("mean", r.mean());
        if (r.count() > 1) {
            // the sample SD from the population SD the recorder keeps (ddof = 0)
            long n = r.count();
            s.put("stddev", r.sd() * Math.sqrt((double) n / (n - 1)));
        }
        s.put("min", r.min());
        PERCENTILES.forEach((name, p) -> s.put(name, r.percentile(p)));
        s.put("max", r.max());
    }

    private static void putRate(ObjectNode parent, String key, double value, String units) {
        ObjectNode s = parent.putObject(key);
        s.put("units", units);
        s.put("mean", value);
    }

    private static Instant instant(long epochNanos) {
        return Instant.ofEpochSecond(epochNanos / 1_000_000_000L, epochNanos % 1_000_000_000L);
    }

    /** Every floating-point number as a decimal of its shortest representation. */
    private static JsonNode plainNumbers(JsonNode node) {
        if (node.isObject()) {
            ObjectNode object = (ObjectNode) node;
            Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> e = fields.next();
                e.setValue(plainNumbers(e.getValue()));
            }
            return object;
        }
        if (node.isArray()) {
            ArrayNode array = (ArrayNode) node;
            for (int i = 0; i < array.size(); i++) {
                array.set(i, plainNumbers(array.get(i)));
            }
            return array;
        }
        if (node.isFloatingPointNumber()) {
            return DecimalNode.valueOf(new BigDecimal(Double.toString(node.doubleValue())));
        }
        return node;
    }

    private static void requireFinite(JsonNode node, String path) {
        if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
            throw new IllegalStateException("non-finite number at " + path);
        }
        if (node.isObject()) {
            node.fields()
                    .forEachRemaining(e -> requireFinite(e.getValue(), path + "/" + e.getKey()));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                requireFinite(node.get(i), path + "/" + i);
            }
        }
    }
}
