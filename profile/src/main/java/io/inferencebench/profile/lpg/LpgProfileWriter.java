package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.stats.MetricRecorder;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;

/**
 * Builds LPG latency-profile documents (one per stage) from a {@link StageResult}.
 *
 * <p>The keys, units and statistics are those of Google's Latency Profile Generator (see the field
 * table in the project's reference docs): {@code metrics}, {@code dimensions}, {@code config},
 * {@code summary_stats}. Additive keys (never renaming LPG's) carry failures, errors by class,
 * achieved rate, schedule lag, TTFT/ITL/TPOT families, goodput, SLO attainment, the statistics mode
 * and the token sources. Two {@link LpgDialect dialects}: the seed's and LPG's last code's, each
 * with every non-conflicting key of the other (LPG's error counters from our failure classes by
 * {@link LpgErrorCounters}).
 *
 * <p>The document never contains NaN or Infinity: empty statistics are {@code 0} (as in LPG), an
 * unbounded request rate is the string {@code "inf"}, and {@link #write} verifies the whole tree.
 */
public final class LpgProfileWriter {

    /** LPG's {@code dimensions.date} format, UTC. */
    public static final DateTimeFormatter DATE_FORMAT =
            DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

    /** Statistics mode when every percentile came from raw samples. */
    public static final String MODE_EXACT = "exact";

    /** Statistics mode when some percentiles came from (merged) histograms. */
    public static final String MODE_HISTOGRAM = "histogram-merged";

    /**
     * Fewest requests over which a stage's rates (achieved rate, throughput) mean something: a rate
     * over five requests that finished within milliseconds says nothing about the server.
     */
    public static final int MIN_REQUESTS_FOR_RATES = 10;

    /**
     * Key in {@code metrics} of the latency histograms ({@code ttft_ms}, {@code itl_ms}, {@code
     * tpot_ms}, {@code e2el_ms}), each a {@link io.inferencebench.profile.stats.RecorderSnapshot}.
     */
    public static final String HISTOGRAMS_KEY = "histograms";

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private static final ObjectMapper MAPPER =
            JsonMapper.builder()
                    .disable(JsonWriteFeature.WRITE_NAN_AS_STRINGS)
                    .enable(SerializationFeature.INDENT_OUTPUT)
                    .build();

    private LpgProfileWriter() {}

    /** LPG's {@code config.num_models}: a run benchmarks one model. */
    public static final int NUM_MODELS = 1;

    /**
     * Builds the LPG document for one stage in the {@link LpgDialect#SEED seed} dialect.
     *
     * @param stage the (merged) stage result
     * @param context run metadata
     * @param serverMetrics server-metric statistics of the stage window, or {@code null}
     * @return the document
     * @throws IllegalStateException if a non-finite number slipped into the document (a bug)
     */
    public static ObjectNode write(
            StageResult stage, ProfileContext context, ServerMetricsReport serverMetrics) {
        return write(stage, context, serverMetrics, LpgDialect.SEED);
    }

