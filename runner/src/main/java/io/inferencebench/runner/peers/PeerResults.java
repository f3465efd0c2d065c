package io.inferencebench.runner.peers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.compare.LabeledProfile;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.text.TerminalText;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the result files of the tools users already run and maps each onto the stage model that
 * {@code compare} and {@code report} read: one document per stage with a {@code metrics} object in
 * this project's LPG keys ({@code request_rate}, {@code median_ttft_ms}, {@code p99_itl_ms}, {@code
 * output_tokens_per_min}, ...) and a {@code source} object naming the tool, its version and the
 * file.
 *
 * <p>The kind of a file is told by its content, never by its name. A statistic the file does not
 * carry is left out of the stage, never written as 0: the comparison then says which side lacks it.
 * Units are converted exactly (seconds to ms, tokens/s to tokens/min); nothing is estimated. How
 * the peers' metrics map onto ours (which of them is TTFT, ITL, TPOT, E2E latency) is in {@code
 * runner/README.md}, "Results of other tools".
 */
public final class PeerResults {

    /** The kinds of result file read, each with how messages name it. */
    public enum Kind {
        /** A profile of this project's runner (either LPG dialect). */
        INFERENCEBENCH("InferenceBench profile"),
        /** A profile written by LPG's own benchmark_serving.py (either dialect). */
        LPG("LPG profile"),
        /** {@code vllm bench serve --save-result} JSON. */
        VLLM_BENCH_SERVE("vllm bench serve --save-result JSON"),
        /** AIPerf's {@code profile_export_aiperf.json}. */
        AIPERF("AIPerf profile export"),
        /** inference-perf's {@code stage_N_lifecycle_metrics.json}. */
        INFERENCE_PERF("inference-perf stage report"),
        /** inference-perf's {@code summary_lifecycle_metrics.json}: all stages pooled. */
        INFERENCE_PERF_SUMMARY("inference-perf summary report"),
        /** A Benchmark Report v0.2 (inference-perf's per-stage partial, llm-d-benchmark). */
        BR02("Benchmark Report v0.2"),
        /** GuideLLM's {@code benchmarks.json}. */
        GUIDELLM("GuideLLM benchmarks.json");

        private final String description;

        Kind(String description) {
            this.description = description;
        }

        /**
         * How messages name the kind.
         *
         * @return e.g. {@code AIPerf profile export}
         */
        public String description() {
            return description;
        }

        /**
         * The JSON spelling in {@code source.kind}.
         *
         * @return e.g. {@code vllm-bench-serve}
         */
        public String key() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /**
         * Whether this is a profile in LPG keys (this project's or LPG's own).
         *
         * @return {@code true} for {@link #INFERENCEBENCH} and {@link #LPG}
         */
        public boolean isLpg() {
            return this == INFERENCEBENCH || this == LPG;
        }
    }

    /** The LPG dialect of LPG's last code: {@code throughput} in output tokens/s. */
    public static final String DIALECT_FINAL = "final";

    /** The seed's LPG dialect: {@code throughput} in requests/s. */
    public static final String DIALECT_SEED = "seed";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** Statistic prefixes of this project's keys, with each one's names in the peers' files. */
    private static final Map<String, List<String>> STATS = new LinkedHashMap<>();

    static {
        STATS.put("avg", List.of("avg", "mean"));
        STATS.put("median", List.of("median", "p50"));
        STATS.put("sd", List.of("std", "stddev", "sd"));
        STATS.put("min", List.of("min"));
        STATS.put("max", List.of("max"));
        STATS.put("p90", List.of("p90"));
        STATS.put("p95", List.of("p95"));
        STATS.put("p99", List.of("p99"));
    }

    private static final Pattern STAGE_FILE = Pattern.compile("stage_(\\d+)_");

    private PeerResults() {}

