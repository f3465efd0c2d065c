package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** One stage of a {@link RunComparison}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StageComparison {

    @JsonPropertyDescription("1-based stage number of the candidate run.")
    private Integer stage;

    @JsonPropertyDescription("Requested rate of the baseline's stage paired with it (req/s).")
    private Double baselineRequestRate;

    @JsonPropertyDescription("Requested rate of this run's stage (req/s).")
    private Double candidateRequestRate;

    public Double getBaselineRequestRate() {
        return baselineRequestRate;
    }

    public void setBaselineRequestRate(Double baselineRequestRate) {
        this.baselineRequestRate = baselineRequestRate;
    }

    public Double getCandidateRequestRate() {
        return candidateRequestRate;
    }

    public void setCandidateRequestRate(Double candidateRequestRate) {
        this.candidateRequestRate = candidateRequestRate;
    }

    @JsonPropertyDescription("The compared metrics.")
    private List<MetricComparison> metrics;

    public Integer getStage() {
        return stage;
    }

    public void setStage(Integer stage) {
        this.stage = stage;
    }

    public List<MetricComparison> getMetrics() {
        return metrics;
    }

    public void setMetrics(List<MetricComparison> metrics) {
        this.metrics = metrics;
    }
}
