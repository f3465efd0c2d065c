package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** When the runner Job and its pods are deleted after a run finishes. */
public enum CleanupPolicy {
    /** Delete them after every finished run. */
    @JsonProperty("Always")
    ALWAYS,
    /** Delete them after a successful run; keep them after a failure for logs. */
    @JsonProperty("OnSuccess")
    ON_SUCCESS,
    /** Keep them until the BenchmarkRun is deleted. */
    @JsonProperty("Never")
    NEVER
}
