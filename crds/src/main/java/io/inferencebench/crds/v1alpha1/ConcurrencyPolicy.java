package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What a BenchmarkSchedule does when a run is due while an earlier one is still running. */
public enum ConcurrencyPolicy {
    /** Skip the due run; two benchmarks against one server would measure each other. */
    @JsonProperty("Forbid")
    FORBID,
    /** Delete the running run and start the due one. */
    @JsonProperty("Replace")
    REPLACE
}
