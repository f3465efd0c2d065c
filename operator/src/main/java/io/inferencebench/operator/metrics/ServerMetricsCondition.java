package io.inferencebench.operator.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import java.util.List;
import java.util.Locale;

/**
 * Decides the ServerMetricsCollected condition from the stage profiles' {@code
 * metrics.server_metrics_coverage}, so it is the same after an operator restart. Never affects the
 * run's phase: missing server metrics only make this condition False.
 */
public final class ServerMetricsCondition {

    /** Below this fraction of expected scrapes in some stage the condition is LowCoverage. */
    public static final double MIN_COVERAGE = 0.8;

    public static final String COLLECTED = "Collected";
    public static final String DISABLED = "Disabled";
    public static final String SCRAPES_FAILED = "ScrapesFailed";
    public static final String PROMETHEUS_QUERY_FAILED = "PrometheusQueryFailed";
    public static final String LOW_COVERAGE = "LowCoverage";
    public static final String INCREASES_LEFT_OUT = "IncreasesLeftOut";

    /** The decided condition. */
    public record Decision(boolean status, String reason, String message) {}

    private ServerMetricsCondition() {}

    /**
     * Decides the condition.
     *
     * @param metrics the run's metrics spec
     * @param profiles the stage profiles in stage order
     * @param stages the number of stages that finished
     * @return status, reason and message
     */
    public static Decision decide(MetricsSpec metrics, List<JsonNode> profiles, int stages) {
        if (Boolean.FALSE.equals(metrics.getEnabled())) {
            return new Decision(false, DISABLED, "spec.metrics.enabled is false");
        }
        boolean fromPrometheus = metrics.getPrometheus() != null;
        String source = fromPrometheus ? "Prometheus" : "direct scraping";
        long succeeded = 0;
        long expected = 0;
        int empty = 0;
        int firstEmpty = 0;
        String firstError = null;
        int lowest = 0;
        double lowestRatio = 2;
        List<Integer> leftOutStages = new java.util.ArrayList<>();
        String firstLeftOut = null;
        for (int i = 0; i < stages; i++) {
            JsonNode c =
                    i < profiles.size()
                            ? profiles.get(i).path("metrics").path("server_metrics_coverage")
                            : com.fasterxml.jackson.databind.node.MissingNode.getInstance();
            int ok = c.path("succeeded").asInt(0);
            int failed = c.path("failed").asInt(0);
            int want = c.path("expected").asInt(0);
            int denominator = want > 0 ? want : ok + failed;
            succeeded += ok;
            expected += Math.max(denominator, ok);
            double ratio = denominator == 0 ? 0 : Math.min(1.0, (double) ok / denominator);
            if (ok == 0) {
                empty++;
                if (firstEmpty == 0) {
                    firstEmpty = i + 1;
                    JsonNode errors = c.path("errors");
                    firstError = errors.size() > 0 ? errors.get(0).asText() : null;
                }
            }
            JsonNode leftOut = c.path("increases_left_out");
            if (leftOut.size() > 0) {
                leftOutStages.add(i + 1);
                if (firstLeftOut == null) {
                    List<String> replicas = new java.util.ArrayList<>();
                    leftOut.forEach(r -> replicas.add(r.asText()));
                    JsonNode errors = c.path("errors");
                    String reason = errors.size() > 0 ? errors.get(errors.size() - 1).asText() : "";
                    firstLeftOut =
                            "stage "
                                    + (i + 1)
                                    + " replica(s) "
                                    + String.join(", ", replicas)
                                    + (reason.isEmpty() ? "" : ": " + reason);
                }
            }
            if (ratio < lowestRatio) {
                lowestRatio = ratio;
                lowest = i + 1;
            }
        }
        String totals =
                String.format(
                        Locale.ROOT,
                        "%d of %d expected scrape(s) (%.0f%%) over %d stage(s)",
                        succeeded,
                        expected,
                        expected == 0 ? 0.0 : 100.0 * Math.min(1.0, (double) succeeded / expected),
                        stages);
        if (stages == 0) {
            return new Decision(
                    false,
                    fromPrometheus ? PROMETHEUS_QUERY_FAILED : SCRAPES_FAILED,
                    "no stage finished, so no server metrics were collected");
        }
        if (empty > 0) {
            String hint =
                    fromPrometheus
                            ? "check spec.metrics.prometheus (url, selector, bearer token)"
                            : "check spec.metrics.port and path";
            return new Decision(
                    false,
                    fromPrometheus ? PROMETHEUS_QUERY_FAILED : SCRAPES_FAILED,
                    "no server metrics from "
                            + source
                            + " in "
                            + empty
                            + " of "
                            + stages
                            + " stage window(s), first stage "
                            + firstEmpty
                            + (firstError == null ? "" : ": " + firstError)
                            + "; "
                            + hint);
        }
        if (lowestRatio < MIN_COVERAGE) {
            return new Decision(
                    false,
                    LOW_COVERAGE,
                    String.format(
                            Locale.ROOT,
                            "server metrics from %s cover stage %d only %.0f%% (below %.0f%%); %s",
                            source,
                            lowest,
                            100 * lowestRatio,
                            100 * MIN_COVERAGE,
                            totals));
        }
        if (!leftOutStages.isEmpty()) {
            // The gauges of those windows are kept, but their TTFT, ITL and token counts from the
            // server are not: a True condition would let a reader take them as complete.
            return new Decision(
                    false,
                    INCREASES_LEFT_OUT,
                    "server metrics from "
                            + source
                            + ": counter and histogram increases left out in stage(s) "
                            + leftOutStages.stream()
                                    .map(String::valueOf)
                                    .collect(java.util.stream.Collectors.joining(", "))
                            + " (gauges kept); first: "
                            + firstLeftOut
                            + "; "
                            + totals);
        }
        return new Decision(
                true,
                COLLECTED,
                "server metrics from " + source + " in every stage window: " + totals);
    }
}