    /**
     * Builds the LPG document for one stage.
     *
     * <p>The two dialects differ only where LPG's own versions do: {@code metrics.throughput} and
     * {@code summary_stats.stats[].throughput.mean} (completed requests per second in {@code seed},
     * output tokens per second in {@code final}) and the server-metric statistics (strings in
     * {@code seed}, numbers in {@code final}). Both carry the keys LPG's last code and its readers
     * added ({@code throughput_rps}, {@code num_prompts_attempted}, {@code num_prompts_succeeded},
     * the six error counters, {@code config.num_models}, the {@code _TTFT} family in seconds,
     * {@code avg_per_token_latency_ms}, {@code avg_normalized_time_per_output_token_ms}) and {@code
     * dimensions.lpg_dialect} names the dialect.
     *
     * @param stage the (merged) stage result
     * @param context run metadata
     * @param serverMetrics server-metric statistics of the stage window, or {@code null}
     * @param dialect which meaning the conflicting keys have
     * @return the document
     * @throws IllegalStateException if a non-finite number slipped into the document (a bug)
     */
    public static ObjectNode write(
            StageResult stage,
            ProfileContext context,
            ServerMetricsReport serverMetrics,
            LpgDialect dialect) {
        boolean numbers = dialect == LpgDialect.FINAL;
        ObjectNode root = NODES.objectNode();
        ObjectNode metrics = root.putObject("metrics");
        double benchmarkTime = benchmarkTimeSeconds(stage);
        double requestsPerSecond = perSecond(stage.completed, benchmarkTime);
        double throughput =
                numbers ? perSecond(stage.totalOutputTokens, benchmarkTime) : requestsPerSecond;

        metrics.put(
                "num_prompts",
                stage.numPromptsRequested > 0 ? stage.numPromptsRequested : stage.sent);
        // LPG's last code: requests sent and requests that succeeded.
        metrics.put("num_prompts_attempted", stage.sent);
        metrics.put("num_prompts_succeeded", stage.completed);
        putRate(metrics, "request_rate", stage.requestedRate);
        ObjectNode serverMetricsNode = metrics.putObject("server_metrics");
        metrics.put("benchmark_time", benchmarkTime);
        metrics.put("throughput", throughput);
        // Completed requests per second in both dialects (LPG divided the prompts requested,
        // failed ones included).
        metrics.put("throughput_rps", requestsPerSecond);
        LpgErrorCounters.count(stage.errorsByClass).forEach(metrics::put);
        metrics.put("total_output_token", stage.totalOutputTokens);
        metrics.put(
                "output_tokens_per_min", 60.0 * perSecond(stage.totalOutputTokens, benchmarkTime));
        metrics.put("total_input_tokens", stage.totalInputTokens);
        metrics.put(
                "input_tokens_per_min", 60.0 * perSecond(stage.totalInputTokens, benchmarkTime));
        long totalTokens = stage.totalInputTokens + stage.totalOutputTokens;
        metrics.put("total_tokens", totalTokens);
        metrics.put("tokens_per_min", 60.0 * perSecond(totalTokens, benchmarkTime));
        putLpgFamily(metrics, "per_token_latency", stage.perTokenLatencySec);
        if (stage.ttftMs != null && stage.ttftMs.count() > 0) {
            // LPG's TTFT, in seconds, written by its client when it streamed; ours when the stage
            // measured one (streamed responses).
            putLpgFamily(metrics, "TTFT", stage.ttftMs, 1e-3);
        }
        putLpgFamily(metrics, "latency", stage.latencyMs);
        putLpgFamily(metrics, "per_output_token_latency", stage.perOutputTokenLatencyMs);
        putLpgFamily(metrics, "input_len", stage.inputLen);
        putLpgFamily(metrics, "output_len", stage.outputLen);
        // What inference-benchmark's analyze.py plots (its fork of LPG): the per-token latency in
        // ms, and latency over output tokens (our per_output_token_latency, already ms).
        metrics.put("avg_per_token_latency_ms", finite(stage.perTokenLatencySec.mean() * 1e3));
        metrics.put(
                "avg_normalized_time_per_output_token_ms",
                finite(stage.perOutputTokenLatencyMs.mean()));

        // Additive keys (not in LPG's 2024-09 schema).
        metrics.put("stage_index", stage.stageIndex);
        if (stage.concurrency != null) {
            metrics.put("max_concurrency", stage.concurrency);
        }
        metrics.put("requests_sent", stage.sent);
        metrics.put("completed", stage.completed);
        metrics.put("failures", stage.failed);
        metrics.put("warmup_requests_excluded", stage.warmupExcluded);
        if (stage.partial) {
            // Only a cancelled stage carries these, so complete profiles keep their key set.
            metrics.put("partial", true);
            metrics.put("cancelled_requests", stage.cancelledRequests);
        }
        Map<String, Long> errorsByClass =
                stage.errorsByClass == null ? Map.of() : stage.errorsByClass;
        ObjectNode errors = metrics.putObject("errors_by_class");
        for (String errorClass : StageResult.ERROR_CLASSES) {
            errors.put(errorClass, errorsByClass.getOrDefault(errorClass, 0L));
        }
        errorsByClass.forEach(
                (k, v) -> {
                    if (!errors.has(k)) {
                        errors.put(k, v);
                    }
                });
        metrics.put("achieved_rate", achievedRate(stage));
        // Sessions that start at a rate drew a schedule of session starts: it is in
        // metrics.conversation, not among the requests' figures.
        if (stage.due > 0 && stage.conversation == null) {
            // The schedule the stage drew (random arrivals draw fewer or more than the nominal
            // rate): what delivery is judged against.
            metrics.put("requests_due", stage.due);
            Double scheduled = scheduledRate(stage);
            if (scheduled != null) {
                metrics.put("scheduled_rate", scheduled);
            }
        }
        if (!ratesMeaningful(stage)) {
            // Only small stages carry it, so regular profiles keep their key set.
            metrics.put("rates_meaningful", false);
        }
        if (stage.requestsPerAddress != null) {
            ReplicaSections.putAddressShares(metrics, stage);
        }
        metrics.put("non_streamed_requests", stage.nonStreamedRequests);
        metrics.put("in_flight_peak", stage.inFlightPeak);
        if (stage.runnerCpu != null) {
            // The figures LoadDelivered judged (the most starved runner's): whether the client,
            // not the server, was the limit, and its CPU per request.
            RunnerCpu cpu = stage.runnerCpu;
            ObjectNode runnerCpu = metrics.putObject("runner_cpu");
            runnerCpu.put("cpu_seconds", finite(cpu.cpuSeconds));
            runnerCpu.put("wall_seconds", finite(cpu.wallSeconds));
            runnerCpu.put("available_cpus", finite(cpu.availableCpus));
            runnerCpu.put("utilization", finite(cpu.utilization()));
            putIfNotNull(runnerCpu, "run_queue_wait_seconds", cpu.runQueueWaitSeconds);
            putIfNotNull(runnerCpu, "throttled_seconds", cpu.throttledSeconds);
            if (cpu.runner != null) {
                runnerCpu.put("runner", cpu.runner);
            }
        }
        putExtendedFamily(metrics, "ttft_ms", stage.ttftMs);
        putExtendedFamily(metrics, "itl_ms", stage.itlMs);
        putExtendedFamily(metrics, "tpot_ms", stage.tpotMs);
        putExtendedFamily(metrics, "e2el_ms", stage.latencyMs);
        putExtendedFamily(metrics, "schedule_lag_ms", stage.scheduleLagMs);
        putExtendedFamily(metrics, "slot_wait_ms", stage.slotWaitMs);
        putHistograms(metrics, stage);
        boolean sloConfigured =
                stage.sloTtftMs != null || stage.sloTpotMs != null || stage.sloE2elMs != null;
        if (sloConfigured) {
            ObjectNode slo = metrics.putObject("slo");
            putIfNotNull(slo, "ttft_ms", stage.sloTtftMs);
            putIfNotNull(slo, "tpot_ms", stage.sloTpotMs);
            putIfNotNull(slo, "e2el_ms", stage.sloE2elMs);
            metrics.put("goodput_requests", stage.goodputRequests);
            metrics.put("goodput", perSecond(stage.goodputRequests, benchmarkTime));
            long attempted = stage.completed + stage.failed;
            metrics.put(
                    "slo_attainment",
                    attempted == 0 ? 0.0 : (double) stage.goodputRequests / attempted);
        }
        metrics.put("statistics_mode", stage.allExact() ? MODE_EXACT : MODE_HISTOGRAM);
        metrics.put("runner_count", stage.runnerCount);
        if (stage.outputTokenSource != null) {
            metrics.put("output_token_source", stage.outputTokenSource);
        }
        if (stage.inputTokenSource != null) {
            metrics.put("input_token_source", stage.inputTokenSource);
        }

        ArrayNode modelServerMetrics = NODES.arrayNode();
        if (serverMetrics != null) {
            for (ServerMetricSummary summary : serverMetrics.aggregate()) {
                serverMetricsNode.set(summary.name(), serverMetricStats(summary, null, numbers));
                modelServerMetrics.add(serverMetricStats(summary, summary.name(), numbers));
            }
            if (!serverMetrics.perReplica().isEmpty()) {
                ObjectNode byReplica = metrics.putObject("server_metrics_by_replica");
                serverMetrics
                        .perReplica()
                        .forEach(
                                (replica, summaries) -> {
                                    ObjectNode node = byReplica.putObject(replica);
                                    for (ServerMetricSummary s : summaries) {
                                        node.set(s.name(), serverMetricStats(s, null, numbers));
                                    }
                                });
            }
            ReplicaBalance balance = ReplicaBalance.of(serverMetrics);
            if (balance != null) {
                ReplicaSections.putReplicaBalance(metrics, balance);
            }
            PrefixCacheHits cache = PrefixCacheHits.of(serverMetrics);
            if (cache != null) {
                ReplicaSections.putPrefixCache(metrics, cache);
            }
            if (serverMetrics.coverage() != null) {
                ScrapeCoverage c = serverMetrics.coverage();
                ObjectNode coverage = metrics.putObject("server_metrics_coverage");
                coverage.put("expected", c.expected());
                coverage.put("succeeded", c.succeeded());
                coverage.put("failed", c.failed());
                coverage.put("replicas", c.replicas());
                coverage.put("ratio", finite(c.ratio()));
                ArrayNode errorList = coverage.putArray("errors");
                c.errors().forEach(errorList::add);
                if (!c.increasesLeftOut().isEmpty()) {
                    // Only then: a complete window's profile keeps its key set.
                    ArrayNode leftOut = coverage.putArray("increases_left_out");
                    c.increasesLeftOut().forEach(leftOut::add);
                }
            }
        }

        Instant start = stageStart(stage, context);
        ObjectNode dimensions = root.putObject("dimensions");
        dimensions.put("date", DATE_FORMAT.format(start));
        dimensions.put("backend", nullToEmpty(context.backend()));
        dimensions.put("model_id", nullToEmpty(context.modelId()));
        dimensions.put(
                "tokenizer_id",
                nullToEmpty(
                        context.tokenizerId() != null ? context.tokenizerId() : context.modelId()));
        putIfNotNull(dimensions, "run_name", context.runName());
        putIfNotNull(dimensions, "namespace", context.namespace());
        // Counted from 1, as status.stages[].stage and the CLI summary count; metrics.stage_index
        // is
        // the 0-based index.
        dimensions.put("stage", Integer.toString(stage.stageIndex + 1));
        dimensions.put("parallelism", Integer.toString(Math.max(1, context.parallelism())));
        putIfNotNull(dimensions, "runner_version", context.runnerVersion());
        dimensions.put("lpg_dialect", dialect.wireName());
        context.extraDimensions()
                .forEach(
                        (k, v) -> {
                            if (!dimensions.has(k) && v != null) {
                                dimensions.put(k, v);
                            }
                        });

        ObjectNode config = root.putObject("config");
        config.put("model", nullToEmpty(context.modelId()));
        // LPG's readers multiply request_rate by it (LPG ran one client per listed model).
        config.put("num_models", NUM_MODELS);
        config.put(
                "model_server",
                nullToEmpty(
                        context.modelServer() != null ? context.modelServer() : context.backend()));
        ObjectNode startTime = config.putObject("start_time");
        startTime.put("seconds", start.getEpochSecond());
        startTime.put("nanos", start.getNano());
        if (stage.rampUp != null) {
            RampProfileJson.write(stage.rampUp, metrics, config);
        }
        if (stage.byModel != null) {
            ObjectNode byModel = metrics.putObject("by_model");
            for (ModelMixProfile.Model m : stage.byModel.models) {
                ObjectNode node = byModel.putObject(m.name());
                node.put("share", m.share());
                node.put("requests_sent", m.sent());
                node.put("completed", m.completed());
                node.put("failures", m.failed());
                node.put("output_tokens", m.outputTokens());
                RampProfileJson.putLatencies(
                        node, m.ttftP50Ms(), m.ttftP99Ms(), m.e2elP50Ms(), m.e2elP99Ms());
                if (m.slo() != null) {
                    ObjectNode slo = node.putObject("slo");
                    RampProfileJson.putIfPresent(slo, "ttft_ms", m.slo().ttftMs());
                    RampProfileJson.putIfPresent(slo, "tpot_ms", m.slo().tpotMs());
                    RampProfileJson.putIfPresent(slo, "e2el_ms", m.slo().e2elMs());
                    slo.put("min_attainment", m.slo().minAttainment());
                    slo.put("good_requests", m.slo().good());
                    if (m.sloAttainment() != null) {
                        slo.put("attainment", m.sloAttainment());
                        slo.put("met", m.sloAttainment() >= m.slo().minAttainment());
                    }
                }
            }
        }
        if (stage.conversation != null) {
            ConversationProfileJson.write(
                    stage.conversation, stage.due, scheduledRate(stage), metrics);
        }

        ObjectNode stats = root.putObject("summary_stats").putArray("stats").addObject();
        putRate(stats, "request_rate", stage.requestedRate);
        stats.set("request_latency", lowerCaseStats(stage.latencyMs));
        stats.putObject("throughput").put("mean", throughput);
        stats.set("input_length", lowerCaseStats(stage.inputLen));
        stats.set("output_length", lowerCaseStats(stage.outputLen));
        stats.set("tpot", lowerCaseStats(stage.perOutputTokenLatencyMs));
        stats.set("model_server_metrics", modelServerMetrics);

        requireFinite(root, "");
        return root;
    }

