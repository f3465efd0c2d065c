package io.inferencebench.profile.lpg;

import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The share of prompt tokens the server found in its prefix cache over one stage window, from the
 * server's own counters (vLLM's {@code vllm:prefix_cache_queries_total} and {@code
 * vllm:prefix_cache_hits_total}, in tokens; {@code gpu_}-prefixed before vLLM 0.10): the measured
 * reuse to set beside the reuse a workload implies, e.g. a shared-prefix dataset's.
 *
 * <p>Only window increases count, so a rate covers exactly the stage; a replica whose scrapes do
 * not reach back to the window start has no increases (see {@link
 * ServerMetricsReport#withoutWindowDeltas}) and is left out rather than guessed. SGLang's {@code
 * sglang:cache_hit_rate} is a gauge over the server's own recent history, not the window: it stays
 * in the server metrics, but no rate here is made from it.
 *
 * @param hits prompt tokens found cached, over every replica
 * @param queries prompt tokens looked up, over every replica
 * @param byReplica the same per replica scraped (replica id → hits and queries)
 */
public record PrefixCacheHits(long hits, long queries, Map<String, PrefixCacheHits> byReplica) {

    static final List<String> HITS =
            List.of("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total");
    static final List<String> QUERIES =
            List.of("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total");

    /** Defensive copy. */
    public PrefixCacheHits {
        byReplica = byReplica == null ? Map.of() : Map.copyOf(byReplica);
    }

    /** Hits over queries; {@code null} when nothing was looked up (no rate to give). */
    public Double hitRate() {
        return queries > 0 ? (double) hits / queries : null;
    }

    /**
     * The stage's prefix-cache reuse, or {@code null} when the server exposes no such counters (no
     * prefix caching, another server) or their window increases are not known.
     */
    public static PrefixCacheHits of(ServerMetricsReport report) {
        if (report == null) {
            return null;
        }
        PrefixCacheHits total = of(report.aggregate());
        if (total == null) {
            return null;
        }
        Map<String, PrefixCacheHits> byReplica = new TreeMap<>();
        report.perReplica()
                .forEach(
                        (replica, summaries) -> {
                            PrefixCacheHits one = of(summaries);
                            if (one != null) {
                                byReplica.put(replica, one);
                            }
                        });
        return new PrefixCacheHits(total.hits(), total.queries(), byReplica);
    }

    /**
     * The counts a profile's {@code metrics.prefix_cache} holds (as {@link ReplicaSections} writes
     * them), or {@code null} when the node is missing or has no counts.
     */
    public static PrefixCacheHits fromProfile(com.fasterxml.jackson.databind.JsonNode prefixCache) {
        if (prefixCache == null
                || !prefixCache.path("hits").isNumber()
                || !prefixCache.path("queries").isNumber()) {
            return null;
        }
        Map<String, PrefixCacheHits> byReplica = new TreeMap<>();
        prefixCache
                .path("by_replica")
                .properties()
                .forEach(
                        e -> {
                            PrefixCacheHits one = fromProfile(e.getValue());
                            if (one != null) {
                                byReplica.put(e.getKey(), one);
                            }
                        });
        return new PrefixCacheHits(
                prefixCache.path("hits").asLong(), prefixCache.path("queries").asLong(), byReplica);
    }

    private static PrefixCacheHits of(List<ServerMetricSummary> summaries) {
        Double hits = increase(summaries, HITS);
        Double queries = increase(summaries, QUERIES);
        if (hits == null || queries == null) {
            return null;
        }
        return new PrefixCacheHits(Math.round(hits), Math.round(queries), Map.of());
    }

    private static Double increase(List<ServerMetricSummary> summaries, List<String> names) {
        for (ServerMetricSummary s : summaries) {
            if (names.contains(s.name()) && s.increase() != null) {
                return s.increase();
            }
        }
        return null;
    }
}
