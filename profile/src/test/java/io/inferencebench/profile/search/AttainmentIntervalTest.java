package io.inferencebench.profile.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** The Wilson score interval against values computed by hand from its formula. */
class AttainmentIntervalTest {

    private static final Offset<Double> E = Offset.offset(5e-5);

    @Test
    void wilsonIntervalsOfKnownCounts() {
        // 50 of 100: centre 0.5, half-width 1.96 * sqrt(0.0025 + 0.000096) / 1.0384 = 0.0962
        AttainmentInterval half = AttainmentInterval.of(50, 100);
        assertThat(half.low()).isCloseTo(0.4038, E);
        assertThat(half.high()).isCloseTo(0.5962, E);
        // all good: the low bound is n / (n + z^2), the high one 1
        AttainmentInterval all = AttainmentInterval.of(100, 100);
        assertThat(all.low()).isCloseTo(100 / (100 + 1.959964 * 1.959964), E);
        assertThat(all.high()).isEqualTo(1.0);
        // none good: 0 and z^2 / (n + z^2)
        AttainmentInterval none = AttainmentInterval.of(0, 10);
        assertThat(none.low()).isZero();
        assertThat(none.high()).isCloseTo(3.8415 / 13.8415, E);
        // nothing attempted: nothing known
        assertThat(AttainmentInterval.of(0, 0)).isEqualTo(new AttainmentInterval(0, 1));
        assertThat(AttainmentInterval.of(95, 100).describe()).isEqualTo("88.8–97.8 %");
    }

    @Test
    void anIntervalStraddlesATargetStrictlyInsideIt() {
        // 9 of 10 good: 59.6–98.2 %
        assertThat(AttainmentInterval.of(9, 10).straddles(0.9)).isTrue();
        assertThat(AttainmentInterval.of(9, 10).straddles(0.5)).isFalse();
        // 900 of 1000 decides 0.95 (87.9–91.7 %)
        assertThat(AttainmentInterval.of(900, 1000).straddles(0.95)).isFalse();
        // a target of 1 is met by all good requests and missed by one bad one
        assertThat(AttainmentInterval.of(10, 10).straddles(1.0)).isFalse();
        assertThat(AttainmentInterval.of(9, 10).straddles(1.0)).isFalse();
        assertThat(AttainmentInterval.of(0, 10).straddles(0.0)).isFalse();
    }

    @Test
    void countsOutsideTheAttemptedAreRefused() {
        assertThatThrownBy(() -> AttainmentInterval.of(11, 10)).hasMessageContaining("[0, 10]");
        assertThatThrownBy(() -> AttainmentInterval.of(-1, 10)).hasMessageContaining("got -1");
    }
}