    /**
     * Builds the document without server metrics.
     *
     * @param stage the (merged) stage result
     * @param context run metadata
     * @return the document
     */
    public static ObjectNode write(StageResult stage, ProfileContext context) {
        return write(stage, context, null);
    }

    /**
     * Longest name {@link #fileName} gives, in UTF-8 bytes: common file systems allow 255, and the
     * rest is room for what writers append (the runner's {@code -partial} and {@code -2}, the
     * operator's {@code -stage12} in a ConfigMap key of at most 253 characters).
     */
    public static final int MAX_FILE_NAME_BYTES = 200;

    /**
     * LPG's file name for a stage's profile: {@code <backend>-<rate>qps-<model
     * basename>-<date>.json}, with the rate as Python prints a float ({@code 20.0}, {@code inf})
     * and LPG's date format; a ramped stage's rate is its start and end rate ({@code 5.0-50.0}). A
     * name is one path segment of at most {@link #MAX_FILE_NAME_BYTES} bytes: control characters
     * and path separators in the model id become {@code _}, and a model basename too long for the
     * bound is cut and followed by a hash of the whole basename (so two ids that differ only beyond
     * the cut keep different names). The profile itself keeps the id as given.
     *
     * @param stage the stage result (rate and first dispatch)
     * @param context run metadata
     * @return the file name
     */
    public static String fileName(StageResult stage, ProfileContext context) {
        String prefix =
                truncateUtf8(safeFileNamePart(nullToEmpty(context.backend())), 32)
                        + "-"
                        + (stage.rampUp == null
                                ? RequestRate.pythonString(stage.requestedRate)
                                : RequestRate.pythonString(stage.rampUp.startRate)
                                        + "-"
                                        + RequestRate.pythonString(stage.rampUp.endRate))
                        + "qps-";
        String suffix = "-" + DATE_FORMAT.format(stageStart(stage, context)) + ".json";
        String basename = context.modelBasename();
        String model = safeFileNamePart(basename);
        int room = MAX_FILE_NAME_BYTES - utf8Length(prefix) - utf8Length(suffix);
        if (utf8Length(model) > room) {
            String hash = "-" + shortHash(basename);
            model = truncateUtf8(model, Math.max(1, room - hash.length())) + hash;
        }
        return prefix + model + suffix;
    }

