package io.inferencebench.profile.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NumpyStatsTest {

    @Test
    void matchesNumpyOnEveryGoldenCase() {
        assertThat(NumpyGolden.cases()).hasSizeGreaterThanOrEqualTo(10);
        for (NumpyGolden.Case c : NumpyGolden.cases()) {
            double[] sorted = c.values().clone();
            Arrays.sort(sorted);
            // Same summation order as numpy: the mean is expected to agree to the last bit.
            assertThat(NumpyStats.mean(c.values())).as(c.name() + " mean").isEqualTo(c.mean());
            assertThat(NumpyStats.sd(c.values()))
                    .as(c.name() + " sd")
                    .isCloseTo(c.sd(), within(Math.ulp(c.sd()) * 4));
            assertThat(NumpyStats.median(sorted)).as(c.name() + " median").isEqualTo(c.median());
            for (Map.Entry<Double, Double> p : c.percentiles().entrySet()) {
                assertThat(NumpyStats.percentile(sorted, p.getKey()))
                        .as(c.name() + " p" + p.getKey())
                        .isEqualTo(p.getValue());
            }
        }
    }

    @Test
    void emptyInputGivesZeroLikeLpg() {
        double[] empty = new double[0];
        assertThat(NumpyStats.mean(empty)).isZero();
        assertThat(NumpyStats.sd(empty)).isZero();
        assertThat(NumpyStats.median(empty)).isZero();
        assertThat(NumpyStats.percentile(empty, 99)).isZero();
    }

    @Test
    void interpolatesLinearlyBetweenClosestRanks() {
        // np.percentile([1, 2, 3, 4], 90) = 3 + 0.7 * (4 - 3) = 3.7 (virtual index 0.9 * 3 = 2.7)
        assertThat(NumpyStats.percentile(new double[] {1, 2, 3, 4}, 90))
                .isCloseTo(3.7, within(1e-15));
        assertThat(NumpyStats.percentileOfUnsorted(new double[] {4, 1, 3, 2}, 50)).isEqualTo(2.5);
    }

    @Test
    void rejectsPercentilesOutsideZeroToHundred() {
        assertThatThrownBy(() -> NumpyStats.percentile(new double[] {1}, 100.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[0, 100]");
        assertThatThrownBy(() -> NumpyStats.percentile(new double[] {1}, Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
