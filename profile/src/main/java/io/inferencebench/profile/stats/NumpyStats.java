package io.inferencebench.profile.stats;

import java.util.Arrays;

/**
 * Descriptive statistics with numpy's semantics, so that profiles agree with what {@code numpy}
 * (and therefore LPG and {@code vllm bench serve}) would report for the same samples.
 *
 * <ul>
 *   <li>{@link #mean} sums with numpy's pairwise summation and divides by the count;
 *   <li>{@link #sd} is the population standard deviation ({@code ddof = 0}), two-pass like {@code
 *       np.std};
 *   <li>{@link #median} averages the two middle values for an even count like {@code np.median};
 *   <li>{@link #percentile} is {@code np.percentile} with its default {@code method="linear"}.
 * </ul>
 *
 * <p>Empty inputs give {@code 0}, as LPG's profiles do ("empty sets give 0"); statistics are never
 * NaN for finite input.
 */
public final class NumpyStats {

    /** numpy's block size for unrolled pairwise summation ({@code PW_BLOCKSIZE}). */
    private static final int PAIRWISE_BLOCK = 128;

    private NumpyStats() {}

    /**
     * Sum as {@code np.sum} computes it for a contiguous float64 array: pairwise summation in
     * blocks of eight partial sums.
     *
     * @param values the values (not modified)
     * @return the sum, {@code 0} for an empty array
     */
    public static double sum(double[] values) {
        return sum(values, 0, values.length);
    }

    /**
     * Sum of {@code values[from, from+length)} with numpy's pairwise summation.
     *
     * @param values the values (not modified)
     * @param from first index
     * @param length number of values
     * @return the sum, {@code 0} when {@code length == 0}
     */
    public static double sum(double[] values, int from, int length) {
        return pairwiseSum(values, from, length);
    }

    private static double pairwiseSum(double[] a, int from, int n) {
        if (n < 8) {
            double res = 0.0;
            for (int i = 0; i < n; i++) {
                res += a[from + i];
            }
            return res;
        } else if (n <= PAIRWISE_BLOCK) {
            double r0 = a[from];
            double r1 = a[from + 1];
            double r2 = a[from + 2];
            double r3 = a[from + 3];
            double r4 = a[from + 4];
            double r5 = a[from + 5];
            double r6 = a[from + 6];
            double r7 = a[from + 7];
            int i;
            for (i = 8; i < n - (n % 8); i += 8) {
                r0 += a[from + i];
                r1 += a[from + i + 1];
                r2 += a[from + i + 2];
                r3 += a[from + i + 3];
                r4 += a[from + i + 4];
                r5 += a[from + i + 5];
                r6 += a[from + i + 6];
                r7 += a[from + i + 7];
            }
            double res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
            for (; i < n; i++) {
                res += a[from + i];
            }
            return res;
        } else {
            int n2 = n / 2;
            n2 -= n2 % 8;
            return pairwiseSum(a, from, n2) + pairwiseSum(a, from + n2, n - n2);
        }
    }

    /**
     * Arithmetic mean like {@code np.mean}.
     *
     * @param values the values (not modified)
     * @return the mean, {@code 0} for an empty array
     */
    public static double mean(double[] values) {
        return mean(values, values.length);
    }

    /**
     * Arithmetic mean of the first {@code count} values.
     *
     * @param values the values (not modified)
     * @param count how many leading values to use
     * @return the mean, {@code 0} when {@code count == 0}
     */
    public static double mean(double[] values, int count) {
        if (count == 0) {
            return 0.0;
        }
        return sum(values, 0, count) / count;
    }

    /**
     * Population standard deviation ({@code ddof = 0}) like {@code np.std}.
     *
     * @param values the values (not modified)
     * @return the standard deviation, {@code 0} for an empty array
     */
    public static double sd(double[] values) {
        return sd(values, values.length);
    }

    /**
     * Population standard deviation of the first {@code count} values.
     *
     * @param values the values (not modified)
     * @param count how many leading values to use
     * @return the standard deviation, {@code 0} when {@code count == 0}
     */
    public static double sd(double[] values, int count) {
        if (count == 0) {
            return 0.0;
        }
        double mean = mean(values, count);
        double[] squared = new double[count];
        for (int i = 0; i < count; i++) {
            double d = values[i] - mean;
            squared[i] = d * d;
        }
        return Math.sqrt(sum(squared, 0, count) / count);
    }

    /**
     * Median like {@code np.median}: the middle value, or the mean of the two middle values.
     *
     * @param sorted values sorted ascending
     * @return the median, {@code 0} for an empty array
     */
    public static double median(double[] sorted) {
        return median(sorted, sorted.length);
    }

    /**
     * Median of the first {@code count} values of an ascending array.
     *
     * @param sorted values whose first {@code count} entries are sorted ascending
     * @param count how many leading values to use
     * @return the median, {@code 0} when {@code count == 0}
     */
    public static double median(double[] sorted, int count) {
        if (count == 0) {
            return 0.0;
        }
        int half = count / 2;
        if (count % 2 == 1) {
            return sorted[half];
        }
        return (sorted[half - 1] + sorted[half]) / 2.0;
    }

    /**
     * Percentile like {@code np.percentile(values, p)} with the default linear method.
     *
     * @param sorted values sorted ascending
     * @param p percentile in {@code [0, 100]}
     * @return the interpolated value, {@code 0} for an empty array
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 100]} or NaN
     */
    public static double percentile(double[] sorted, double p) {
        return percentile(sorted, sorted.length, p);
    }

    /**
     * Percentile of the first {@code count} values of an ascending array, numpy's linear method.
     *
     * @param sorted values whose first {@code count} entries are sorted ascending
     * @param count how many leading values to use
     * @param p percentile in {@code [0, 100]}
     * @return the interpolated value, {@code 0} when {@code count == 0}
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 100]} or NaN
     */
    public static double percentile(double[] sorted, int count, double p) {
        checkPercentile(p);
        if (count == 0) {
            return 0.0;
        }
        double q = p / 100.0;
        double virtualIndex = (count - 1) * q;
        double previous = Math.floor(virtualIndex);
        int lo = (int) previous;
        int hi = Math.min(lo + 1, count - 1);
        double gamma = virtualIndex - previous;
        return lerp(sorted[lo], sorted[hi], gamma);
    }

    /**
     * numpy's {@code _lerp}: interpolates from the nearer end so {@code t = 1} gives exactly {@code
     * b}.
     */
    static double lerp(double a, double b, double t) {
        double diff = b - a;
        if (t >= 0.5) {
            return b - diff * (1 - t);
        }
        return a + diff * t;
    }

    /**
     * Percentile of unsorted values; sorts a copy.
     *
     * @param values values in any order (not modified)
     * @param p percentile in {@code [0, 100]}
     * @return the interpolated value, {@code 0} for an empty array
     */
    public static double percentileOfUnsorted(double[] values, double p) {
        double[] copy = values.clone();
        Arrays.sort(copy);
        return percentile(copy, p);
    }

    /**
     * Validates a percentile argument.
     *
     * @param p the percentile
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 100]} or NaN
     */
    static void checkPercentile(double p) {
        if (!(p >= 0.0 && p <= 100.0)) {
            throw new IllegalArgumentException("percentile must be in [0, 100], got " + p);
        }
    }
}
