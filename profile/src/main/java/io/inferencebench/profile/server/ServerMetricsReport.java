package io.inferencebench.profile.server;

import io.inferencebench.profile.prom.MetricType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Server metrics of one stage window: the aggregate over replicas (what LPG's {@code
 * server_metrics} holds), the per-replica breakdown and the scrape coverage.
 *
 * @param aggregate one summary per metric, aggregated over replicas, in catalog order
 * @param perReplica the same statistics per replica (replica id, e.g. pod name or address)
 * @param coverage how many scrapes succeeded
 */
public record ServerMetricsReport(
        List<ServerMetricSummary> aggregate,
        Map<String, List<ServerMetricSummary>> perReplica,
        ScrapeCoverage coverage) {

    /** Defensive copies. */
    public ServerMetricsReport {
        aggregate = aggregate == null ? List.of() : List.copyOf(aggregate);
        perReplica =
                perReplica == null
                        ? Map.of()
                        : java.util.Collections.unmodifiableMap(
                                new java.util.TreeMap<>(perReplica));
    }

    /**
     * A report with no metrics, e.g. when scraping was disabled.
     *
     * @return the empty report
     */
    public static ServerMetricsReport empty() {
        return new ServerMetricsReport(List.of(), Map.of(), null);
    }

    /**
     * This report without the window deltas (counter increases and rates, histogram and summary
     * statistics) of replicas whose scrapes do not reach back to the window start, nor the
     * aggregate deltas they would be part of: an increase measured from a scrape taken after the
     * server had already served part of the stage leaves that part out, and a number that is too
     * small by an unknown amount is worse than none. Gauges stay (they sample the window). The
     * reason goes into the coverage errors.
     *
     * @param replicas the replicas without a scrape near the window start
     * @param reason why, for the coverage errors
     * @return the report without those deltas; this report when {@code replicas} is empty
     */
    public ServerMetricsReport withoutWindowDeltas(Set<String> replicas, String reason) {
        if (replicas.isEmpty()) {
            return this;
        }
        Map<String, List<ServerMetricSummary>> keptPerReplica = new TreeMap<>();
        perReplica.forEach(
                (replica, summaries) ->
                        keptPerReplica.put(
                                replica,
                                replicas.contains(replica) ? gaugesOnly(summaries) : summaries));
        ScrapeCoverage kept = coverage;
        if (coverage != null) {
            List<String> errors = new ArrayList<>(coverage.errors());
            errors.add(reason);
            List<String> leftOut = new ArrayList<>(coverage.increasesLeftOut());
            leftOut.addAll(replicas);
            kept =
                    new ScrapeCoverage(
                            coverage.expected(),
                            coverage.succeeded(),
                            coverage.failed(),
                            coverage.replicas(),
                            errors,
                            coverage.succeededByReplica(),
                            leftOut);
        }
        return new ServerMetricsReport(gaugesOnly(aggregate), keptPerReplica, kept);
    }

    private static List<ServerMetricSummary> gaugesOnly(List<ServerMetricSummary> summaries) {
        return summaries.stream().filter(s -> s.type() == MetricType.GAUGE).toList();
    }
}
