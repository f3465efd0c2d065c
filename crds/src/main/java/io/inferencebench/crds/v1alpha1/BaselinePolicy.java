package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How a BenchmarkSchedule chooses the baseline of each run it creates. */
public enum BaselinePolicy {
    /** The most recent run of the same schedule that succeeded. */
    @JsonProperty("previousSucceeded")
    PREVIOUS_SUCCEEDED
}
