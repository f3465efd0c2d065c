package io.inferencebench.profile.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.prom.MetricType;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ServerMetricsReportTest {

    private static ServerMetricSummary summary(String name, MetricType type) {
        return new ServerMetricSummary(
                name, type, 1.0, null, null, null, null, null, null, 3.0, 0.5, 4);
    }

    private final ServerMetricSummary running =
            summary("vllm:num_requests_running", MetricType.GAUGE);
    private final ServerMetricSummary success =
            summary("vllm:request_success_total", MetricType.COUNTER);
    private final ServerMetricSummary ttft =
            summary("vllm:time_to_first_token_seconds", MetricType.HISTOGRAM);

    private final ServerMetricsReport report =
            new ServerMetricsReport(
                    List.of(running, success, ttft),
                    Map.of("a", List.of(running, success, ttft), "b", List.of(running, success)),
                    new ScrapeCoverage(8, 8, 0, 2, List.of(), Map.of("a", 4, "b", 4)));

    @Test
    void withoutWindowDeltasKeepsOnlyGaugesWhereTheStartWasNotObservedAndSaysWhy() {
        ServerMetricsReport kept = report.withoutWindowDeltas(Set.of("a"), "no start scrape");
        assertThat(kept.aggregate()).containsExactly(running);
        assertThat(kept.perReplica().get("a")).containsExactly(running);
        assertThat(kept.perReplica().get("b")).containsExactly(running, success);
        assertThat(kept.coverage().errors()).containsExactly("no start scrape");
        assertThat(kept.coverage().succeeded()).isEqualTo(8);
        assertThat(kept.coverage().expected()).isEqualTo(8);
        assertThat(kept.coverage().increasesLeftOut()).containsExactly("a");
        assertThat(report.coverage().increasesLeftOut()).isEmpty();
        // A second cut adds to the first, each replica once.
        ServerMetricsReport twice = kept.withoutWindowDeltas(Set.of("b", "a"), "late page");
        assertThat(twice.coverage().increasesLeftOut()).containsExactly("a", "b");
        assertThat(twice.coverage().errors()).containsExactly("no start scrape", "late page");
    }

    @Test
    void noReplicasLeavesTheReportAsItIs() {
        assertThat(report.withoutWindowDeltas(Set.of(), "unused")).isSameAs(report);
    }
}
