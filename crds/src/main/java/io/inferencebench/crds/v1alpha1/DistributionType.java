package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Shape of a token-length distribution. */
public enum DistributionType {
    /** Every request uses {@code mean} tokens. */
    @JsonProperty("fixed")
    FIXED,
    /** Uniform integers in [{@code min}, {@code max}]. */
    @JsonProperty("uniform")
    UNIFORM,
    /**
     * Normal with {@code mean} and {@code stddev}, rounded and clamped to [{@code min}, {@code
     * max}].
     */
    @JsonProperty("normal")
    NORMAL;

    /** The value as written in YAML. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
