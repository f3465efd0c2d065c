package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The prefix-cache reuse a stage's window measured, from the server's own token counters. */
class PrefixCacheHitsTest {

    private static List<ServerMetricSummary> vllm(String prefix, double hits, double queries) {
        return List.of(
                ServerMetricSummary.counter(
                        "vllm:" + prefix + "prefix_cache_queries_total", queries / 10, queries, 10),
                ServerMetricSummary.counter(
                        "vllm:" + prefix + "prefix_cache_hits_total", hits / 10, hits, 10));
    }

    private static ServerMetricsReport twoReplicas() {
        Map<String, List<ServerMetricSummary>> perReplica = new LinkedHashMap<>();
        perReplica.put("10.0.0.1:8000", vllm("", 3000, 4000));
        // an older vLLM's names
        perReplica.put("10.0.0.2:8000", vllm("gpu_", 1000, 4000));
        return new ServerMetricsReport(
                vllm("", 4000, 8000),
                perReplica,
                new ScrapeCoverage(
                        20,
                        20,
                        0,
                        2,
                        List.of(),
                        Map.of("10.0.0.1:8000", 10, "10.0.0.2:8000", 10),
                        List.of()));
    }

    @Test
    void theRateIsHitsOverQueriesInTheWindowOverallAndPerReplica() {
        PrefixCacheHits cache = PrefixCacheHits.of(twoReplicas());
        assertThat(cache.hits()).isEqualTo(4000);
        assertThat(cache.queries()).isEqualTo(8000);
        assertThat(cache.hitRate()).isEqualTo(0.5);
        assertThat(cache.byReplica().get("10.0.0.1:8000").hitRate()).isEqualTo(0.75);
        assertThat(cache.byReplica().get("10.0.0.2:8000").hitRate()).isEqualTo(0.25);
    }

    @Test
    void aReplicaWhoseWindowIsNotCoveredHasNoRateAndTheTotalNone() {
        // withoutWindowDeltas drops the increases the total would be made of: nothing is guessed.
        ServerMetricsReport partial =
                twoReplicas().withoutWindowDeltas(Set.of("10.0.0.2:8000"), "late first scrape");
        assertThat(PrefixCacheHits.of(partial)).isNull();
    }

    @Test
    void noCountersOrNoQueriesGiveNoRate() {
        assertThat(PrefixCacheHits.of(null)).isNull();
        assertThat(PrefixCacheHits.of(ServerMetricsReport.empty())).isNull();
        PrefixCacheHits idle =
                PrefixCacheHits.of(new ServerMetricsReport(vllm("", 0, 0), Map.of(), null));
        assertThat(idle.hitRate()).isNull();
    }

    @Test
    void theProfileCarriesItUnderMetricsPrefixCache() {
        StageResult stage = new StageResult();
        stage.requestedRate = 2;
        stage.completed = 10;
        ProfileContext context =
                new ProfileContext(
                        "vllm", "m", null, "vllm", Instant.EPOCH, null, null, 1, "test", Map.of());
        JsonNode cache =
                LpgProfileWriter.write(stage, context, twoReplicas()).at("/metrics/prefix_cache");
        assertThat(cache.path("hits").asLong()).isEqualTo(4000);
        assertThat(cache.path("queries").asLong()).isEqualTo(8000);
        assertThat(cache.path("hit_rate").asDouble()).isEqualTo(0.5);
        assertThat(cache.at("/by_replica/10.0.0.2:8000/hit_rate").asDouble()).isEqualTo(0.25);
        JsonNode none =
                LpgProfileWriter.write(stage, context, ServerMetricsReport.empty())
                        .at("/metrics/prefix_cache");
        assertThat(none.isMissingNode()).isTrue();
    }
}
