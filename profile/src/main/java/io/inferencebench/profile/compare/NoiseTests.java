package io.inferencebench.profile.compare;

import io.inferencebench.profile.stats.HistogramBucket;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The statistical tests that decide whether a difference between two runs is beyond their sampling
 * noise, computed from histogram bucket counts (no raw samples needed).
 */
public final class NoiseTests {

    private NoiseTests() {}

    /**
     * Mann–Whitney U test of two samples given as histograms; ties (values in buckets with the same
     * representative) get mid-ranks and the variance its tie correction; the p-value comes from the
     * normal approximation (both samples here have tens to millions of values).
     *
     * @param a buckets of the first sample, increasing
     * @param b buckets of the second sample, increasing
     * @return two-sided p-value, {@code 1} when either sample is empty or all values tie
     */
    public static double mannWhitneyPValue(List<HistogramBucket> a, List<HistogramBucket> b) {
        record Cell(double value, long countA, long countB) {}
        List<Cell> cells = new ArrayList<>();
        for (HistogramBucket x : a) {
            cells.add(new Cell(x.representative(), x.count(), 0));
        }
        for (HistogramBucket y : b) {
            cells.add(new Cell(y.representative(), 0, y.count()));
        }
        cells.sort(Comparator.comparingDouble(Cell::value));
        double n1 = 0;
        double n2 = 0;
        for (Cell c : cells) {
            n1 += c.countA;
            n2 += c.countB;
        }
        if (n1 == 0 || n2 == 0) {
            return 1.0;
        }
        double n = n1 + n2;
        double rankSumA = 0;
        double tieTerm = 0;
        double below = 0;
        for (int i = 0; i < cells.size(); ) {
            int j = i;
            long tiedA = 0;
            long tiedB = 0;
            while (j < cells.size() && cells.get(j).value == cells.get(i).value) {
                tiedA += cells.get(j).countA;
                tiedB += cells.get(j).countB;
                j++;
            }
            double t = tiedA + tiedB;
            double midRank = below + (t + 1) / 2;
            rankSumA += tiedA * midRank;
            tieTerm += t * t * t - t;
            below += t;
            i = j;
        }
        double u = rankSumA - n1 * (n1 + 1) / 2;
        double mean = n1 * n2 / 2;
        double variance = n1 * n2 / 12 * ((n + 1) - tieTerm / (n * (n - 1)));
        if (!(variance > 0)) {
            return 1.0;
        }
        // continuity correction toward the mean
        double z = (Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
        return Math.min(1.0, 2 * upperTail(Math.max(0, z)));
    }

    /**
     * Distribution-free confidence interval of a quantile from a histogram: the order statistics at
     * ranks {@code n·p ± z·sqrt(n·p·(1−p))} (the binomial distribution of how many values fall
     * below the true quantile, which is what a bootstrap of the percentile over the histogram
     * approximates), widened to the bucket edges.
     *
     * @param buckets the sample, increasing
     * @param percentile in (0, 100)
     * @param confidence e.g. 0.95
     * @return {@code [low, high]}, or {@code null} for an empty sample
     */
    public static double[] quantileInterval(
            List<HistogramBucket> buckets, double percentile, double confidence) {
        long n = 0;
        for (HistogramBucket b : buckets) {
            n += b.count();
        }
        if (n == 0) {
            return null;
        }
        double p = percentile / 100.0;
        double z = normalQuantile(1 - (1 - confidence) / 2);
        double spread = z * Math.sqrt(n * p * (1 - p));
        long lowRank = Math.max(1, (long) Math.floor(n * p - spread));
        long highRank = Math.min(n, (long) Math.ceil(n * p + spread) + 1);
        double low = Double.NaN;
        double high = Double.NaN;
        long seen = 0;
        for (HistogramBucket b : buckets) {
            seen += b.count();
            if (Double.isNaN(low) && seen >= lowRank) {
                low = b.lowest();
            }
            if (seen >= highRank) {
                high = b.highest();
                break;
            }
        }
        if (Double.isNaN(high)) {
            high = buckets.get(buckets.size() - 1).highest();
        }
        return new double[] {low, high};
    }

    /**
     * Whether two point estimates differ by more than their noise, given each one's confidence
     * interval: the half-widths facing each other, taken as {@code z} standard errors, are combined
     * in quadrature, so the test has the intervals' level for the difference.
     *
     * @param a estimate of the first sample
     * @param intervalA its interval
     * @param b estimate of the second sample
     * @param intervalB its interval
     * @return {@code true} when the difference is beyond the combined noise
     */
    public static boolean beyondIntervals(
            double a, double[] intervalA, double b, double[] intervalB) {
        double halfA = b >= a ? intervalA[1] - a : a - intervalA[0];
        double halfB = b >= a ? b - intervalB[0] : intervalB[1] - b;
        double combined = Math.sqrt(Math.max(0, halfA) * halfA + Math.max(0, halfB) * halfB);
        return Math.abs(b - a) > combined;
    }

    /**
     * Two-proportion z-test (pooled), for SLO attainment.
     *
     * @param successesA successes of the first sample
     * @param trialsA trials of the first sample
     * @param successesB successes of the second sample
     * @param trialsB trials of the second sample
     * @return two-sided p-value, {@code 1} when a sample is empty or both proportions are 0 or 1
     */
    public static double twoProportionPValue(
            long successesA, long trialsA, long successesB, long trialsB) {
        if (trialsA <= 0 || trialsB <= 0) {
            return 1.0;
        }
        double pa = (double) successesA / trialsA;
        double pb = (double) successesB / trialsB;
        double pooled = (double) (successesA + successesB) / (trialsA + trialsB);
        double variance = pooled * (1 - pooled) * (1.0 / trialsA + 1.0 / trialsB);
        if (!(variance > 0)) {
            return 1.0;
        }
        return Math.min(1.0, 2 * upperTail(Math.abs(pa - pb) / Math.sqrt(variance)));
    }

    /**
     * {@code P(Z > z)} for a standard normal Z (complementary error function of Numerical Recipes'
     * {@code erfcc}, fractional error below 1.2e-7).
     *
     * @param z the value
     * @return the upper tail probability
     */
    public static double upperTail(double z) {
        double x = Math.abs(z) / Math.sqrt(2);
        double t = 1 / (1 + 0.5 * x);
        double poly = 0;
        for (int i = ERFCC.length - 1; i >= 0; i--) {
            poly = ERFCC[i] + t * poly;
        }
        double tail = t * Math.exp(-x * x + poly) / 2;
        return z >= 0 ? tail : 1 - tail;
    }

    private static final double[] ERFCC = {
        -1.26551223,
        1.00002368,
        0.37409196,
        0.09678418,
        -0.18628806,
        0.27886807,
        -1.13520398,
        1.48851587,
        -0.82215223,
        0.17087277
    };

    /**
     * The standard normal quantile, by bisection of {@link #upperTail} (accurate to 1e-9).
     *
     * @param probability in (0, 1)
     * @return z with {@code P(Z <= z) = probability}
     */
    public static double normalQuantile(double probability) {
        double lo = -10;
        double hi = 10;
        for (int i = 0; i < 80; i++) {
            double mid = (lo + hi) / 2;
            if (1 - upperTail(mid) < probability) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }
}