    /**
     * A piece of a file name: escape sequences removed (as on the terminal), then control and
     * line-separator characters, unpaired surrogates and path separators replaced by {@code _}.
     */
    private static String safeFileNamePart(String text) {
        StringBuilder out = new StringBuilder(text.length());
        io.inferencebench.profile.text.TerminalText.withoutSequences(text)
                .codePoints()
                .forEach(
                        cp -> {
                            int type = Character.getType(cp);
                            boolean unsafe =
                                    Character.isISOControl(cp)
                                            || cp == '/'
                                            || cp == '\\'
                                            || type == Character.LINE_SEPARATOR
                                            || type == Character.PARAGRAPH_SEPARATOR
                                            || type == Character.SURROGATE;
                            if (unsafe) {
                                out.append('_');
                            } else {
                                out.appendCodePoint(cp);
                            }
                        });
        return out.toString();
    }

    private static int utf8Length(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }

    /** The longest prefix of {@code text} of at most {@code maxBytes} UTF-8 bytes, whole chars. */
    private static String truncateUtf8(String text, int maxBytes) {
        int bytes = 0;
        int end = 0;
        while (end < text.length()) {
            int cp = text.codePointAt(end);
            int size = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (bytes + size > maxBytes) {
                break;
            }
            bytes += size;
            end += Character.charCount(cp);
        }
        return text.substring(0, end);
    }

