package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Think times between turns: fixed, or drawn reproducibly with the mean asked for. */
class ConversationsTest {

    @Test
    void aFixedThinkTimeIsEveryPause() {
        Conversations c = new Conversations(3, Duration.ofMillis(250), false);
        assertThat(c.thinkNanos(1, 0, 1)).isEqualTo(250_000_000L);
        assertThat(c.thinkNanos(9, 7, 2)).isEqualTo(250_000_000L);
        assertThat(c.describe()).isEqualTo("turns=3 think_time=0.25s fixed");
        assertThat(new Conversations(1, Duration.ZERO, true).describe())
                .isEqualTo("turns=1 think_time=0s exponential");
    }

    @Test
    void drawnPausesHaveTheMeanAndDependOnlyOnSeedSessionAndTurn() {
        Conversations c = new Conversations(5, Duration.ofSeconds(2), true);
        double sum = 0;
        int n = 20_000;
        for (int s = 0; s < n / 4; s++) {
            for (int t = 1; t <= 4; t++) {
                long pause = c.thinkNanos(3, s, t);
                assertThat(pause).isNotNegative();
                assertThat(c.thinkNanos(3, s, t)).isEqualTo(pause);
                sum += pause;
            }
        }
        // An exponential's standard error over 20,000 draws is 0.7 % of its mean.
        assertThat(sum / n / 1e9).isBetween(1.95, 2.05);
        assertThat(c.thinkNanos(4, 0, 1)).isNotEqualTo(c.thinkNanos(3, 0, 1));
        assertThat(c.thinkNanos(3, 1, 1)).isNotEqualTo(c.thinkNanos(3, 0, 1));
    }

    @Test
    void sessionsAreWholeAndTheShapeIsChecked() {
        Conversations c = new Conversations(4, Duration.ZERO, false);
        assertThat(c.sessions(12)).isEqualTo(3);
        assertThat(c.sessions(14)).isEqualTo(3);
        assertThatThrownBy(() -> new Conversations(0, Duration.ZERO, false))
                .hasMessageContaining("at least one turn");
        assertThatThrownBy(() -> new Conversations(2, Duration.ofSeconds(-1), false))
                .hasMessageContaining("must not be negative");
    }
}
