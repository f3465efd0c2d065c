package io.inferencebench.profile.compare;

import java.util.List;

/**
 * One pair of stages, matched by request rate (closed-loop stages also by concurrency).
 *
 * @param stage 1-based position in the comparison (the baseline's order)
 * @param baselineRate the baseline stage's requested rate, req/s ({@code +Inf} when unbounded)
 * @param candidateRate the candidate stage's requested rate (the same rate: stages are paired by
 *     it)
 * @param concurrency the baseline stage's concurrency ({@code metrics.max_concurrency}: of a
 *     closed-loop stage, or the cap of an open-loop one), or {@code null}
 * @param baselineProfile label (e.g. file name) of the baseline profile, or {@code null}
 * @param candidateProfile label of the candidate profile, or {@code null}
 * @param notComparable why the pair is not compared (a side without a successful request), or
 *     {@code null} when it is; such a pair has no metrics and no part in the verdict
 * @param metrics the compared statistics
 */
public record StageComparison(
        int stage,
        double baselineRate,
        double candidateRate,
        Integer concurrency,
        String baselineProfile,
        String candidateProfile,
        String notComparable,
        List<MetricComparison> metrics) {

    /**
     * Whether the pair was compared.
     *
     * @return {@code false} when {@link #notComparable()} says why not
     */
    public boolean comparable() {
        return notComparable == null;
    }

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
