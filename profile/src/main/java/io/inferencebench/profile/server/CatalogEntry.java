package io.inferencebench.profile.server;

import io.inferencebench.profile.prom.MetricType;
import java.util.List;

/**
 * One server metric the statistics cover.
 *
 * @param name the current metric name (for counters as exposed in text format 0.0.4, usually with
 *     {@code _total})
 * @param aliases older or alternative names of the same signal (for example {@code
 *     vllm:gpu_cache_usage_perc} for {@code vllm:kv_cache_usage_perc}); each one a server exposes
 *     is summarised under its own name, beside {@code name} when the server exposes both
 * @param type expected type; the page's own TYPE wins where it says histogram vs summary
 * @param aggregation how replicas (and several series of one replica) combine
 * @param splitLabel a label whose values are different signals (for example {@code request_type})
 *     and are summarised separately as {@code name{label="value"}}; {@code null} for none
 * @param info whether this is an info gauge (metadata, never summarised)
 */
public record CatalogEntry(
        String name,
        List<String> aliases,
        MetricType type,
        Aggregation aggregation,
        String splitLabel,
        boolean info) {

    /** Defensive copy. */
    public CatalogEntry {
        aliases = aliases == null ? List.of() : List.copyOf(aliases);
    }

    static CatalogEntry gauge(String name, Aggregation aggregation, String... aliases) {
        return new CatalogEntry(name, List.of(aliases), MetricType.GAUGE, aggregation, null, false);
    }

    static CatalogEntry splitGauge(String name, String splitLabel) {
        return new CatalogEntry(
                name, List.of(), MetricType.GAUGE, Aggregation.SUM, splitLabel, false);
    }

    static CatalogEntry counter(String name, String... aliases) {
        return new CatalogEntry(
                name, List.of(aliases), MetricType.COUNTER, Aggregation.SUM, null, false);
    }

    static CatalogEntry histogram(String name, String... aliases) {
        return new CatalogEntry(
                name, List.of(aliases), MetricType.HISTOGRAM, Aggregation.SUM, null, false);
    }

    static CatalogEntry info(String name) {
        return new CatalogEntry(name, List.of(), MetricType.GAUGE, Aggregation.MEAN, null, true);
    }

    /**
     * All names this entry answers to, current first.
     *
     * @return name followed by aliases
     */
    public List<String> allNames() {
        java.util.ArrayList<String> names = new java.util.ArrayList<>();
        names.add(name);
        names.addAll(aliases);
        return names;
    }
}
