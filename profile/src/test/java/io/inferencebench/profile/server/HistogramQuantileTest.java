package io.inferencebench.profile.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * Expected values follow PromQL's bucketQuantile, derived by hand in the comments: rank = q ·
 * count; the first bucket whose cumulative count reaches the rank holds the quantile; linear
 * interpolation between the previous bound (0 for the first bucket when its bound is positive) and
 * this bound.
 */
class HistogramQuantileTest {

    private static final double INF = Double.POSITIVE_INFINITY;

    // le:       0.1  0.5  1    +Inf
    // cumul.:   10   30   45   50
    private static final double[] BOUNDS = {0.1, 0.5, 1.0, INF};
    private static final double[] COUNTS = {10, 30, 45, 50};

    private static double q(double q) {
        return HistogramQuantile.quantile(q, BOUNDS, COUNTS);
    }

    @Test
    void interpolatesLinearlyInsideTheBucket() {
        // q=0.5: rank 25 -> bucket le=0.5 (30 >= 25); 0.1 + (0.5-0.1) * (25-10)/(30-10) = 0.4
        assertThat(q(0.5)).isCloseTo(0.4, within(1e-15));
        // q=0.9: rank 45 -> bucket le=1 (45 >= 45); 0.5 + 0.5 * (45-30)/(45-30) = 1.0
        assertThat(q(0.9)).isEqualTo(1.0);
        // q=0.7: rank 35 -> bucket le=1; 0.5 + 0.5 * (35-30)/15 = 0.6666...
        assertThat(q(0.7)).isCloseTo(0.5 + 0.5 / 3, within(1e-15));
    }

    @Test
    void firstBucketStartsAtZeroWhenItsBoundIsPositive() {
        // q=0.1: rank 5 -> bucket le=0.1; 0 + 0.1 * 5/10 = 0.05
        assertThat(q(0.1)).isCloseTo(0.05, within(1e-15));
        // q=0: rank 0 -> first bucket, 0 + 0.1 * 0/10 = 0
        assertThat(q(0)).isZero();
    }

    @Test
    void rankInTheInfBucketGivesTheHighestFiniteBound() {
        // q=0.99: rank 49.5 > 45 -> +Inf bucket -> upper bound of the second highest bucket = 1
        assertThat(q(0.99)).isEqualTo(1.0);
        assertThat(q(1.0)).isEqualTo(1.0);
    }

    @Test
    void nonPositiveFirstBoundIsReturnedAsIs() {
        // le: -1 0 1 +Inf, cumul. 5 5 10 10; q=0.25: rank 2.5 -> first bucket, bound <= 0 -> -1
        double[] bounds = {-1, 0, 1, INF};
        double[] counts = {5, 5, 10, 10};
        assertThat(HistogramQuantile.quantile(0.25, bounds, counts)).isEqualTo(-1.0);
        // q=0.75: rank 7.5 -> bucket le=1; 0 + 1 * (7.5-5)/(10-5) = 0.5
        assertThat(HistogramQuantile.quantile(0.75, bounds, counts)).isEqualTo(0.5);
    }

    @Test
    void nonMonotonicCountsAreClampedFirst() {
        // le: 1 2 3 +Inf, cumul. 10 8 20 20 -> envelope 10 10 20 20
        // q=0.6: rank 12 -> bucket le=3; 2 + 1 * (12-10)/(20-10) = 2.2 (unclamped would give 2.333)
        double[] bounds = {1, 2, 3, INF};
        double[] counts = {10, 8, 20, 20};
        assertThat(HistogramQuantile.quantile(0.6, bounds, counts)).isCloseTo(2.2, within(1e-15));
    }

    @Test
    void sortsAndCoalescesEqualBounds() {
        // given unsorted, le=1 twice (4 and 6): sorted and coalesced -> le 1:10, 2:15, +Inf:20
        // q=0.5: rank 10 -> bucket le=1; 0 + 1 * 10/10 = 1
        double[] bounds = {INF, 1, 1, 2};
        double[] counts = {20, 4, 6, 15};
        assertThat(HistogramQuantile.quantile(0.5, bounds, counts)).isEqualTo(1.0);
        // q=0.6: rank 12 -> le=2; 1 + 1 * (12-10)/(15-10) = 1.4
        assertThat(HistogramQuantile.quantile(0.6, bounds, counts)).isCloseTo(1.4, within(1e-15));
    }

    @Test
    void specialCasesGiveNanOrInfinities() {
        assertThat(q(Double.NaN)).isNaN();
        assertThat(q(-0.1)).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(q(1.1)).isEqualTo(INF);
        // no +Inf bucket
        assertThat(HistogramQuantile.quantile(0.5, new double[] {1, 2}, new double[] {1, 2}))
                .isNaN();
        // fewer than two buckets
        assertThat(HistogramQuantile.quantile(0.5, new double[] {INF}, new double[] {3})).isNaN();
        // no observations
        assertThat(HistogramQuantile.quantile(0.5, BOUNDS, new double[] {0, 0, 0, 0})).isNaN();
        assertThat(HistogramQuantile.quantile(0.5, new double[0], new double[0])).isNaN();
    }

    @Test
    void precisionNoiseDoesNotBreakMonotonicity() {
        // cumul. 10, 10 - 1e-13 (float noise, within 1e-12 relative) -> treated as 10
        double[] bounds = {1, 2, INF};
        double[] counts = {10, 10 - 1e-13, 10};
        // q=0.5: rank 5 -> first bucket; 0 + 1 * 5/10 = 0.5
        assertThat(HistogramQuantile.quantile(0.5, bounds, counts)).isEqualTo(0.5);
    }
}
