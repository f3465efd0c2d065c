package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * The baseline a BenchmarkSchedule writes into {@code spec.baseline} of each run it creates: a
 * policy or one pinned run. Exactly one is set.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "[has(self.policy), has(self.runName)].filter(x, x).size() == 1",
        message = "exactly one of policy or runName must be set",
        reason = "FieldValueInvalid")
@ValidationRule(
        value = "!has(self.noiseFloorRuns) || has(self.policy)",
        message = "noiseFloorRuns needs policy previousSucceeded",
        fieldPath = ".noiseFloorRuns",
        reason = "FieldValueForbidden")
public class ScheduleBaseline {

    /**
     * The fewest earlier runs pooled as a noise floor: with two, the prediction interval's t
     * quantile at one degree of freedom is so wide that nearly every comparison would be
     * inconclusive; until a schedule has this many, each run is compared with the one before it.
     */
    public static final int MIN_NOISE_FLOOR_RUNS = 3;

    @JsonPropertyDescription(
            "previousSucceeded: compare each run with the schedule's most recent succeeded run (the"
                    + " first run has no baseline).")
    private BaselinePolicy policy;

    @JsonPropertyDescription(
            "Compare every run with this one BenchmarkRun (same namespace), e.g. a release's"
                    + " reference measurement.")
    @Size(min = 1, max = Names.MAX_RUN_NAME_LENGTH)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String runName;

    @JsonPropertyDescription(
            "With policy previousSucceeded: compare each run with up to this many of the"
                    + " schedule's most recent succeeded runs at once (spec.baseline.runNames of"
                    + " the run), whose spread is the noise floor a change must beat; a change"
                    + " within it is Inconclusive, not a regression. While fewer than 3 have"
                    + " succeeded, each run is compared with the most recent one alone. At most"
                    + " historyLimit (the runs kept). 3 to 30.")
    @Min(MIN_NOISE_FLOOR_RUNS)
    @Max(BaselineSpec.MAX_RUN_NAMES)
    private Integer noiseFloorRuns;

    public ScheduleBaseline() {}

    public BaselinePolicy getPolicy() {
        return policy;
    }

    public void setPolicy(BaselinePolicy policy) {
        this.policy = policy;
    }

    public Integer getNoiseFloorRuns() {
        return noiseFloorRuns;
    }

    public void setNoiseFloorRuns(Integer noiseFloorRuns) {
        this.noiseFloorRuns = noiseFloorRuns;
    }

    public String getRunName() {
        return runName;
    }

    public void setRunName(String runName) {
        this.runName = runName;
    }
}
