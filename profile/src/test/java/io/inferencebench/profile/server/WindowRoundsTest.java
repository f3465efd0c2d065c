package io.inferencebench.profile.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** How many scrape rounds a window missed, from the gaps between the rounds it has. */
class WindowRoundsTest {

    private static long missed(long start, long end, long interval, Long... instants) {
        return WindowRounds.missedRounds(new TreeSet<>(List.of(instants)), start, end, interval);
    }

    @Test
    void roundsOnScheduleMissNothing() {
        // barrier at 0, ticks every second, the end round at 4.3 s
        assertThat(missed(0, 4300, 1000, 0L, 300L, 1300L, 2300L, 3300L, 4300L)).isZero();
    }

    @Test
    void aTickRunLateAcrossTheWindowEndIsNotAMissedRound() {
        // the tick due at 3.9 s ran after the end (4.0 s): the last gap is 1.1 intervals
        assertThat(missed(0, 4000, 1000, 0L, 900L, 1900L, 2900L, 4000L)).isZero();
    }

    @Test
    void aSkippedTickIsOneMissedRound() {
        assertThat(missed(0, 4000, 1000, 0L, 1000L, 3000L, 4000L)).isEqualTo(1);
    }

    @Test
    void timeWithoutAnOperatorIsMissedRounds() {
        // scraped until 2 s, restarted at 7.5 s: rounds at 3, 4, 5, 6 and 7 are missing
        assertThat(missed(0, 9500, 1000, 0L, 1000L, 2000L, 7500L, 8500L, 9500L)).isEqualTo(5);
    }

    @Test
    void aWindowEntirelyWithoutRoundsMissesOnePerInterval() {
        assertThat(missed(0, 3000, 1000)).isEqualTo(2);
    }

    @Test
    void aWindowWhoseFirstRoundCameLateHasAnUnobservedStart() {
        assertThat(WindowRounds.startUnobserved(new TreeSet<>(List.of(0L, 1000L)), 0, 1000))
                .isFalse();
        assertThat(WindowRounds.startUnobserved(new TreeSet<>(List.of(1500L)), 0, 1000)).isFalse();
        assertThat(WindowRounds.startUnobserved(new TreeSet<>(List.of(1501L)), 0, 1000)).isTrue();
        assertThat(WindowRounds.startUnobserved(new TreeSet<>(), 0, 1000)).isTrue();
    }

    @Test
    void everyReplicaIsExpectedInEveryRoundUpToTheLargestInt() {
        assertThat(WindowRounds.expectedScrapes(5, 2)).isEqualTo(10);
        assertThat(WindowRounds.expectedScrapes(0, 3)).isZero();
        assertThat(WindowRounds.expectedScrapes(Integer.MAX_VALUE, 2)).isEqualTo(Integer.MAX_VALUE);
    }
}
