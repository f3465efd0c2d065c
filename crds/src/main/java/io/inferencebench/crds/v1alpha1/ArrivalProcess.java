package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How request send times are spaced in a rate stage. */
public enum ArrivalProcess {
    /** Exponential gaps with mean 1/rate (vLLM's default, burstiness 1). */
    @JsonProperty("poisson")
    POISSON,
    /** Equal gaps of exactly 1/rate. */
    @JsonProperty("constant")
    CONSTANT,
    /** Gamma-distributed gaps with shape {@code burstiness} and mean 1/rate. */
    @JsonProperty("gamma")
    GAMMA;

    /** The value as written in YAML. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
