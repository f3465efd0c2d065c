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
        return mannWhitneyPValue(a, b, 0, 0);
    }

    /**
     * Mann–Whitney U test with effective sample sizes: for values that come in correlated groups
     * (the inter-token gaps of one request share its server and client hiccups) the test's variance
     * is that of {@code effectiveA} and {@code effectiveB} independent values, not of every value.
     *
     * @param a buckets of the first sample, increasing
     * @param b buckets of the second sample, increasing
     * @param effectiveA independent values in {@code a}; {@code <= 0} or more than its count means
     *     its count
     * @param effectiveB independent values in {@code b}, likewise
     * @return two-sided p-value, {@code 1} when either sample is empty or all values tie
     */
    public static double mannWhitneyPValue(
            List<HistogramBucket> a, List<HistogramBucket> b, long effectiveA, long effectiveB) {
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
        // U / (n1 n2) estimates P(a > b) + P(a = b) / 2, whatever the sizes; its null variance
        // is that of the effective sizes, with the ties' correction of the whole sample.
        double auc = u / (n1 * n2);
        double e1 = effectiveA > 0 && effectiveA < n1 ? effectiveA : n1;
        double e2 = effectiveB > 0 && effectiveB < n2 ? effectiveB : n2;
        double tieFactor = n > 1 ? 1 - tieTerm / (n * n * n - n) : 0;
        double variance = tieFactor * (e1 + e2 + 1) / (12 * e1 * e2);
        if (!(variance > 0)) {
            return 1.0;
        }
        // continuity correction toward the mean
        double z = (Math.abs(auc - 0.5) - 0.5 / (e1 * e2)) / Math.sqrt(variance);
        return Math.min(1.0, 2 * upperTail(Math.max(0, z)));
    }

    /**
     * Quantile test (Mood's median test at any quantile): the pooled sample's {@code percentile}
     * splits both samples into values above it and the rest, and Fisher's exact test asks whether
     * the two samples' shares above it differ. It needs no assumption about the distributions'
     * shape, and it knows that a p99 of 150 values rests on the one or two largest: a few slow
     * requests more in one run is no evidence.
     *
     * @param a buckets of the first sample, increasing
     * @param b buckets of the second sample, increasing
     * @param percentile in (0, 100)
     * @param effectiveA independent values in {@code a} (see {@link #mannWhitneyPValue(List, List,
     *     long, long)}); {@code <= 0} means its count
     * @param effectiveB independent values in {@code b}, likewise
     * @return two-sided p-value, {@code 1} when a sample is empty
     */
    public static double quantileTestPValue(
            List<HistogramBucket> a,
            List<HistogramBucket> b,
            double percentile,
            long effectiveA,
            long effectiveB) {
        long n1 = total(a);
        long n2 = total(b);
        if (n1 == 0 || n2 == 0) {
            return 1.0;
        }
        List<HistogramBucket> pooled = new ArrayList<>(a);
        pooled.addAll(b);
        pooled.sort(Comparator.comparingDouble(HistogramBucket::representative));
        long rank = (long) Math.ceil((n1 + n2) * percentile / 100.0);
        double split = pooled.get(pooled.size() - 1).representative();
        long seen = 0;
        for (HistogramBucket x : pooled) {
            seen += x.count();
            if (seen >= rank) {
                split = x.representative();
                break;
            }
        }
        long aboveA = above(a, split);
        long aboveB = above(b, split);
        long e1 = effectiveA > 0 && effectiveA < n1 ? effectiveA : n1;
        long e2 = effectiveB > 0 && effectiveB < n2 ? effectiveB : n2;
        return fisherExactPValue(
                Math.round((double) aboveA * e1 / n1),
                e1,
                Math.round((double) aboveB * e2 / n2),
                e2);
    }

    /**
     * Fisher's exact test of two proportions {@code k1/n1} and {@code k2/n2}, two-sided (the sum of
     * the probabilities of all tables with the same margins that are no more likely than the
     * observed one).
     *
     * @param k1 successes of the first sample
     * @param n1 size of the first sample
     * @param k2 successes of the second sample
     * @param n2 size of the second sample
     * @return the p-value
     */
    public static double fisherExactPValue(long k1, long n1, long k2, long n2) {
        long k = k1 + k2;
        long n = n1 + n2;
        if (n1 <= 0 || n2 <= 0 || k == 0 || k == n) {
            return 1.0;
        }
        double observed = logHypergeometric(k1, n1, k, n);
        double p = 0;
        for (long x = Math.max(0, k - n2); x <= Math.min(n1, k); x++) {
            double log = logHypergeometric(x, n1, k, n);
            if (log <= observed + 1e-7) {
                p += Math.exp(log);
            }
        }
        return Math.min(1.0, p);
    }

    private static double logHypergeometric(long x, long n1, long k, long n) {
        return logChoose(n1, x) + logChoose(n - n1, k - x) - logChoose(n, k);
    }

    private static double logChoose(long n, long k) {
        return logGamma(n + 1.0) - logGamma(k + 1.0) - logGamma(n - k + 1.0);
    }

    /** ln Γ(x) for x &gt; 0 (Lanczos, g = 7, nine terms: about 15 significant digits). */
    static double logGamma(double x) {
        if (x < 0.5) {
            return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
        }
        double z = x - 1;
        double sum = LANCZOS[0];
        for (int i = 1; i < LANCZOS.length; i++) {
            sum += LANCZOS[i] / (z + i);
        }
        double t = z + 7.5;
        return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
    }

    private static final double[] LANCZOS = {
        0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
        -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
        1.5056327351493116e-7
    };

    private static long total(List<HistogramBucket> buckets) {
        long n = 0;
        for (HistogramBucket x : buckets) {
            n += x.count();
        }
        return n;
    }

    private static long above(List<HistogramBucket> buckets, double split) {
        long n = 0;
        for (HistogramBucket x : buckets) {
            if (x.representative() > split) {
                n += x.count();
            }
        }
        return n;
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