    /**
     * The kind of a parsed result file, told by its content.
     *
     * @param doc the parsed file
     * @return the kind, or {@code null} when it is none that {@code compare} and {@code report}
     *     read
     */
    public static Kind detect(JsonNode doc) {
        if (doc == null || !doc.isObject()) {
            return null;
        }
        if (doc.path("benchmarks").isArray()
                && doc.path("benchmarks").size() > 0
                && doc.path("benchmarks").get(0).path("metrics").isObject()) {
            return Kind.GUIDELLM;
        }
        if (doc.path("metrics").isObject()) {
            return doc.path("dimensions").has("runner_version") ? Kind.INFERENCEBENCH : Kind.LPG;
        }
        if (doc.has("aiperf_version") || doc.path("time_to_first_token").has("unit")) {
            return Kind.AIPERF;
        }
        if (doc.path("version").asText("").startsWith("0.2")
                && doc.path("results").path("request_performance").isObject()) {
            return Kind.BR02;
        }
        if (doc.path("successes").isObject() && doc.path("load_summary").isObject()) {
            return doc.path("load_summary").has("requested_rate")
                    ? Kind.INFERENCE_PERF
                    : Kind.INFERENCE_PERF_SUMMARY;
        }
        if (doc.has("request_throughput")
                && doc.has("completed")
                && (doc.has("mean_ttft_ms") || doc.has("output_throughput"))) {
            return Kind.VLLM_BENCH_SERVE;
        }
        return null;
    }

    /**
     * The stages of a result file, mapped onto the stage model.
     *
     * @param kind its kind ({@link #detect})
     * @param doc the parsed file
     * @param label how the file is named (its file name)
     * @return one document per stage, each labelled
     * @throws IllegalArgumentException naming the file and what is wrong when it cannot be mapped
     */
    public static List<LabeledProfile> stages(Kind kind, JsonNode doc, String label) {
        return switch (kind) {
            case INFERENCEBENCH, LPG -> List.of(new LabeledProfile(label, lpg(kind, doc, label)));
            case VLLM_BENCH_SERVE -> List.of(new LabeledProfile(label, vllm(doc, label)));
            case AIPERF -> List.of(new LabeledProfile(label, aiperf(doc, label)));
            case INFERENCE_PERF -> List.of(new LabeledProfile(label, inferencePerf(doc, label)));
            case BR02 -> List.of(new LabeledProfile(label, br02(doc, label)));
            case GUIDELLM -> guidellm(doc, label);
            case INFERENCE_PERF_SUMMARY ->
                    throw new IllegalArgumentException(
                            label
                                    + " is inference-perf's summary over all stages pooled (no"
                                    + " request rate): give its stage_N_lifecycle_metrics.json"
                                    + " files or their directory");
        };
    }

    /**
     * The LPG dialect of a profile's {@code metrics}: {@link #DIALECT_FINAL} when {@code
     * throughput} is output tokens/s (it differs from {@code throughput_rps}, or equals total
     * output tokens over the benchmark time and not the requests over it), else {@link
     * #DIALECT_SEED}.
     *
     * @param metrics the profile's {@code metrics}
     * @return the dialect
     */
    public static String lpgDialect(JsonNode metrics) {
        JsonNode dialect = metrics.path("lpg_dialect");
        if (dialect.isTextual()) {
            return dialect.asText();
        }
        Double throughput = number(metrics.get("throughput"));
        if (throughput == null) {
            return DIALECT_SEED;
        }
        Double rps = number(metrics.get("throughput_rps"));
        if (rps != null) {
            return close(throughput, rps) ? DIALECT_SEED : DIALECT_FINAL;
        }
        Double time = number(metrics.get("benchmark_time"));
        Double tokens = number(metrics.get("total_output_token"));
        Double requests = number(metrics.get("completed"));
        if (requests == null) {
            requests = number(metrics.get("num_prompts_succeeded"));
        }
        if (requests == null) {
            requests = number(metrics.get("num_prompts"));
        }
        if (time == null || time <= 0 || tokens == null || requests == null) {
            return DIALECT_SEED;
        }
        return close(throughput, tokens / time) && !close(throughput, requests / time)
                ? DIALECT_FINAL
                : DIALECT_SEED;
    }

    // ---- LPG profiles ----

