package io.inferencebench.profile.lpg;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Which of LPG's two meanings a profile's conflicting keys have. Everything else is written alike:
 * both dialects carry every key of the other that does not conflict (see the project's {@code
 * docs/formats.md}).
 */
public enum LpgDialect {

    /**
     * The seed's contract (the 2024-09 schema of the reference example): {@code metrics.throughput}
     * and {@code summary_stats.stats[].throughput.mean} in completed requests per second,
     * server-metric statistics as strings.
     */
    SEED("seed"),

    /**
     * LPG's last code (ai-on-gke, benchmark_serving.py at 5122ce25), which inference-benchmark's
     * analyze.py and the gateway-api-inference-extension notebook read: {@code throughput} in
     * output tokens per second (requests per second are {@code throughput_rps}), server-metric
     * statistics as JSON numbers.
     */
    FINAL("final");

    private final String wireName;

    LpgDialect(String wireName) {
        this.wireName = wireName;
    }

    /**
     * The name in flags, specs and profiles ({@code seed}, {@code final}).
     *
     * @return the name
     */
    public String wireName() {
        return wireName;
    }

    /**
     * Parses a dialect name (case-insensitive).
     *
     * @param name {@code seed} or {@code final}
     * @return the dialect
     * @throws IllegalArgumentException naming the allowed values when {@code name} is neither
     */
    public static LpgDialect parse(String name) {
        String n = name == null ? "" : name.strip().toLowerCase(Locale.ROOT);
        for (LpgDialect d : values()) {
            if (d.wireName.equals(n)) {
                return d;
            }
        }
        throw new IllegalArgumentException(
                "must be "
                        + Arrays.stream(values())
                                .map(LpgDialect::wireName)
                                .collect(Collectors.joining(" or "))
                        + ", got '"
                        + name
                        + "'");
    }
}
