package io.inferencebench.profile.compare;

import java.util.List;
import java.util.Locale;

/** The metrics a comparison looks at, with the statistics compared for each. */
public enum Metric {
    /** Time to first token, ms: p50, p90, p99. */
    TTFT("ttft", "ttft_ms", "ms", true),
    /** Inter-token latency, ms: p50, p90, p99. */
    ITL("itl", "itl_ms", "ms", true),
    /** Time per output token after the first, ms: p50, p90, p99. */
    TPOT("tpot", "tpot_ms", "ms", true),
    /** End-to-end request latency, ms: p50, p90, p99. */
    E2EL("e2el", "e2el_ms", "ms", true),
    /** Output tokens per second over the stage. */
    OUTPUT_THROUGHPUT("output_throughput", null, "tok/s", false),
    /** Requests per second that met every SLO (only profiles with an SLO have it). */
    GOODPUT("goodput", null, "req/s", false);

    /** The percentiles compared for latency metrics, as named in output ({@code p50} ...). */
    public static final List<String> PERCENTILES = List.of("p50", "p90", "p99");

    private final String key;
    private final String family;
    private final String unit;
    private final boolean higherIsWorse;

    Metric(String key, String family, String unit, boolean higherIsWorse) {
        this.key = key;
        this.family = family;
        this.unit = unit;
        this.higherIsWorse = higherIsWorse;
    }

    /**
     * The name used on the command line and in JSON output ({@code ttft}, {@code
     * output_throughput}, ...).
     *
     * @return the key
     */
    public String key() {
        return key;
    }

    /**
     * The profile's key suffix of this latency family ({@code ttft_ms}), also its key in {@code
     * metrics.histograms}; {@code null} for throughput metrics.
     *
     * @return the suffix or {@code null}
     */
    public String family() {
        return family;
    }

    /**
     * Unit of the compared values.
     *
     * @return {@code ms}, {@code tok/s} or {@code req/s}
     */
    public String unit() {
        return unit;
    }

    /**
     * Whether a higher value is worse (latencies) or better (throughputs).
     *
     * @return {@code true} for latencies
     */
    public boolean higherIsWorse() {
        return higherIsWorse;
    }

    /**
     * Whether the metric is a latency distribution compared at {@link #PERCENTILES}.
     *
     * @return {@code true} for TTFT, ITL, TPOT and E2EL
     */
    public boolean isLatency() {
        return family != null;
    }

    /**
     * Looks a metric up by its {@link #key()} (case-insensitive; {@code e2e} and {@code throughput}
     * are accepted too).
     *
     * @param name the name
     * @return the metric
     * @throws IllegalArgumentException naming the allowed names when unknown
     */
    public static Metric byKey(String name) {
        String n = name.strip().toLowerCase(Locale.ROOT).replace('-', '_');
        if (n.equals("e2e") || n.equals("e2e_latency") || n.equals("latency")) {
            return E2EL;
        }
        if (n.equals("throughput")) {
            return OUTPUT_THROUGHPUT;
        }
        for (Metric m : values()) {
            if (m.key.equals(n)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "unknown metric '" + name + "'; allowed: " + String.join(", ", keys()));
    }

    /**
     * All metric keys in order.
     *
     * @return the keys
     */
    public static List<String> keys() {
        return java.util.Arrays.stream(values()).map(Metric::key).toList();
    }
}
