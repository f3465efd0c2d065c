package io.inferencebench.profile.compare;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * How large and how certain a change must be to count.
 *
 * @param defaultThreshold relative change (0.05 = 5 %) a metric must exceed unless {@code
 *     thresholds} has its own
 * @param thresholds per-metric relative thresholds
 * @param alpha significance level of the statistical tests (two-sided); a change within the noise
 *     at this level is not significant however large it is
 * @param tailsInVerdict whether significant p90/p99 changes decide the verdict too; by default they
 *     are reported but do not: the tests treat a run's requests as independent, while a few seconds
 *     of a busy client machine delay a run's slowest requests together, so two runs of one
 *     unchanged server differ "significantly" in their tails (seen: p99 +88 %, p = 1e-5); the
 *     repeats of one run share that run's machine too, so a test over them misses it as well (seen:
 *     ITL p99 +84 % across 10 repeats a side of an unchanged server)
 */
public record ComparisonOptions(
        double defaultThreshold,
        Map<Metric, Double> thresholds,
        double alpha,
        boolean tailsInVerdict) {

    /** 5 %: the default relative threshold. */
    public static final double DEFAULT_THRESHOLD = 0.05;

    /** 0.05: the default significance level. */
    public static final double DEFAULT_ALPHA = 0.05;

    /**
     * Validates and copies.
     *
     * @throws IllegalArgumentException when a threshold is negative or not finite, or alpha is
     *     outside (0, 1)
     */
    public ComparisonOptions {
        checkThreshold("default threshold", defaultThreshold);
        Map<Metric, Double> copy = new EnumMap<>(Metric.class);
        if (thresholds != null) {
            thresholds.forEach(
                    (m, t) -> {
                        checkThreshold(m.key() + " threshold", t);
                        copy.put(m, t);
                    });
        }
        thresholds = Collections.unmodifiableMap(copy);
        if (!(alpha > 0 && alpha < 1)) {
            throw new IllegalArgumentException("alpha must be within (0, 1), got " + alpha);
        }
    }

    /**
     * Options whose verdict leaves the tail percentiles out.
     *
     * @param defaultThreshold see the record
     * @param thresholds see the record
     * @param alpha see the record
     */
    public ComparisonOptions(
            double defaultThreshold, Map<Metric, Double> thresholds, double alpha) {
        this(defaultThreshold, thresholds, alpha, false);
    }

    /**
     * The defaults: 5 % for every metric, alpha 0.05, tails reported but not in the verdict.
     *
     * @return the options
     */
    public static ComparisonOptions defaults() {
        return new ComparisonOptions(DEFAULT_THRESHOLD, Map.of(), DEFAULT_ALPHA, false);
    }

    /**
     * These options with the tail percentiles in or out of the verdict.
     *
     * @param include whether significant p90/p99 changes decide the verdict
     * @return the options
     */
    public ComparisonOptions withTailsInVerdict(boolean include) {
        return new ComparisonOptions(defaultThreshold, thresholds, alpha, include);
    }

    /**
     * The relative threshold of one metric.
     *
     * @param metric the metric
     * @return its own threshold, else the default one
     */
    public double threshold(Metric metric) {
        return thresholds.getOrDefault(metric, defaultThreshold);
    }

    /**
     * A copy with another default threshold.
     *
     * @param threshold relative threshold
     * @return the copy
     */
    public ComparisonOptions withDefaultThreshold(double threshold) {
        return new ComparisonOptions(threshold, thresholds, alpha, tailsInVerdict);
    }

    /**
     * A copy with one metric's threshold set.
     *
     * @param metric the metric
     * @param threshold relative threshold
     * @return the copy
     */
    public ComparisonOptions withThreshold(Metric metric, double threshold) {
        Map<Metric, Double> copy = new EnumMap<>(Metric.class);
        copy.putAll(thresholds);
        copy.put(metric, threshold);
        return new ComparisonOptions(defaultThreshold, copy, alpha, tailsInVerdict);
    }

    /**
     * A copy with another significance level.
     *
     * @param level alpha in (0, 1)
     * @return the copy
     */
    public ComparisonOptions withAlpha(double level) {
        return new ComparisonOptions(defaultThreshold, thresholds, level, tailsInVerdict);
    }

    private static void checkThreshold(String what, Double t) {
        if (t == null || !(t >= 0) || Double.isInfinite(t)) {
            throw new IllegalArgumentException(what + " must be a finite number >= 0, got " + t);
        }
    }
}
