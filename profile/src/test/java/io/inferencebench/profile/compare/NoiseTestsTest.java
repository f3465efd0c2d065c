package io.inferencebench.profile.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.stats.HistogramBucket;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class NoiseTestsTest {

    private static List<HistogramBucket> buckets(double... values) {
        MetricRecorder r = new MetricRecorder();
        for (double v : values) {
            r.record(v);
        }
        return r.histogramBuckets();
    }

    @Test
    void normalTailMatchesTheTable() {
        assertThat(NoiseTests.upperTail(0)).isCloseTo(0.5, within(1e-7));
        assertThat(NoiseTests.upperTail(1.959964)).isCloseTo(0.025, within(1e-6));
        assertThat(NoiseTests.upperTail(-1.644854)).isCloseTo(0.95, within(1e-6));
        assertThat(NoiseTests.normalQuantile(0.975)).isCloseTo(1.959964, within(1e-5));
    }

    @Test
    void mannWhitneyOfSeparatedSmallSamplesMatchesTheNormalApproximation() {
        // U = 0, mean 4.5, variance 3*3/12*7 = 5.25, continuity-corrected z = 4/sqrt(5.25):
        // two-sided p = 0.08086 (scipy.stats.mannwhitneyu(..., method="asymptotic") gives the same)
        double p = NoiseTests.mannWhitneyPValue(buckets(1, 2, 3), buckets(4, 5, 6));
        assertThat(p).isCloseTo(0.08086, within(2e-4));
        assertThat(NoiseTests.mannWhitneyPValue(buckets(4, 5, 6), buckets(1, 2, 3)))
                .isCloseTo(p, within(1e-12));
    }

    @Test
    void mannWhitneySeesAShiftOfLargeSamplesButNotTheSameDistribution() {
        Random random = new Random(7);
        double[] a = new double[5000];
        double[] b = new double[5000];
        double[] shifted = new double[5000];
        for (int i = 0; i < a.length; i++) {
            a[i] = 100 + 10 * random.nextGaussian();
            b[i] = 100 + 10 * random.nextGaussian();
            shifted[i] = 102 + 10 * random.nextGaussian();
        }
        assertThat(NoiseTests.mannWhitneyPValue(buckets(a), buckets(b))).isGreaterThan(0.01);
        assertThat(NoiseTests.mannWhitneyPValue(buckets(a), buckets(shifted))).isLessThan(1e-6);
    }

    @Test
    void allTiedOrEmptySamplesAreNoEvidence() {
        assertThat(NoiseTests.mannWhitneyPValue(buckets(5, 5, 5), buckets(5, 5))).isEqualTo(1.0);
        assertThat(NoiseTests.mannWhitneyPValue(buckets(), buckets(1, 2))).isEqualTo(1.0);
    }

    @Test
    void fisherExactMatchesTheTeaTastingExample() {
        // Fisher's lady tasting tea: 3 of 4 right against 1 of 4, two-sided p = 34/70
        assertThat(NoiseTests.fisherExactPValue(3, 4, 1, 4)).isCloseTo(34.0 / 70, within(1e-9));
        // 4 of 150 against 0 of 150: twice C(150,4)/C(300,4)
        double p4 = (150.0 * 149 * 148 * 147) / (300.0 * 299 * 298 * 297);
        assertThat(NoiseTests.fisherExactPValue(4, 150, 0, 150)).isCloseTo(2 * p4, within(1e-9));
        assertThat(NoiseTests.logGamma(11)).isCloseTo(Math.log(3628800), within(1e-9));
    }

    @Test
    void quantileTestSeesAShiftedTailButNotAFewSlowRequests() {
        Random random = new Random(3);
        double[] base = new double[150];
        double[] fewSlow = new double[150];
        double[] slower = new double[150];
        for (int i = 0; i < base.length; i++) {
            base[i] = 50 + 3 * random.nextGaussian();
            fewSlow[i] = 50 + 3 * random.nextGaussian();
            slower[i] = 70 + 3 * random.nextGaussian();
        }
        for (int i = 0; i < 4; i++) {
            fewSlow[i] = 95 + i; // four requests hit by one hiccup
        }
        assertThat(NoiseTests.quantileTestPValue(buckets(base), buckets(fewSlow), 99, 0, 0))
                .isGreaterThan(0.05);
        assertThat(NoiseTests.quantileTestPValue(buckets(base), buckets(slower), 90, 0, 0))
                .isLessThan(1e-6);
        // the same values counted as 15 correlated ones each are weaker evidence
        assertThat(NoiseTests.quantileTestPValue(buckets(base), buckets(slower), 90, 10, 10))
                .isGreaterThan(
                        NoiseTests.quantileTestPValue(buckets(base), buckets(slower), 90, 0, 0));
    }

    @Test
    void twoProportionTest() {
        // 90/100 against 60/100: pooled 0.75, z = 0.3 / sqrt(0.75*0.25*0.02) = 4.899
        assertThat(NoiseTests.twoProportionPValue(90, 100, 60, 100))
                .isCloseTo(2 * NoiseTests.upperTail(4.898979), within(1e-9))
                .isLessThan(1e-5);
        assertThat(NoiseTests.twoProportionPValue(50, 100, 52, 100)).isGreaterThan(0.5);
        assertThat(NoiseTests.twoProportionPValue(100, 100, 100, 100)).isEqualTo(1.0);
    }
}
