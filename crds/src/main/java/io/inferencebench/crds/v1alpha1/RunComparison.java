package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** The comparison of a finished run's profiles with its {@code spec.baseline}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunComparison {

    /** Some stage got significantly worse on some metric. */
    public static final String REGRESSION = "Regression";

    /** Nothing got significantly worse and something got significantly better. */
    public static final String IMPROVEMENT = "Improvement";

    /** Nothing changed beyond its threshold and the sampling noise. */
    public static final String NO_SIGNIFICANT_CHANGE = "NoSignificantChange";

    /**
     * Nothing changed significantly, but the noise between repeats could hide a change of a
     * metric's threshold.
     */
    public static final String INCONCLUSIVE = "Inconclusive";

    @JsonPropertyDescription(
            "What was compared with: run/NAME, runs/NAME,NAME,... (spec.baseline.runNames) or"
                    + " configmap/NAME.")
    private String baseline;

    @JsonPropertyDescription(
            "Regression (some stage's metric significantly worse), Improvement (none worse, some"
                    + " better), NoSignificantChange, or Inconclusive (with load.repeats or several"
                    + " baseline runs: none significant, but the noise between repeats could hide a"
                    + " change of a metric's threshold; the notes name it and the change the"
                    + " repeats can detect). Significant: beyond the metric's relative threshold and the runs'"
                    + " noise.")
    private String verdict;

    @JsonPropertyDescription(
            "The metric that changed for the worse the most, with its stage, e.g. 'stage 2"
                    + " ttft_ms p99 +18.0 %'.")
    private String worstMetric;

    @JsonPropertyDescription("Per stage and metric: baseline, candidate, change, significance.")
    private List<StageComparison> stages;

    @JsonPropertyDescription(
            "What the comparison could not do as asked, e.g. a stage whose request rate the other"
                    + " run lacks (not compared), or a stage pair not comparable because one side"
                    + " has no successful request.")
    private List<String> notes;

    public List<String> getNotes() {
        return notes;
    }

    public void setNotes(List<String> notes) {
        this.notes = notes;
    }

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