    private static ObjectNode lpg(Kind kind, JsonNode doc, String label) {
        ObjectNode copy = doc.deepCopy();
        ObjectNode m = (ObjectNode) copy.get("metrics");
        // our writer names the dialect in dimensions.lpg_dialect; LPG's own files do not
        JsonNode named = copy.path("dimensions").path("lpg_dialect");
        String dialect = named.isTextual() ? named.asText() : lpgDialect(m);
        if (dialect.equals(DIALECT_FINAL)) {
            // LPG's last code: throughput is output tokens/s; the stage model's is requests/s.
            Double rps = number(m.get("throughput_rps"));
            m.remove("throughput");
            if (rps != null) {
                m.put("throughput", rps);
            }
        }
        JsonNode rate = m.get("request_rate");
        if (rate != null && rate.isNumber() && Double.isInfinite(rate.doubleValue())) {
            m.put("request_rate", RequestRate.UNBOUNDED); // LPG's bare Infinity
        }
        if (!m.has("completed") && number(m.get("num_prompts_succeeded")) != null) {
            m.put("completed", m.get("num_prompts_succeeded").asLong());
            Double attempted = number(m.get("num_prompts_attempted"));
            if (attempted != null) {
                m.put("failures", attempted.longValue() - m.get("completed").asLong());
            }
        }
        boolean succeeded = !m.has("completed") || m.path("completed").asLong() > 0;
        for (Map.Entry<String, List<String>> s : STATS.entrySet()) {
            String prefix = s.getKey();
            // LPG's TTFT keys are in seconds, and only written when streaming.
            Double ttft = number(m.get(prefix + "_TTFT"));
            if (succeeded && ttft != null && !m.has(prefix + "_ttft_ms")) {
                m.put(prefix + "_ttft_ms", ttft * 1000);
            }
            // LPG's end-to-end latency keys are {stat}_latency, in ms already.
            Double latency = number(m.get(prefix + "_latency"));
            if (succeeded && latency != null && !m.has(prefix + "_e2el_ms")) {
                m.put(prefix + "_e2el_ms", latency);
            }
        }
        ObjectNode source = copy.putObject("source");
        source.put("kind", kind.key());
        source.put(
                "tool",
                kind == Kind.INFERENCEBENCH
                        ? "InferenceBench runner"
                        : "LPG (benchmark_serving.py)");
        JsonNode version = doc.path("dimensions").path("runner_version");
        if (version.isTextual()) {
            source.put("version", TerminalText.oneLine(version.asText()));
        }
        source.put("lpg_dialect", dialect);
        source.put("file", label);
        return copy;
    }

    // ---- vllm bench serve ----

    private static ObjectNode vllm(JsonNode doc, String label) {
        Stage s = new Stage(Kind.VLLM_BENCH_SERVE, "vllm bench serve", null, label);
        s.rate(doc.get("request_rate"), label + " request_rate");
        s.integer("max_concurrency", doc.get("max_concurrency"));
        s.integer("num_prompts", doc.get("num_prompts"));
        s.integer("completed", doc.get("completed"));
        s.integer("failures", doc.get("failed"));
        s.number("benchmark_time", doc.get("duration"), 1);
        s.number("throughput", doc.get("request_throughput"), 1);
        s.number("output_tokens_per_min", doc.get("output_throughput"), 60);
        s.integer("total_output_token", doc.get("total_output_tokens"));
        s.integer("total_input_tokens", doc.get("total_input_tokens"));
        s.stage(0);
        // vLLM's names: {mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms, in ms.
        for (String family : List.of("ttft", "tpot", "itl", "e2el")) {
            ObjectNode stats = F.objectNode();
            for (String stat : List.of("mean", "median", "std", "p90", "p95", "p99")) {
                JsonNode v = doc.get(stat + "_" + family + "_ms");
                if (v != null) {
                    stats.set(stat, v);
                }
            }
            if (!stats.has("median") && doc.has("p50_" + family + "_ms")) {
                stats.set("median", doc.get("p50_" + family + "_ms"));
            }
            s.family(family, stats, 1);
        }
        return s.done();
    }

