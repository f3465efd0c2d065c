package io.inferencebench.profile.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Student's t against published table values, and Welch's test against a hand computation. */
class StudentTTest {

    @Test
    void quantilesMatchTheTables() {
        assertThat(StudentT.quantile(0.975, 1)).isCloseTo(12.7062, within(1e-3));
        assertThat(StudentT.quantile(0.975, 4)).isCloseTo(2.7764, within(1e-4));
        assertThat(StudentT.quantile(0.975, 10)).isCloseTo(2.2281, within(1e-4));
        assertThat(StudentT.quantile(0.995, 8)).isCloseTo(3.3554, within(1e-4));
        assertThat(StudentT.quantile(0.025, 4)).isCloseTo(-2.7764, within(1e-4));
        // towards the normal distribution
        assertThat(StudentT.quantile(0.975, 1e6)).isCloseTo(1.95996, within(1e-4));
    }

    @Test
    void upperTailsMatchTheTables() {
        assertThat(StudentT.upperTail(2.0150, 5)).isCloseTo(0.05, within(1e-4));
        assertThat(StudentT.upperTail(0, 7)).isCloseTo(0.5, within(1e-12));
        assertThat(StudentT.upperTail(-1.8125, 10)).isCloseTo(0.95, within(1e-4));
        // a fractional degree of freedom, as Welch's test gives: between its neighbours
        double at45 = StudentT.upperTail(2.5, 4.5);
        assertThat(at45).isBetween(StudentT.upperTail(2.5, 5), StudentT.upperTail(2.5, 4));
    }

    @Test
    void welchsTestOfTwoSmallSamples() {
        // baseline 10, 11, 12 (mean 11, variance 1); candidate 13, 15, 17 (mean 15, variance 4)
        RepeatTest t = RepeatTest.of(List.of(10.0, 11.0, 12.0), List.of(13.0, 15.0, 17.0));
        assertThat(t.baselineMean()).isEqualTo(11.0);
        assertThat(t.candidateMean()).isEqualTo(15.0);
        assertThat(t.standardError()).isCloseTo(Math.sqrt(1.0 / 3 + 4.0 / 3), within(1e-12));
        // (1/3 + 4/3)^2 / ((1/3)^2/2 + (4/3)^2/2) = 2.7778 / 0.9444 = 2.9412
        assertThat(t.degreesOfFreedom()).isCloseTo(2.9412, within(1e-4));
        double tStat = 4 / Math.sqrt(5.0 / 3);
        assertThat(t.pValue())
                .isCloseTo(2 * StudentT.upperTail(tStat, t.degreesOfFreedom()), within(1e-12))
                .isBetween(0.04, 0.07);
        assertThat(t.halfWidth(0.05))
                .isCloseTo(
                        StudentT.quantile(0.975, t.degreesOfFreedom()) * t.standardError(),
                        within(1e-12));
        // one run against three repeats: its value against their spread (a prediction interval)
        RepeatTest one = RepeatTest.of(List.of(10.0, 11.0, 12.0), List.of(15.0));
        assertThat(one.candidateMean()).isEqualTo(15.0);
        assertThat(one.standardError()).isCloseTo(Math.sqrt(1.0 / 3 + 1), within(1e-12));
        assertThat(one.degreesOfFreedom()).isEqualTo(2.0);
        assertThat(RepeatTest.of(List.of(15.0), List.of(10.0, 11.0, 12.0)).standardError())
                .isEqualTo(one.standardError());
        // no spread on either side: equal means are no change, different ones are certain
        assertThat(RepeatTest.of(List.of(5.0, 5.0), List.of(5.0, 5.0)).pValue()).isEqualTo(1.0);
        assertThat(RepeatTest.of(List.of(5.0, 5.0), List.of(6.0, 6.0)).pValue()).isEqualTo(0.0);
    }
}
