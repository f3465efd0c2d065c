package io.inferencebench.profile.server;

import java.util.Arrays;

/**
 * Prometheus' {@code histogram_quantile} for classic (bucketed) histograms, with the same special
 * cases as {@code bucketQuantile} in PromQL: buckets sorted by upper bound, equal bounds coalesced,
 * float-precision and non-monotonic cumulative counts fixed, linear interpolation inside the bucket
 * holding rank {@code q · count}, a lower bound of 0 for the first bucket when its upper bound is
 * positive (otherwise that upper bound is the answer), and the highest finite bound when the rank
 * falls into the {@code +Inf} bucket.
 */
public final class HistogramQuantile {

    private HistogramQuantile() {}

    /**
     * The q-quantile of a cumulative histogram.
     *
     * @param q quantile in {@code [0, 1]}
     * @param upperBounds bucket upper bounds ({@code le}), any order, must include {@code +Inf}
     * @param cumulativeCounts cumulative counts matching {@code upperBounds}
     * @return the quantile; NaN when q is NaN, the highest bucket is not {@code +Inf}, there are
     *     fewer than two buckets or no observations; {@code -Inf}/{@code +Inf} for q below 0 /
     *     above 1
     */
    public static double quantile(double q, double[] upperBounds, double[] cumulativeCounts) {
        if (upperBounds.length != cumulativeCounts.length) {
            throw new IllegalArgumentException("bounds and counts differ in length");
        }
        if (Double.isNaN(q)) {
            return Double.NaN;
        }
        if (q < 0) {
            return Double.NEGATIVE_INFINITY;
        }
        if (q > 1) {
            return Double.POSITIVE_INFINITY;
        }
        int n = upperBounds.length;
        if (n == 0) {
            return Double.NaN;
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Double.compare(upperBounds[a], upperBounds[b]));
        double[] bounds = new double[n];
        double[] counts = new double[n];
        for (int i = 0; i < n; i++) {
            bounds[i] = upperBounds[order[i]];
            counts[i] = cumulativeCounts[order[i]];
        }
        if (bounds[n - 1] != Double.POSITIVE_INFINITY) {
            return Double.NaN;
        }
        // coalesce equal upper bounds
        int m = 0;
        for (int i = 1; i < n; i++) {
            if (bounds[i] == bounds[m]) {
                counts[m] += counts[i];
            } else {
                m++;
                bounds[m] = bounds[i];
                counts[m] = counts[i];
            }
        }
        n = m + 1;
        correctPrecisionErrors(counts, n, 1e-12);
        ensureMonotonic(counts, n);
        if (n < 2) {
            return Double.NaN;
        }
        double observations = counts[n - 1];
        if (observations == 0) {
            return Double.NaN;
        }
        double rank = q * observations;
        int b = n - 1;
        for (int i = 0; i < n - 1; i++) {
            if (counts[i] >= rank) {
                b = i;
                break;
            }
        }
        if (b == n - 1) {
            return bounds[n - 2];
        }
        if (b == 0 && bounds[0] <= 0) {
            return bounds[0];
        }
        double bucketStart = 0;
        double bucketEnd = bounds[b];
        double count = counts[b];
        if (b > 0) {
            bucketStart = bounds[b - 1];
            count -= counts[b - 1];
            rank -= counts[b - 1];
        }
        return bucketStart + (bucketEnd - bucketStart) * (rank / count);
    }

    private static void correctPrecisionErrors(double[] counts, int n, double tolerance) {
        double prev = counts[0];
        for (int i = 1; i < n; i++) {
            double curr = counts[i];
            double delta = Math.abs(curr - prev);
            if (delta == 0) {
                continue;
            }
            if (delta / curr <= tolerance) {
                counts[i] = prev;
            } else {
                prev = curr;
            }
        }
    }

    private static void ensureMonotonic(double[] counts, int n) {
        double max = counts[0];
        for (int i = 1; i < n; i++) {
            if (counts[i] > max) {
                max = counts[i];
            } else if (counts[i] < max) {
                counts[i] = max;
            }
        }
    }
}