    // ---- AIPerf ----

    private static ObjectNode aiperf(JsonNode doc, String label) {
        Stage s =
                new Stage(
                        Kind.AIPERF,
                        "AIPerf",
                        doc.path("aiperf_version").isTextual()
                                ? doc.path("aiperf_version").asText()
                                : null,
                        label);
        JsonNode phase = null;
        for (JsonNode p : doc.path("input_config").path("phases")) {
            if (p.path("kind").asText("").equals("profiling")) {
                phase = p;
            }
        }
        if (phase != null && number(phase.get("rate")) != null) {
            s.rate(phase.get("rate"), label + " input_config.phases[profiling].rate");
        } else if (phase != null && number(phase.get("concurrency")) != null) {
            s.m.put("request_rate", RequestRate.UNBOUNDED);
        }
        if (phase != null) {
            s.integer("max_concurrency", phase.get("concurrency"));
            s.integer("num_prompts", phase.get("requests"));
        }
        s.integer("completed", doc.path("request_count").get("avg"));
        s.integer("failures", doc.path("error_request_count").get("avg"));
        s.number(
                "benchmark_time",
                doc.path("benchmark_duration").get("avg"),
                seconds(doc.path("benchmark_duration"), label));
        s.number("throughput", doc.path("request_throughput").get("avg"), 1);
        s.number("output_tokens_per_min", doc.path("output_token_throughput").get("avg"), 60);
        s.integer("total_output_token", doc.path("total_output_tokens").get("avg"));
        s.integer("total_input_tokens", doc.path("total_isl").get("avg"));
        s.stage(0);
        // AIPerf's inter_token_latency is (latency - TTFT) / (tokens after the first chunk) of each
        // request, vLLM's TPOT; its inter_chunk_latency is the gap between SSE events, our ITL.
        s.family(
                "ttft",
                doc.path("time_to_first_token"),
                ms(doc.path("time_to_first_token"), label));
        s.family(
                "itl", doc.path("inter_chunk_latency"), ms(doc.path("inter_chunk_latency"), label));
        s.family(
                "tpot",
                doc.path("inter_token_latency"),
                ms(doc.path("inter_token_latency"), label));
        s.family("e2el", doc.path("request_latency"), ms(doc.path("request_latency"), label));
        return s.done();
    }

    // ---- inference-perf ----

    private static ObjectNode inferencePerf(JsonNode doc, String label) {
        Stage s = new Stage(Kind.INFERENCE_PERF, "inference-perf", null, label);
        JsonNode load = doc.path("load_summary");
        s.rate(load.get("requested_rate"), label + " load_summary.requested_rate");
        s.number("achieved_rate", load.get("achieved_rate"), 1);
        JsonNode ok = doc.path("successes");
        s.integer("completed", ok.get("count"));
        s.integer("failures", doc.path("failures").get("count"));
        s.number("benchmark_time", doc.get("benchmark_time_seconds"), 1);
        s.number("throughput", ok.path("throughput").get("requests_per_sec"), 1);
        s.number("output_tokens_per_min", ok.path("throughput").get("output_tokens_per_sec"), 60);
        s.number("median_schedule_lag_ms", load.path("schedule_delay").get("median"), 1000);
        s.number("p99_schedule_lag_ms", load.path("schedule_delay").get("p99"), 1000);
        Matcher stage = STAGE_FILE.matcher(label);
        s.stage(stage.find() ? Integer.parseInt(stage.group(1)) : 0);
        if (ok.path("count").asLong(1) > 0) {
            // inference-perf's latencies are in seconds.
            JsonNode lat = ok.path("latency");
            s.family("ttft", lat.path("time_to_first_token"), 1000);
            s.family("itl", lat.path("inter_token_latency"), 1000);
            s.family("tpot", lat.path("time_per_output_token"), 1000);
            s.family("e2el", lat.path("request_latency"), 1000);
        }
        return s.done();
    }

    // ---- Benchmark Report v0.2 ----

