package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import io.inferencebench.crds.v1alpha1.PrometheusSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServerMetricsConditionTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode profile(int expected, int succeeded, int failed, String... errors)
            throws Exception {
        return JSON.readTree(
                JSON.writeValueAsString(
                        java.util.Map.of(
                                "metrics",
                                java.util.Map.of(
                                        "server_metrics_coverage",
                                        java.util.Map.of(
                                                "expected",
                                                expected,
                                                "succeeded",
                                                succeeded,
                                                "failed",
                                                failed,
                                                "errors",
                                                List.of(errors))))));
    }

    private static MetricsSpec prometheus() {
        MetricsSpec metrics = new MetricsSpec();
        PrometheusSpec p = new PrometheusSpec();
        p.setUrl("http://prometheus:9090");
        metrics.setPrometheus(p);
        return metrics;
    }

    @Test
    void fullCoverageIsTrueWithTheCountsInTheMessage() throws Exception {
        var d =
                ServerMetricsCondition.decide(
                        new MetricsSpec(), List.of(profile(10, 10, 0), profile(12, 11, 1)), 2);
        assertThat(d.status()).isTrue();
        assertThat(d.reason()).isEqualTo("Collected");
        assertThat(d.message())
                .isEqualTo(
                        "server metrics from direct scraping in every stage window: 21 of 22"
                                + " expected scrape(s) (95%) over 2 stage(s)");
    }

    @Test
    void aStageWithoutAnyScrapeIsScrapesFailedOrPrometheusQueryFailed() throws Exception {
        var direct =
                ServerMetricsCondition.decide(
                        new MetricsSpec(),
                        List.of(profile(10, 10, 0), profile(10, 0, 10, "HTTP 404")),
                        2);
        assertThat(direct.status()).isFalse();
        assertThat(direct.reason()).isEqualTo("ScrapesFailed");
        assertThat(direct.message())
                .contains("1 of 2 stage window(s), first stage 2: HTTP 404")
                .contains("spec.metrics.port and path");

        var prom =
                ServerMetricsCondition.decide(
                        prometheus(),
                        List.of(
                                profile(
                                        0,
                                        0,
                                        1,
                                        "spec.metrics.prometheus.bearerTokenSecretRef: Secret t"
                                                + " not found")),
                        1);
        assertThat(prom.status()).isFalse();
        assertThat(prom.reason()).isEqualTo("PrometheusQueryFailed");
        assertThat(prom.message()).contains("Secret t not found");
    }

    @Test
    void lowCoverageInOneStageIsFalseNamingTheStage() throws Exception {
        var d =
                ServerMetricsCondition.decide(
                        new MetricsSpec(), List.of(profile(10, 10, 0), profile(10, 7, 0)), 2);
        assertThat(d.status()).isFalse();
        assertThat(d.reason()).isEqualTo("LowCoverage");
        assertThat(d.message())
                .startsWith("server metrics from direct scraping cover stage 2 only 70%");
    }

    @Test
    void increasesLeftOutOfAStageMakeItFalseNamingTheStageTheReplicasAndWhy() throws Exception {
        JsonNode cut = profile(10, 10, 0, "late start: first page 2.1 s after the barrier");
        ((com.fasterxml.jackson.databind.node.ObjectNode)
                        cut.path("metrics").path("server_metrics_coverage"))
                .putArray("increases_left_out")
                .add("sim-a")
                .add("sim-b");
        var d =
                ServerMetricsCondition.decide(
                        new MetricsSpec(), List.of(profile(10, 10, 0), cut, profile(10, 10, 0)), 3);
        assertThat(d.status()).isFalse();
        assertThat(d.reason()).isEqualTo("IncreasesLeftOut");
        assertThat(d.message())
                .isEqualTo(
                        "server metrics from direct scraping: counter and histogram increases left"
                                + " out in stage(s) 2 (gauges kept); first: stage 2 replica(s)"
                                + " sim-a, sim-b: late start: first page 2.1 s after the barrier;"
                                + " 30 of 30 expected scrape(s) (100%) over 3 stage(s)");
        // Low coverage elsewhere is the stronger statement and is what the condition says.
        var low =
                ServerMetricsCondition.decide(
                        new MetricsSpec(), List.of(profile(10, 5, 0), cut), 2);
        assertThat(low.reason()).isEqualTo("LowCoverage");
    }

    @Test
    void disabledAndMissingProfilesAreFalse() throws Exception {
        MetricsSpec off = new MetricsSpec();
        off.setEnabled(false);
        assertThat(ServerMetricsCondition.decide(off, List.of(), 1).reason()).isEqualTo("Disabled");
        // a stage profile without coverage (no report at all) counts as a stage without metrics
        var d =
                ServerMetricsCondition.decide(
                        new MetricsSpec(), List.of(profile(5, 5, 0), JSON.readTree("{}")), 2);
        assertThat(d.reason()).isEqualTo("ScrapesFailed");
    }
}