    /** Eight hex digits of the text's SHA-256. */
    private static String shortHash(String text) {
        try {
            byte[] digest =
                    MessageDigest.getInstance("SHA-256")
                            .digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    /**
     * Pretty-prints a document as JSON.
     *
     * @param document a document from {@link #write}
     * @return the JSON text
     */
    public static String toJson(JsonNode document) {
        requireFinite(document, "");
        try {
            return MAPPER.writeValueAsString(document);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize profile", e);
        }
    }

    /**
     * The wall-clock window of a stage in seconds: first dispatch to last completion (LPG's {@code
     * benchmark_time}).
     *
     * @param stage the stage
     * @return the duration, {@code 0} when nothing completed
     */
    public static double benchmarkTimeSeconds(StageResult stage) {
        if (stage.firstDispatchEpochNanos == 0
                || stage.lastCompletionEpochNanos <= stage.firstDispatchEpochNanos) {
            return 0.0;
        }
        return (stage.lastCompletionEpochNanos - stage.firstDispatchEpochNanos) / 1e9;
    }

    /**
     * Achieved dispatch rate: requests sent per second between the first and the last dispatch
     * ({@code (sent - 1)} intervals over that span).
     *
     * @param stage the stage
     * @return the rate, {@code 0} with fewer than two dispatches
     */
    public static double achievedRate(StageResult stage) {
        long span = stage.lastDispatchEpochNanos - stage.firstDispatchEpochNanos;
        if (stage.sent < 2 || stage.firstDispatchEpochNanos == 0 || span <= 0) {
            return 0.0;
        }
        return (stage.sent - 1) / (span / 1e9);
    }

    /**
     * The rate of the schedule the stage drew: {@code (due - 1)} intervals over the span from its
     * first to its last due instant. For constant arrivals it is the requested rate; for random
     * arrivals the rate this draw asked for, which the achieved rate is judged against.
     *
     * @param stage the stage
     * @return the rate, {@code null} without a schedule of at least two requests
     */
    public static Double scheduledRate(StageResult stage) {
        long span = stage.lastDueEpochNanos - stage.firstDueEpochNanos;
        if (stage.due < 2 || stage.firstDueEpochNanos == 0 || span <= 0) {
            return null;
        }
        return (stage.due - 1) / (span / 1e9);
    }

    /**
     * Whether the stage sent enough requests ({@link #MIN_REQUESTS_FOR_RATES}) for its achieved
     * rate and throughput to be meaningful.
     *
     * @param stage the stage
     * @return {@code false} for a stage too small to have a meaningful rate
     */
    public static boolean ratesMeaningful(StageResult stage) {
        return stage.sent >= MIN_REQUESTS_FOR_RATES;
    }

    /**
     * Formats a server-metric value as LPG does (Prometheus' shortest decimal: {@code 1}, {@code
     * 0.80625}, {@code 121.60000000000001}).
     *
     * @param value a finite value
     * @return the decimal string
     */
    public static String formatServerValue(double value) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("server metric value must be finite, got " + value);
        }
        if (value == 0.0) {
            return "0";
        }
        return new BigDecimal(Double.toString(value)).stripTrailingZeros().toPlainString();
    }

