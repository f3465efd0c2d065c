package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One metric of one stage, baseline against candidate. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class MetricComparison {

    @JsonPropertyDescription("Metric and statistic as the comparison names it, e.g. ttft_p99_ms.")
    private String metric;

    @JsonPropertyDescription("The baseline's value.")
    private Double baseline;

    @JsonPropertyDescription("This run's value.")
    private Double candidate;

    @JsonPropertyDescription("Relative change (candidate - baseline) / baseline, e.g. 0.18.")
    private Double change;

    @JsonPropertyDescription(
            "Whether the change is beyond the metric's relative threshold and the runs' sampling"
                    + " noise.")
    private Boolean significant;

    @JsonPropertyDescription(
            "Whether this run is the worse side (higher latency, lower throughput or goodput).")
    private Boolean worse;

    public String getMetric() {
        return metric;
    }

    public void setMetric(String metric) {
        this.metric = metric;
    }

    public Double getBaseline() {
        return baseline;
    }

    public void setBaseline(Double baseline) {
        this.baseline = baseline;
    }

    public Double getCandidate() {
        return candidate;
    }

    public void setCandidate(Double candidate) {
        this.candidate = candidate;
    }

    public Double getChange() {
        return change;
    }

    public void setChange(Double change) {
        this.change = change;
    }

    public Boolean getSignificant() {
        return significant;
    }

    public void setSignificant(Boolean significant) {
        this.significant = significant;
    }

    public Boolean getWorse() {
        return worse;
    }

    public void setWorse(Boolean worse) {
        this.worse = worse;
    }
}
