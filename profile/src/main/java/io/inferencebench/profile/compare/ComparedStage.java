package io.inferencebench.profile.compare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.stats.HistogramBucket;
import io.inferencebench.profile.stats.MetricRecorder;
import io.inferencebench.profile.stats.RecorderSnapshot;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What a comparison reads from one stage's profile. */
final class ComparedStage {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * Achieved rate below this share of the drawn schedule's rate (the requested one for a profile
     * without it): the load was not delivered. The runner's own judgement's limit ({@link
     * LoadVerdict#MAX_RATE_SHORTFALL}).
     */
    private static final double MIN_DELIVERED_SHARE = 1 - LoadVerdict.MAX_RATE_SHORTFALL;

    final String label;
    final JsonNode metrics;
    final double rate;
    final int stageIndex;
    final Map<Metric, List<HistogramBucket>> histograms = new EnumMap<>(Metric.class);

    /** The {@code source} of a stage mapped from another tool's file, else missing. */
    JsonNode source = com.fasterxml.jackson.databind.node.MissingNode.getInstance();

    /** The profile's {@code dimensions}, else missing. */
    JsonNode dimensions = com.fasterxml.jackson.databind.node.MissingNode.getInstance();

    private ComparedStage(String label, JsonNode metrics, double rate, int stageIndex) {
        this.label = label;
        this.metrics = metrics;
        this.rate = rate;
        this.stageIndex = stageIndex;
    }

    /** Whether the stage comes from another tool's result file. */
    boolean isOtherTool() {
        String kind = source.path("kind").asText("");
        return !kind.isEmpty() && !kind.equals("inferencebench");
    }

    /** The stage's file, with its tool and version when another tool wrote it. */
    String who() {
        if (!isOtherTool()) {
            return label;
        }
        String version = source.path("version").asText("");
        return source.path("tool").asText()
                + (version.isEmpty() ? "" : " " + version)
                + " ("
                + label
                + ")";
    }

    String noRateReason() {
        String why = source.path("no_rate").asText("");
        return why.isEmpty() ? "" : " (" + why + ")";
    }

    /** Why the stage has no value of a statistic. */
    String absentReason(Metric m, String stat) {
        if (m.isLatency()) {
            Long count = count("count_" + m.family());
            if (count != null && count == 0) {
                return label + " measured no " + m.key() + " value";
            }
            if (!hasSuccess()) {
                return label + " has no successful request";
            }
        }
        String what = m.isLatency() ? m.key() + " " + stat : m.key().replace('_', ' ');
        if (isOtherTool()) {
            return who() + " does not report " + what;
        }
        String key =
                m.isLatency()
                        ? (stat.equals("p50") ? "median" : stat) + "_" + m.family()
                        : m == Metric.OUTPUT_THROUGHPUT ? "output_tokens_per_min" : m.key();
        return label + " has no metrics." + key;
    }

    static ComparedStage of(String label, JsonNode document) {
        JsonNode metrics = document == null ? null : document.get("metrics");
        if (metrics == null || !metrics.isObject()) {
            throw new IllegalArgumentException(
                    label + ": not an LPG profile (no \"metrics\" object)");
        }
        JsonNode rateNode = metrics.get("request_rate");
        double rate;
        if (rateNode == null || rateNode.isNull()) {
            rate = Double.NaN;
        } else if (rateNode.isNumber()) {
            rate = rateNode.doubleValue();
        } else {
            try {
                rate = RequestRate.parse(rateNode.asText());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        label
                                + ": metrics.request_rate is '"
                                + rateNode.asText()
                                + "', not a number or \"inf\"");
            }
        }
        JsonNode index = metrics.get("stage_index");
        ComparedStage data =
                new ComparedStage(
                        label, metrics, rate, index != null && index.isInt() ? index.asInt() : 0);
        if (document.path("source").isObject()) {
            data.source = document.get("source");
        }
        if (document.path("dimensions").isObject()) {
            data.dimensions = document.get("dimensions");
        }
        JsonNode histograms = metrics.get(LpgProfileWriter.HISTOGRAMS_KEY);
        if (histograms != null && histograms.isObject()) {
            for (Metric m : Metric.values()) {
                JsonNode h = m.family() == null ? null : histograms.get(m.family());
                if (h != null && h.isObject()) {
                    try {
                        RecorderSnapshot snapshot = MAPPER.treeToValue(h, RecorderSnapshot.class);
                        data.histograms.put(
                                m, MetricRecorder.fromSnapshot(snapshot).histogramBuckets());
                    } catch (com.fasterxml.jackson.core.JsonProcessingException
                            | IllegalArgumentException e) {
                        throw new IllegalArgumentException(
                                label
                                        + ": metrics."
                                        + LpgProfileWriter.HISTOGRAMS_KEY
                                        + "."
                                        + m.family()
                                        + " is not a histogram snapshot: "
                                        + e.getMessage());
                    }
                }
            }
        }
        return data;
    }

    String describe() {
        return (stageIndex + 1) + " (" + keyText(rate, concurrency()) + ", " + label + ")";
    }

    /** The concurrency of a closed-loop stage (or the cap of an open-loop one), or null. */
    Integer concurrency() {
        JsonNode n = metrics.get("max_concurrency");
        return n != null && n.canConvertToInt() && n.isIntegralNumber() ? n.asInt() : null;
    }

    /**
     * Whether any request succeeded: {@code completed}, else the count of end-to-end latencies; a
     * profile with neither (another writer's) is taken to have successes.
     */
    boolean hasSuccess() {
        Long completed = count("completed");
        if (completed == null) {
            completed = count("count_" + Metric.E2EL.family());
        }
        return completed == null || completed > 0;
    }

    Double number(String key) {
        JsonNode n = metrics.get(key);
        return n != null && n.isNumber() && Double.isFinite(n.doubleValue())
                ? n.doubleValue()
                : null;
    }

    Long count(String key) {
        JsonNode n = metrics.get(key);
        return n != null && n.canConvertToLong() && n.isIntegralNumber() ? n.asLong() : null;
    }

    Long attempted() {
        Long completed = count("completed");
        Long failures = count("failures");
        return completed == null ? null : completed + (failures == null ? 0 : failures);
    }

    Double latency(Metric m, String stat) {
        String prefix = stat.equals("p50") ? "median" : stat;
        Double v = number(prefix + "_" + m.family());
        if (v == null && m == Metric.E2EL) {
            // LPG's own key for the same statistic (profiles of other writers)
            v = number(prefix + "_latency");
        }
        if (v != null
                && m.family() != null
                && count("count_" + m.family()) != null
                && count("count_" + m.family()) == 0) {
            return null; // empty family: LPG's 0 is not a measurement
        }
        return v;
    }

    /**
     * How many independent values a latency histogram holds: one per request. The inter-token gaps
     * of a request are not independent (they share its hiccups), so ITL counts its requests, not
     * its gaps.
     */
    long independentValues(Metric m) {
        if (m != Metric.ITL) {
            return 0;
        }
        Long requests = count("count_ttft_ms");
        if (requests == null || requests == 0) {
            requests = count("completed");
        }
        return requests == null ? 0 : requests;
    }

    Double outputThroughput() {
        Double perMin = number("output_tokens_per_min");
        return perMin == null ? null : perMin / 60.0;
    }

    String undelivered() {
        Double achieved = number("achieved_rate");
        JsonNode meaningful = metrics.get("rates_meaningful");
        if (achieved == null
                || !Double.isFinite(rate)
                || (meaningful != null && !meaningful.asBoolean(true))) {
            return null;
        }
        // A random schedule (Poisson, gamma) draws fewer or more arrivals than the nominal rate:
        // the client is held to the schedule it drew, as the runner judges it; to the nominal
        // rate only where the profile has no schedule (another tool's file).
        Double drawn = number("scheduled_rate");
        boolean hasDraw = drawn != null && drawn > 0;
        if (achieved >= MIN_DELIVERED_SHARE * (hasDraw ? drawn : rate)) {
            return null;
        }
        String against =
                hasDraw
                        ? String.format(
                                Locale.ROOT,
                                "req/s of the %.3g its schedule drew (%s requested)",
                                drawn,
                                rateText(rate))
                        : "of " + rateText(rate) + " req/s requested";
        return String.format(
                Locale.ROOT,
                "%s: achieved %.3g %s: the load was not delivered, its latencies do not describe"
                        + " that rate",
                label,
                achieved,
                against);
    }

    /**
     * The prefix-cache state the stage declared ({@code cold} when every server was reset before
     * it, {@code warm} when each was then sent the shared prefixes, {@code undeclared} when one
     * refused), {@code "not declared"} when the run did not ask.
     */
    String cacheState() {
        String state = dimensions.path("prefix_cache").asText("");
        return state.isEmpty() ? "not declared" : state;
    }

    /** The prefix-cache hit rate the servers counted in the stage window, or {@code null}. */
    Double cacheHitRate() {
        JsonNode rate = metrics.path("prefix_cache").path("hit_rate");
        return rate.isNumber() ? rate.doubleValue() : null;
    }

    /** The rate (or a closed-loop stage's concurrency) that pairs this stage, as text. */
    String keyText() {
        return keyText(rate, concurrency());
    }

    /** {@code 5.0 req/s}; a closed-loop stage {@code concurrency 8}. */
    static String keyText(double rate, Integer concurrency) {
        return !Double.isFinite(rate) && concurrency != null
                ? "concurrency " + concurrency
                : rateText(rate) + " req/s";
    }

    static String rateText(double rate) {
        return Double.isNaN(rate) ? "?" : RequestRate.pythonString(rate);
    }
}
