package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** A file written per stage into the output ConfigMaps ({@code spec.output.formats}). */
public enum OutputFormat {
    /** The LPG profile, key {@code <backend>-<rate>qps-<model>-<date>.json} (always written). */
    @JsonProperty("lpg")
    LPG,
    /** A Benchmark Report v0.2 beside it, key {@code <profile key without .json>.br0.2.yaml}. */
    @JsonProperty("br0.2")
    BR_0_2;

    /** The value as written in YAML. */
    public String wireName() {
        return this == LPG ? "lpg" : "br0.2";
    }
}