    private static ObjectNode br02(JsonNode doc, String label) {
        JsonNode standardized = doc.path("scenario").path("load").path("standardized");
        Stage s =
                new Stage(
                        Kind.BR02,
                        standardized.path("tool").isTextual()
                                ? standardized.path("tool").asText() + " (BR0.2)"
                                : "Benchmark Report v0.2",
                        standardized.path("tool_version").isTextual()
                                ? standardized.path("tool_version").asText()
                                : null,
                        label);
        s.source.put("br_version", doc.path("version").asText());
        if (number(standardized.get("rate_qps")) != null) {
            s.rate(standardized.get("rate_qps"), label + " scenario.load.standardized.rate_qps");
        } else if (standardized.has("concurrency")) {
            s.m.put("request_rate", RequestRate.UNBOUNDED);
            s.integer("max_concurrency", standardized.get("concurrency"));
        } else {
            s.source.put(
                    "no_rate",
                    "no scenario.load.standardized.rate_qps: the report does not say which rate"
                            + " it was run at");
        }
        Matcher stage = STAGE_FILE.matcher(label);
        s.stage(
                standardized.has("stage")
                        ? standardized.path("stage").asInt()
                        : stage.find() ? Integer.parseInt(stage.group(1)) : 0);
        JsonNode agg = doc.path("results").path("request_performance").path("aggregate");
        Double total = number(agg.path("requests").get("total"));
        Double failures = number(agg.path("requests").get("failures"));
        if (total != null) {
            s.m.put("num_prompts", total.longValue());
            if (failures != null) {
                s.m.put("completed", total.longValue() - failures.longValue());
                s.m.put("failures", failures.longValue());
            }
        }
        JsonNode tp = agg.path("throughput");
        s.number("throughput", tp.path("request_rate").get("mean"), 1);
        s.number("output_tokens_per_min", tp.path("output_token_rate").get("mean"), 60);
        JsonNode lat = agg.path("latency");
        s.family(
                "ttft",
                lat.path("time_to_first_token"),
                brMs(lat.path("time_to_first_token"), label));
        s.family(
                "itl",
                lat.path("inter_token_latency"),
                brMs(lat.path("inter_token_latency"), label));
        s.family(
                "tpot",
                lat.path("time_per_output_token"),
                brMs(lat.path("time_per_output_token"), label));
        s.family("e2el", lat.path("request_latency"), brMs(lat.path("request_latency"), label));
        return s.done();
    }

    /** The factor to ms of a BR0.2 statistic: {@code units} s, ms, s/token or ms/token. */
    private static double brMs(JsonNode stats, String label) {
        if (stats.isMissingNode()) {
            return 1;
        }
        String units = stats.path("units").asText("");
        return switch (units) {
            case "ms", "ms/token" -> 1;
            case "s", "s/token" -> 1000;
            default ->
                    throw new IllegalArgumentException(
                            label + ": a BR0.2 latency in units '" + units + "', not s or ms");
        };
    }

    // ---- GuideLLM ----

