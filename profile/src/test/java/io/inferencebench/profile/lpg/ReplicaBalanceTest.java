package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The verdict on how evenly replicas served a stage, from their own counters. */
class ReplicaBalanceTest {

    private static ServerMetricSummary served(double n) {
        return ServerMetricSummary.counter("vllm:request_success_total", n / 10, n, 10);
    }

    private static ServerMetricSummary gauge() {
        return new ServerMetricSummary(
                "vllm:num_requests_running",
                MetricType.GAUGE,
                1.0,
                1.0,
                0.0,
                1.0,
                1.0,
                1.0,
                1.0,
                null,
                null,
                10);
    }

    /** Replicas with their served counts ({@code null}: scraped, no counter), scrapes each. */
    private static ServerMetricsReport report(
            Map<String, Double> counts, Map<String, Integer> scrapes, List<String> leftOut) {
        Map<String, List<ServerMetricSummary>> perReplica = new LinkedHashMap<>();
        counts.forEach(
                (replica, n) ->
                        perReplica.put(
                                replica,
                                n == null ? List.of(gauge()) : List.of(gauge(), served(n))));
        return new ServerMetricsReport(
                List.of(),
                perReplica,
                new ScrapeCoverage(30, 30, 0, counts.size(), List.of(), scrapes, leftOut));
    }

    private static ServerMetricsReport report(Map<String, Double> counts) {
        Map<String, Integer> scrapes = new LinkedHashMap<>();
        counts.keySet().forEach(r -> scrapes.put(r, 10));
        return report(counts, scrapes, List.of());
    }

    private static Map<String, Double> counts(Object... replicaAndCount) {
        Map<String, Double> counts = new LinkedHashMap<>();
        for (int i = 0; i < replicaAndCount.length; i += 2) {
            Object n = replicaAndCount[i + 1];
            counts.put((String) replicaAndCount[i], n == null ? null : ((Number) n).doubleValue());
        }
        return counts;
    }

    @Test
    void evenSharesAreBalancedAndUnevenOnesNameTheReplicas() {
        ReplicaBalance even = ReplicaBalance.of(report(counts("a", 110, "b", 100, "c", 120)));
        assertThat(even.balanced()).isTrue();
        assertThat(even.reason()).isNull();
        assertThat(even.metric()).isEqualTo("vllm:request_success_total");
        assertThat(even.shares().get("a")).isCloseTo(110.0 / 330, within(1e-12));

        // the 128 req/s row: 220 / 120 / 140
        ReplicaBalance skewed = ReplicaBalance.of(report(counts("a", 220, "b", 120, "c", 140)));
        assertThat(skewed.balanced()).isFalse();
        assertThat(skewed.reason())
                .isEqualTo("replica a served 220, 1.83x replica b's 120 (more than 1.25x)");
    }

    @Test
    void aReplicaThatServedNothingCountsAsZeroAndIsJudgedEarly() {
        // 60 / 60 / 0 at 2 req/s: the third replica has no counter sample at all
        ReplicaBalance b = ReplicaBalance.of(report(counts("a", 60, "b", 60, "c", null)));
        assertThat(b.served()).containsEntry("c", 0L);
        assertThat(b.balanced()).isFalse();
        assertThat(b.reason())
                .isEqualTo("replica c served nothing while a served 60 (an even share: 40)");
        // too few for a ratio, not too few for a zero: no verdict on 20 / 10
        ReplicaBalance few = ReplicaBalance.of(report(counts("a", 20, "b", 10)));
        assertThat(few.balanced()).isNull();
        assertThat(few.reason()).isEqualTo("15 requests per replica: fewer than 100 to judge");
    }

    @Test
    void aReplicaThereForPartOfTheStageIsNamedNotJudged() {
        Map<String, Integer> scrapes = Map.of("a", 10, "b", 10, "c", 3);
        ReplicaBalance b =
                ReplicaBalance.of(report(counts("a", 150, "b", 140, "c", 20), scrapes, List.of()));
        assertThat(b.partial()).containsExactly("c");
        assertThat(b.served()).containsEntry("c", 20L);
        assertThat(b.balanced()).isTrue();
        // a replica whose increase was left out (joined late) has no served count at all
        ReplicaBalance joined =
                ReplicaBalance.of(
                        report(
                                counts("a", 150, "b", 140, "c", null),
                                Map.of("a", 10, "b", 10, "c", 10),
                                List.of("c")));
        assertThat(joined.served()).doesNotContainKey("c");
        assertThat(joined.partial()).containsExactly("c");
        assertThat(joined.balanced()).isTrue();
    }

    @Test
    void oneReplicaOrNoServedCounterGivesNothing() {
        assertThat(ReplicaBalance.of(report(counts("a", 100)))).isNull();
        assertThat(ReplicaBalance.of(report(counts("a", null, "b", null)))).isNull();
        assertThat(ReplicaBalance.of(null)).isNull();
    }
}
