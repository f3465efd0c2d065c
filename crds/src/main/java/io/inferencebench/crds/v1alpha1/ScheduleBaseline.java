package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
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
public class ScheduleBaseline {

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

    public ScheduleBaseline() {}

    public BaselinePolicy getPolicy() {
        return policy;
    }

    public void setPolicy(BaselinePolicy policy) {
        this.policy = policy;
    }

    public String getRunName() {
        return runName;
    }

    public void setRunName(String runName) {
        this.runName = runName;
    }
}
