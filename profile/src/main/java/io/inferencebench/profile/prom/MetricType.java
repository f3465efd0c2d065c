package io.inferencebench.profile.prom;

/** Metric family types of the Prometheus text format 0.0.4 and OpenMetrics 1.0. */
public enum MetricType {
    /** Monotonic counter (OpenMetrics samples end in {@code _total}). */
    COUNTER,
    /** Gauge. */
    GAUGE,
    /** Histogram: {@code _bucket{le}}, {@code _sum}, {@code _count}. */
    HISTOGRAM,
    /** OpenMetrics gauge histogram: {@code _bucket{le}}, {@code _gsum}, {@code _gcount}. */
    GAUGE_HISTOGRAM,
    /** Summary: {@code {quantile}}, {@code _sum}, {@code _count}. */
    SUMMARY,
    /** OpenMetrics info ({@code _info} samples, value 1). */
    INFO,
    /** OpenMetrics state set. */
    STATESET,
    /** {@code untyped} (0.0.4) or {@code unknown} (OpenMetrics), or no TYPE line at all. */
    UNKNOWN;

    /**
     * Lower-case name as written in a TYPE line ({@code gaugehistogram} for {@link
     * #GAUGE_HISTOGRAM}).
     *
     * @return the text-format spelling
     */
    public String textName() {
        return this == GAUGE_HISTOGRAM
                ? "gaugehistogram"
                : name().toLowerCase(java.util.Locale.ROOT);
    }
}
