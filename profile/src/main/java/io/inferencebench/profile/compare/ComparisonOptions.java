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
 */
public record ComparisonOptions(
        double defaultThreshold, Map<Metric, Double> thresholds, double alpha) {

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
     * The defaults: 5 % for every metric, alpha 0.05.
     *
     * @return the options
     */
    public static ComparisonOptions defaults() {
        return new ComparisonOptions(DEFAULT_THRESHOLD, Map.of(), DEFAULT_ALPHA);
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
        return new ComparisonOptions(threshold, thresholds, alpha);
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
        return new ComparisonOptions(defaultThreshold, copy, alpha);
    }

    /**
     * A copy with another significance level.
     *
     * @param level alpha in (0, 1)
     * @return the copy
     */
    public ComparisonOptions withAlpha(double level) {
        return new ComparisonOptions(defaultThreshold, thresholds, level);
    }

    private static void checkThreshold(String what, Double t) {
        if (t == null || !(t >= 0) || Double.isInfinite(t)) {
            throw new IllegalArgumentException(what + " must be a finite number >= 0, got " + t);
        }
    }
}
