package io.inferencebench.profile.server;

import java.util.SortedSet;

/**
 * How many scrapes a stage window should hold, from the scrape rounds taken in it: every replica is
 * expected once per round, and a round that should have come but did not (a stalled scheduler, a
 * restarted operator) counts as expected too, so coverage says what the servers did not deliver.
 * The runner's scraper and the operator's count the same way here.
 */
public final class WindowRounds {

    private WindowRounds() {}

    /**
     * Scrapes expected of a window: each replica once per round.
     *
     * @param rounds rounds taken (and missed) in the window
     * @param replicas replicas expected in each round
     * @return the product, capped at {@link Integer#MAX_VALUE}
     */
    public static int expectedScrapes(long rounds, long replicas) {
        return (int) Math.min(Integer.MAX_VALUE, rounds * replicas);
    }

    /**
     * Whether no round came within an interval and a half of the window start.
     *
     * @param instants the rounds' instants in the window, ascending
     * @param startMillis the window start
     * @param intervalMillis the scrape interval
     * @return {@code true} when the window's beginning was not observed
     */
    public static boolean startUnobserved(
            SortedSet<Long> instants, long startMillis, long intervalMillis) {
        return instants.isEmpty() || 2 * (instants.first() - startMillis) > 3 * intervalMillis;
    }

    /**
     * Rounds missed in a window: each gap between consecutive rounds (and from the window start to
     * the first, and from the last to the end) that is more than one and a half intervals long
     * stands for the rounds that should have fallen in it. A tick a busy scheduler ran a little
     * late, even across the window end, is not a missed round: the window still holds a scrape at
     * least every interval and a half.
     *
     * @param instants the rounds' instants in the window, ascending
     * @param startMillis the window start
     * @param endMillis the window end
     * @param intervalMillis the scrape interval
     * @return rounds missed, {@code >= 0}
     */
    public static long missedRounds(
            SortedSet<Long> instants, long startMillis, long endMillis, long intervalMillis) {
        long missed = 0;
        long previous = startMillis;
        for (long instant : instants) {
            missed += missedIn(instant - previous, intervalMillis);
            previous = instant;
        }
        return missed + missedIn(endMillis - previous, intervalMillis);
    }

    private static long missedIn(long gapMillis, long intervalMillis) {
        // round(gap / interval) - 1, in integers: a gap of 1.5 intervals or more misses a round
        return Math.max(0, (2 * gapMillis + intervalMillis) / (2 * intervalMillis) - 1);
    }
}
