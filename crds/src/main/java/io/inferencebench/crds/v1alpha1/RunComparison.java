package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** The comparison of a finished run's profiles with its {@code spec.baseline}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunComparison {

    /** Some stage got significantly worse on some metric. */
    public static final String REGRESSED = "Regressed";

    /** No stage got significantly worse. */
    public static final String NOT_REGRESSED = "NotRegressed";

    @JsonPropertyDescription("What was compared with: run/NAME or configmap/NAME.")
    private String baseline;

    @JsonPropertyDescription("Regressed or NotRegressed.")
    private String verdict;

    @JsonPropertyDescription(
            "The metric that changed for the worse the most, with its stage, e.g. 'stage 2"
                    + " ttft_ms p99 +18.0 %'.")
    private String worstMetric;

    @JsonPropertyDescription("Per stage and metric: baseline, candidate, change, significance.")
    private List<StageComparison> stages;

    public String getBaseline() {
        return baseline;
    }

    public void setBaseline(String baseline) {
        this.baseline = baseline;
    }

    public String getVerdict() {
        return verdict;
    }

    public void setVerdict(String verdict) {
        this.verdict = verdict;
    }

    public String getWorstMetric() {
        return worstMetric;
    }

    public void setWorstMetric(String worstMetric) {
        this.worstMetric = worstMetric;
    }

    public List<StageComparison> getStages() {
        return stages;
    }

    public void setStages(List<StageComparison> stages) {
        this.stages = stages;
    }
}
