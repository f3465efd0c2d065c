package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Where a run is in its life: {@code Pending → Initializing → Running → Aggregating → Succeeded |
 * Failed | Cancelled}.
 */
public enum Phase {
    /** Accepted; validating the spec and waiting for the target to be ready. */
    @JsonProperty("Pending")
    PENDING,
    /** Runner pods are starting, loading data and warming up. */
    @JsonProperty("Initializing")
    INITIALIZING,
    /** Load stages are running. */
    @JsonProperty("Running")
    RUNNING,
    /** All stages finished; merging parts into profiles. */
    @JsonProperty("Aggregating")
    AGGREGATING,
    /** Profiles written for every stage. */
    @JsonProperty("Succeeded")
    SUCCEEDED,
    /** The run could not complete; see conditions and message. Partial results are kept. */
    @JsonProperty("Failed")
    FAILED,
    /** Stopped by {@code spec.cancel}; finished stages' profiles are kept. */
    @JsonProperty("Cancelled")
    CANCELLED;

    /** The value as written in status. */
    public String wireName() {
        String lower = name().toLowerCase(java.util.Locale.ROOT);
        return Character.toUpperCase(lower.charAt(0)) + lower.substring(1);
    }

    /**
     * Whether the run has ended.
     *
     * @return {@code true} for Succeeded, Failed and Cancelled
     */
    public boolean isTerminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }
}