    private static List<LabeledProfile> guidellm(JsonNode doc, String label) {
        List<LabeledProfile> out = new ArrayList<>();
        JsonNode benchmarks = doc.path("benchmarks");
        String version = null;
        for (String field : List.of("guidellm_version", "version")) {
            if (doc.path("metadata").path(field).isTextual()) {
                version = doc.path("metadata").path(field).asText();
            }
        }
        for (int i = 0; i < benchmarks.size(); i++) {
            JsonNode b = benchmarks.get(i);
            String stageLabel = benchmarks.size() == 1 ? label : label + "#" + (i + 1);
            Stage s = new Stage(Kind.GUIDELLM, "GuideLLM", version, stageLabel);
            JsonNode strategy = guidellmStrategy(b);
            String type = strategy.path("type_").asText(strategy.path("type").asText(""));
            if (number(strategy.get("rate")) != null) {
                s.rate(strategy.get("rate"), stageLabel + " strategy rate");
            } else if (type.equals("concurrent") || type.equals("synchronous")) {
                s.m.put("request_rate", RequestRate.UNBOUNDED);
                s.integer(
                        "max_concurrency",
                        type.equals("synchronous") ? F.numberNode(1) : strategy.get("streams"));
            } else if (type.equals("throughput")) {
                s.m.put("request_rate", RequestRate.UNBOUNDED);
            }
            s.stage(i);
            JsonNode m = b.path("metrics");
            JsonNode totals = m.path("request_totals");
            s.integer("completed", totals.get("successful"));
            Long errored =
                    totals.path("errored").isIntegralNumber()
                            ? totals.path("errored").asLong()
                            : null;
            Long incomplete =
                    totals.path("incomplete").isIntegralNumber()
                            ? totals.path("incomplete").asLong()
                            : null;
            if (errored != null) {
                s.m.put("failures", errored + (incomplete == null ? 0 : incomplete));
            }
            s.number("throughput", m.path("requests_per_second").path("successful").get("mean"), 1);
            s.number(
                    "output_tokens_per_min",
                    m.path("output_tokens_per_second").path("successful").get("mean"),
                    60);
            s.number("benchmark_time", b.get("duration"), 1);
            s.family("ttft", guidellmStats(m.path("time_to_first_token_ms")), 1);
            // GuideLLM's inter_token_latency_ms is (last token - first token) / (tokens - 1) of
            // each request: vLLM's TPOT. Its time_per_output_token_ms includes the first token
            // (LPG's "normalized" time); it records no gap between events: no ITL.
            s.family("tpot", guidellmStats(m.path("inter_token_latency_ms")), 1);
            s.family("e2el", guidellmStats(m.path("request_latency")), 1000);
            out.add(new LabeledProfile(stageLabel, s.done()));
        }
        return out;
    }

    /** A GuideLLM benchmark's scheduling strategy (its place moved between releases). */
    private static JsonNode guidellmStrategy(JsonNode b) {
        for (JsonNode candidate :
                List.of(
                        b.path("config").path("strategy"),
                        b.path("args").path("strategy"),
                        b.path("scheduler").path("strategy"),
                        b.path("run_stats").path("strategy"))) {
            if (candidate.isObject()) {
                return candidate;
            }
        }
        return b.path("config").path("profile");
    }

    /** GuideLLM's successful-request statistics: {mean, median, std_dev, percentiles{p90...}}. */
    private static JsonNode guidellmStats(JsonNode metric) {
        JsonNode ok = metric.path("successful");
        if (!ok.isObject() || ok.path("count").asLong(1) == 0) {
            return F.missingNode();
        }
        ObjectNode stats = F.objectNode();
        copy(ok, "mean", stats, "mean");
        copy(ok, "median", stats, "median");
        copy(ok, "std_dev", stats, "std");
        copy(ok, "min", stats, "min");
        copy(ok, "max", stats, "max");
        JsonNode p = ok.path("percentiles");
        copy(p, "p90", stats, "p90");
        copy(p, "p95", stats, "p95");
        copy(p, "p99", stats, "p99");
        if (!stats.has("median")) {
            copy(p, "p50", stats, "median");
        }
        return stats;
    }

    private static void copy(JsonNode from, String key, ObjectNode to, String as) {
        if (from.has(key)) {
            to.set(as, from.get(key));
        }
    }

    // ---- units ----

    /** The factor to ms of an AIPerf metric by its {@code unit}. */
    private static double ms(JsonNode metric, String label) {
        if (metric.isMissingNode()) {
            return 1;
        }
        String unit = metric.path("unit").asText("");
        return switch (unit) {
            case "ms" -> 1;
            case "s", "sec" -> 1000;
            case "us" -> 1e-3;
            case "ns" -> 1e-6;
            default ->
                    throw new IllegalArgumentException(
                            label + ": an AIPerf latency in unit '" + unit + "', not ms or s");
        };
    }