    private static Instant stageStart(StageResult stage, ProfileContext context) {
        if (stage.firstDispatchEpochNanos > 0) {
            return Instant.ofEpochSecond(
                    stage.firstDispatchEpochNanos / 1_000_000_000L,
                    stage.firstDispatchEpochNanos % 1_000_000_000L);
        }
        return context.startTime() != null ? context.startTime() : Instant.EPOCH;
    }

    /**
     * A server metric's statistics: strings as in the seed's example, or JSON numbers as LPG's last
     * code wrote them ({@code numbers}).
     */
    private static ObjectNode serverMetricStats(
            ServerMetricSummary s, String name, boolean numbers) {
        ObjectNode node = NODES.objectNode();
        if (name != null) {
            node.put("Name", name);
        }
        putServerValue(node, "Mean", s.mean(), numbers);
        putServerValue(node, "Median", s.median(), numbers);
        putServerValue(node, "Sd", s.sd(), numbers);
        putServerValue(node, "Min", s.min(), numbers);
        putServerValue(node, "Max", s.max(), numbers);
        putServerValue(node, "P90", s.p90(), numbers);
        putServerValue(node, "P99", s.p99(), numbers);
        if (s.type() == MetricType.COUNTER) {
            putServerValue(node, "Increase", s.increase(), numbers);
            putServerValue(node, "Rate", s.rate(), numbers);
        } else if (s.type() == MetricType.HISTOGRAM) {
            putServerValue(node, "Count", s.increase(), numbers);
        }
        if (s.nanSamples() > 0) {
            // JSON has no NaN: the samples the server reported as NaN are counted instead of
            // dropped (only then, so other profiles keep their key set).
            if (numbers) {
                node.put("NanSamples", s.nanSamples());
            } else {
                node.put("NanSamples", Integer.toString(s.nanSamples()));
            }
        }
        if (s.type() != null) {
            node.put("Type", s.type().textName());
        }
        return node;
    }

