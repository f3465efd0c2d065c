package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Request counts of the run so far. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunProgress {

    @JsonPropertyDescription("1-based number of the stage running or last run; 0 before the first.")
    private Integer currentStage;

    @JsonPropertyDescription("Number of stages.")
    private Integer stages;

    @JsonPropertyDescription("Requests that finished successfully, all stages so far.")
    private Long completed;

    @JsonPropertyDescription("Requests that failed, all stages so far.")
    private Long failed;

    @JsonPropertyDescription(
            "Requests planned over all stages; absent when a stage is bounded only by duration.")
    private Long total;

    @JsonPropertyDescription(
            "completed/total for display, e.g. 420/1200 (completed/? when total is unknown).")
    private String done;

    public Integer getCurrentStage() {
        return currentStage;
    }

    public void setCurrentStage(Integer currentStage) {
        this.currentStage = currentStage;
    }

    public Integer getStages() {
        return stages;
    }

    public void setStages(Integer stages) {
        this.stages = stages;
    }

    public Long getCompleted() {
        return completed;
    }

    public void setCompleted(Long completed) {
        this.completed = completed;
    }

    public Long getFailed() {
        return failed;
    }

    public void setFailed(Long failed) {
        this.failed = failed;
    }

    public Long getTotal() {
        return total;
    }

    public void setTotal(Long total) {
        this.total = total;
    }

    public String getDone() {
        return done;
    }

    public void setDone(String done) {
        this.done = done;
    }
}
