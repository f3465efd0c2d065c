package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A few statistics of one latency, in milliseconds. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class LatencySummary {

    @JsonPropertyDescription("Mean, ms.")
    private Double mean;

    @JsonPropertyDescription("Median, ms.")
    private Double p50;

    @JsonPropertyDescription("90th percentile, ms.")
    private Double p90;

    @JsonPropertyDescription("99th percentile, ms.")
    private Double p99;

    @JsonPropertyDescription("Maximum, ms.")
    private Double max;

    public LatencySummary() {}

    public LatencySummary(Double mean, Double p50, Double p90, Double p99, Double max) {
        this.mean = mean;
        this.p50 = p50;
        this.p90 = p90;
        this.p99 = p99;
        this.max = max;
    }

    public Double getMean() {
        return mean;
    }

    public void setMean(Double mean) {
        this.mean = mean;
    }

    public Double getP50() {
        return p50;
    }

    public void setP50(Double p50) {
        this.p50 = p50;
    }

    public Double getP90() {
        return p90;
    }

    public void setP90(Double p90) {
        this.p90 = p90;
    }

    public Double getP99() {
        return p99;
    }

    public void setP99(Double p99) {
        this.p99 = p99;
    }

    public Double getMax() {
        return max;
    }

    public void setMax(Double max) {
        this.max = max;
    }
}