    private static void putServerValue(ObjectNode node, String key, Double value, boolean numbers) {
        if (value != null && Double.isFinite(value)) {
            if (numbers) {
                node.put(key, value);
            } else {
                node.put(key, formatServerValue(value));
            }
        }
    }

    private static void putLpgFamily(ObjectNode metrics, String suffix, MetricRecorder r) {
        putLpgFamily(metrics, suffix, r, 1.0);
    }

    /** The family's statistics times {@code scale} (a change of unit keeps every statistic). */
    private static void putLpgFamily(
            ObjectNode metrics, String suffix, MetricRecorder r, double scale) {
        metrics.put("avg_" + suffix, finite(r.mean() * scale));
        metrics.put("median_" + suffix, finite(r.median() * scale));
        metrics.put("sd_" + suffix, finite(r.sd() * scale));
        metrics.put("min_" + suffix, finite(r.min() * scale));
        metrics.put("max_" + suffix, finite(r.max() * scale));
        metrics.put("p90_" + suffix, finite(r.percentile(90) * scale));
        metrics.put("p99_" + suffix, finite(r.percentile(99) * scale));
    }

    private static void putExtendedFamily(ObjectNode metrics, String suffix, MetricRecorder r) {
        putLpgFamily(metrics, suffix, r);
        metrics.put("p95_" + suffix, finite(r.percentile(95)));
        metrics.put("p999_" + suffix, finite(r.percentile(99.9)));
        metrics.put("count_" + suffix, r.count());
    }

    /**
     * The latency distributions themselves (compact {@link
     * io.inferencebench.profile.stats.RecorderSnapshot}s, a few kilobytes each), so that two
     * profiles can be compared with a statistical test and not only by their percentiles.
     */
    private static void putHistograms(ObjectNode metrics, StageResult stage) {
        ObjectNode histograms = NODES.objectNode();
        putHistogram(histograms, "ttft_ms", stage.ttftMs);
        putHistogram(histograms, "itl_ms", stage.itlMs);
        putHistogram(histograms, "tpot_ms", stage.tpotMs);
        putHistogram(histograms, "e2el_ms", stage.latencyMs);
        if (!histograms.isEmpty()) {
            metrics.set(HISTOGRAMS_KEY, histograms);
        }
    }

    private static void putHistogram(ObjectNode histograms, String key, MetricRecorder r) {
        if (r != null && r.count() > 0) {
            histograms.set(key, MAPPER.valueToTree(r.snapshot()));
        }
    }

    private static ObjectNode lowerCaseStats(MetricRecorder r) {
        ObjectNode node = NODES.objectNode();
        node.put("mean", finite(r.mean()));
        node.put("median", finite(r.median()));
        node.put("sd", finite(r.sd()));
        node.put("min", finite(r.min()));
        node.put("max", finite(r.max()));
        node.put("p90", finite(r.percentile(90)));
        node.put("p99", finite(r.percentile(99)));
        return node;
    }

    private static void putRate(ObjectNode node, String key, double rate) {
        if (RequestRate.isUnbounded(rate)) {
            node.put(key, RequestRate.UNBOUNDED);
        } else {
            node.put(key, finite(rate));
        }
    }

    private static void putIfNotNull(ObjectNode node, String key, Double value) {
        if (value != null) {
            node.put(key, finite(value));
        }
    }

    private static void putIfNotNull(ObjectNode node, String key, String value) {
        if (value != null) {
            node.put(key, value);
        }
    }

    private static double perSecond(long amount, double seconds) {
        return seconds > 0 ? amount / seconds : 0.0;
    }

    /** LPG reports 0 for statistics of empty sets; anything else non-finite is a bug upstream. */
    static double finite(double value) {
        if (!Double.isFinite(value)) {
            throw new IllegalStateException("non-finite value in profile: " + value);
        }
        return value;
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    private static void requireFinite(JsonNode node, String path) {
        if (node.isNumber()
                && node.isFloatingPointNumber()
                && !Double.isFinite(node.doubleValue())) {
            throw new IllegalStateException("non-finite number at " + path);
        }
        if (node.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> e = fields.next();
                requireFinite(e.getValue(), path + "/" + e.getKey());
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                requireFinite(node.get(i), path + "/" + i);
            }
        }
    }
}
