package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The observed state of a schedule. Written only by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BenchmarkScheduleStatus {

    @JsonPropertyDescription("The metadata.generation this status describes.")
    private Long observedGeneration;

    @JsonPropertyDescription(
            "ScheduleValid (spec.schedule and spec.timeZone parse) and Regressing (True when the"
                    + " last finished run regressed against its baseline).")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("Name of the BenchmarkRun created last.")
    private String lastRun;

    @JsonPropertyDescription("The scheduled time (RFC 3339) of the last run created or skipped.")
    private String lastScheduleTime;

    @JsonPropertyDescription("When the next run is due (RFC 3339); absent while suspended.")
    private String nextScheduleTime;

    @JsonPropertyDescription("Name of the most recently created run that has finished.")
    private String lastFinishedRun;

    @JsonPropertyDescription(
            "Verdict of lastFinishedRun: its status.comparison.verdict (Regression, Improvement,"
                    + " NoSignificantChange), NoBaseline when it has none, Pending until it is"
                    + " compared, NotCompared when comparing failed, or its phase when it did not"
                    + " succeed (Failed, Cancelled).")
    private String lastVerdict;

    @JsonPropertyDescription("Names of this schedule's runs that have not finished.")
    private List<String> active;

    /**
     * Finds a condition by type.
     *
     * @param type e.g. {@link ConditionTypes#REGRESSING}
     * @return the condition, if reported
     */
    public Optional<Condition> condition(String type) {
        if (conditions == null) {
            return Optional.empty();
        }
        return conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public String getLastRun() {
        return lastRun;
    }

    public void setLastRun(String lastRun) {
        this.lastRun = lastRun;
    }

    public String getLastScheduleTime() {
        return lastScheduleTime;
    }

    public void setLastScheduleTime(String lastScheduleTime) {
        this.lastScheduleTime = lastScheduleTime;
    }

    public String getNextScheduleTime() {
        return nextScheduleTime;
    }

    public void setNextScheduleTime(String nextScheduleTime) {
        this.nextScheduleTime = nextScheduleTime;
    }

    public String getLastFinishedRun() {
        return lastFinishedRun;
    }

    public void setLastFinishedRun(String lastFinishedRun) {
        this.lastFinishedRun = lastFinishedRun;
    }

    public String getLastVerdict() {
        return lastVerdict;
    }

    public void setLastVerdict(String lastVerdict) {
        this.lastVerdict = lastVerdict;
    }

    public List<String> getActive() {
        return active;
    }

    public void setActive(List<String> active) {
        this.active = active;
    }
}
