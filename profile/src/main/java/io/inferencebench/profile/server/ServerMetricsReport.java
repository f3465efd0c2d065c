package io.inferencebench.profile.server;

import java.util.List;
import java.util.Map;

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
}
