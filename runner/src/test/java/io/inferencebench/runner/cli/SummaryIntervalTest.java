package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The interval the summary gives a figure across repeats. */
class SummaryIntervalTest {

    @Test
    void meanAndHalfWidthOfTheStudentInterval() {
        // mean 11, s = 1, n = 3: t(0.975, 2) = 4.3027, half width 4.3027 / sqrt(3) = 2.48
        assertThat(Summary.interval(List.of(10.0, 11.0, 12.0))).isEqualTo("11.00 ± 2.48");
        assertThat(Summary.interval(List.of(5.0, 5.0))).isEqualTo("5.00 ± 0.00");
        assertThat(Summary.interval(Arrays.asList(5.0, null))).isEqualTo("-");
    }
}
