package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Which of LPG's two meanings a profile's conflicting keys have ({@code spec.output.lpgDialect}).
 */
public enum LpgDialect {
    /**
     * The seed's schema: {@code throughput} in completed requests/s, server-metric statistics as
     * strings.
     */
    @JsonProperty("seed")
    SEED,
    /**
     * LPG's last code: {@code throughput} in output tokens/s ({@code throughput_rps} in
     * requests/s), server-metric statistics as numbers.
     */
    @JsonProperty("final")
    FINAL;

    /** The value as written in YAML. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
