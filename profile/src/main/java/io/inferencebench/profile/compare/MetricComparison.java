package io.inferencebench.profile.compare;

/**
 * One statistic of one metric in one stage, in both runs.
 *
 * @param name output name, e.g. {@code ttft_p99} or {@code output_throughput}
 * @param metric the metric
 * @param statistic {@code p50}, {@code p90}, {@code p99} or {@code value}
 * @param baseline the baseline's value ({@code null} when its profile lacks it)
 * @param candidate the candidate's value ({@code null} when its profile lacks it)
 * @param change relative change {@code (candidate - baseline) / baseline}; {@code null} when a
 *     value is missing or the baseline is 0
 * @param threshold the relative threshold applied
 * @param beyondThreshold the change exceeds the threshold
 * @param beyondNoise the statistical test found the difference beyond sampling noise; {@code null}
 *     when no test was possible (threshold only)
 * @param significant beyond the threshold and, where a test was possible, beyond the noise
 * @param worse the side with the worse value
 * @param test {@code mann-whitney}, {@code quantile-test}, {@code two-proportion} or {@code
 *     threshold-only}
 * @param pValue the test's two-sided p-value where a test was possible; it is beyond the noise when
 *     below {@code alpha} divided by the number of tested statistics in the comparison (Bonferroni:
 *     the verdict is one claim about all of them)
 * @param repeats how many repeats each side gave and the spread of their values, when the statistic
 *     was judged across repeats ({@code test} {@value #TEST_REPEATS}); else {@code null}
 * @param detectable with repeats: the smallest relative change that would test significant at this
 *     noise (half the width of the change's confidence interval at the per-test level); else {@code
 *     null}
 * @param inconclusive not significant, yet the noise could hide a change of the threshold's size:
 *     {@code detectable > threshold}
 * @param absent why a side has no value ({@code "candidate: vllm bench serve 0.33.0 does not report
 *     ttft p90"}), both sides' reasons when both lack it; {@code null} when both have a value. A
 *     missing value is never taken as 0: such a statistic is not compared and has no part in the
 *     verdict.
 */
public record MetricComparison(
        String name,
        Metric metric,
        String statistic,
        Double baseline,
        Double candidate,
        Double change,
        double threshold,
        boolean beyondThreshold,
        Boolean beyondNoise,
        boolean significant,
        Side worse,
        String test,
        Double pValue,
        String absent,
        Repeats repeats,
        Double detectable,
        boolean inconclusive) {

    /**
     * A statistic judged across repeats: each repeat of the stage gave one value.
     *
     * @param baseline the baseline's repeats
     * @param candidate the candidate's repeats
     * @param standardError the standard error of the difference of the means
     * @param degreesOfFreedom Welch–Satterthwaite degrees of freedom ({@code n - 1} when paired)
     */
    public record Repeats(
            int baseline, int candidate, double standardError, double degreesOfFreedom) {}

    /** Test name of a statistic judged across repeats: Welch's t-test on each repeat's value. */
    public static final String TEST_REPEATS = "welch-repeats";

    /**
     * Test name of a statistic judged across repeats that drew the same schedules pair by pair (the
     * same seed): a paired t-test of the differences, repeat by repeat.
     */
    public static final String TEST_PAIRED_REPEATS = "paired-repeats";

    /** Test name of a latency median: Mann–Whitney U over the two histograms. */
    public static final String TEST_MANN_WHITNEY = "mann-whitney";

    /**
     * Test name of a tail percentile: the quantile test (shares above the pooled percentile,
     * Fisher's exact test).
     */
    public static final String TEST_QUANTILE = "quantile-test";

    /** Test name of goodput: the two SLO attainment proportions. */
    public static final String TEST_TWO_PROPORTION = "two-proportion";

    /** No statistical test was possible: the threshold alone decides. */
    public static final String TEST_THRESHOLD_ONLY = "threshold-only";

    /**
     * Whether this is a significant change for the worse.
     *
     * @return significant and the candidate is worse
     */
    public boolean regressed() {
        return significant && worse == Side.CANDIDATE;
    }

    /**
     * Whether this is a significant change for the better.
     *
     * @return significant and the baseline is worse
     */
    public boolean improved() {
        return significant && worse == Side.BASELINE;
    }
}
