package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Live progress of the running stage, refreshed from the runners' reports every few seconds. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class LiveStatus {

    @JsonPropertyDescription("When the runners last reported (RFC 3339).")
    private String updatedAt;

    @JsonPropertyDescription("1-based stage these numbers belong to.")
    private Integer stage;

    @JsonPropertyDescription("Runner pods whose report is fresh.")
    private Integer runnersReporting;

    @JsonPropertyDescription("Requests completed in this stage.")
    private Long completed;

    @JsonPropertyDescription("Requests failed in this stage.")
    private Long failed;

    @JsonPropertyDescription("Requests in flight now.")
    private Long inFlight;

    @JsonPropertyDescription(
            "Target rate of this stage, requests/s (a ramped stage's end rate; absent for"
                    + " concurrency stages).")
    private Double requestRate;

    @JsonPropertyDescription("Achieved send rate over the last interval, requests/s.")
    private Double achievedRate;

    @JsonPropertyDescription("Median time to first token over the last interval, ms.")
    private Double ttftP50Ms;

    @JsonPropertyDescription("99th percentile end-to-end latency over the last interval, ms.")
    private Double latencyP99Ms;

    public String getUpdatedAt() {
        return updatedAt;
    }

    public void setUpdatedAt(String updatedAt) {
        this.updatedAt = updatedAt;
    }

    public Integer getStage() {
        return stage;
    }

    public void setStage(Integer stage) {
        this.stage = stage;
    }

    public Integer getRunnersReporting() {
        return runnersReporting;
    }

    public void setRunnersReporting(Integer runnersReporting) {
        this.runnersReporting = runnersReporting;
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

    public Long getInFlight() {
        return inFlight;
    }

    public void setInFlight(Long inFlight) {
        this.inFlight = inFlight;
    }

    public Double getRequestRate() {
        return requestRate;
    }

    public void setRequestRate(Double requestRate) {
        this.requestRate = requestRate;
    }

    public Double getAchievedRate() {
        return achievedRate;
    }

    public void setAchievedRate(Double achievedRate) {
        this.achievedRate = achievedRate;
    }

    public Double getTtftP50Ms() {
        return ttftP50Ms;
    }

    public void setTtftP50Ms(Double ttftP50Ms) {
        this.ttftP50Ms = ttftP50Ms;
    }

    public Double getLatencyP99Ms() {
        return latencyP99Ms;
    }

    public void setLatencyP99Ms(Double latencyP99Ms) {
        this.latencyP99Ms = latencyP99Ms;
    }
}
