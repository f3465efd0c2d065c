package io.inferencebench.profile.compare;

import java.util.List;

/**
 * One matched pair of stages.
 *
 * @param stage 1-based position in the comparison (the baseline's order)
 * @param baselineRate the baseline stage's requested rate, req/s ({@code +Inf} when unbounded)
 * @param candidateRate the candidate stage's requested rate
 * @param baselineProfile label (e.g. file name) of the baseline profile, or {@code null}
 * @param candidateProfile label of the candidate profile, or {@code null}
 * @param metrics the compared statistics
 */
public record StageComparison(
        int stage,
        double baselineRate,
        double candidateRate,
        String baselineProfile,
        String candidateProfile,
        List<MetricComparison> metrics) {

    /**
     * The comparison of one statistic.
     *
     * @param name e.g. {@code ttft_p99}
     * @return it, or {@code null} when not compared in this stage
     */
    public MetricComparison metric(String name) {
        return metrics.stream().filter(m -> m.name().equals(name)).findFirst().orElse(null);
    }
}