    /** The factor to seconds of an AIPerf duration by its {@code unit}. */
    private static double seconds(JsonNode metric, String label) {
        if (metric.isMissingNode()) {
            return 1;
        }
        String unit = metric.path("unit").asText("");
        return switch (unit) {
            case "s", "sec" -> 1;
            case "ms" -> 1e-3;
            case "ns" -> 1e-9;
            default ->
                    throw new IllegalArgumentException(
                            label + ": an AIPerf duration in unit '" + unit + "', not s or ms");
        };
    }

    static Double number(JsonNode n) {
        return n != null && n.isNumber() && Double.isFinite(n.doubleValue())
                ? n.doubleValue()
                : null;
    }

    private static boolean close(double a, double b) {
        return Math.abs(a - b) <= 0.01 * Math.max(Math.abs(a), Math.abs(b));
    }

    /** One stage being mapped: puts only what the file has. */
    private static final class Stage {
        final ObjectNode doc = F.objectNode();
        final ObjectNode m = doc.putObject("metrics");
        final ObjectNode source = doc.putObject("source");

        Stage(Kind kind, String tool, String version, String label) {
            source.put("kind", kind.key());
            // Names read from the file reach terminals and pages: one line, no escape sequences.
            source.put("tool", TerminalText.oneLine(tool));
            if (version != null) {
                source.put("version", TerminalText.oneLine(version));
            }
            source.put("file", label);
        }

        void rate(JsonNode rate, String field) {
            if (rate == null || rate.isNull()) {
                return;
            }
            if (rate.isNumber()) {
                double r = rate.doubleValue();
                if (Double.isInfinite(r) && r > 0) {
                    m.put("request_rate", RequestRate.UNBOUNDED);
                } else if (r > 0 && Double.isFinite(r)) {
                    m.put("request_rate", r);
                } else {
                    throw new IllegalArgumentException(field + " is " + r + ", not a rate > 0");
                }
                return;
            }
            try {
                double r = RequestRate.parse(rate.asText());
                if (RequestRate.isUnbounded(r)) {
                    m.put("request_rate", RequestRate.UNBOUNDED);
                } else {
                    m.put("request_rate", r);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        field + " is '" + rate.asText() + "', not a number or inf");
            }
        }

        void stage(int index) {
            m.put("stage_index", index);
        }

        void number(String key, JsonNode value, double scale) {
            Double v = PeerResults.number(value);
            if (v != null) {
                m.put(key, v * scale);
            }
        }

        void integer(String key, JsonNode value) {
            Double v = PeerResults.number(value);
            if (v != null && v == Math.rint(v)) {
                m.put(key, v.longValue());
            }
        }

        /** The statistics of one latency family the file has, in ms. */
        void family(String family, JsonNode stats, double toMs) {
            if (stats == null || !stats.isObject()) {
                return;
            }
            for (Map.Entry<String, List<String>> s : STATS.entrySet()) {
                for (String name : s.getValue()) {
                    Double v = PeerResults.number(stats.get(name));
                    if (v != null) {
                        m.put(s.getKey() + "_" + family + "_ms", v * toMs);
                        break;
                    }
                }
            }
            Double count = PeerResults.number(stats.get("count"));
            if (count != null) {
                m.put("count_" + family + "_ms", count.longValue());
            }
        }

        ObjectNode done() {
            List<String> absent = new ArrayList<>();
            for (String family : List.of("ttft", "itl", "tpot", "e2el")) {
                for (String stat : List.of("median", "p90", "p99")) {
                    if (!m.has(stat + "_" + family + "_ms")) {
                        absent.add(stat + "_" + family + "_ms");
                    }
                }
            }
            if (!m.has("output_tokens_per_min")) {
                absent.add("output_tokens_per_min");
            }
            if (!absent.isEmpty()) {
                source.set(
                        "not_in_file",
                        F.arrayNode().addAll(absent.stream().map(F::textNode).toList()));
            }
            return doc;
        }
    }

    /** For tests: the fields of a stage's {@code metrics}. */
    static List<String> keys(JsonNode stage) {
        List<String> out = new ArrayList<>();
        for (Iterator<String> it = stage.path("metrics").fieldNames(); it.hasNext(); ) {
            out.add(it.next());
        }
        return out;
    }
}
