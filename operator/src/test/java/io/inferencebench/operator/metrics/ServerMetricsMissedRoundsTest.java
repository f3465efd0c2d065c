package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.server.Scrape;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** How many scrape rounds a window missed, from the gaps between the rounds it has. */
class ServerMetricsMissedRoundsTest {

    private static long missed(long start, long end, long interval, Long... instants) {
        return ServerMetricsScraper.missedRounds(
                new TreeSet<>(List.of(instants)), start, end, interval);
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
        assertThat(ServerMetricsScraper.startUnobserved(new TreeSet<>(List.of(0L, 1000L)), 0, 1000))
                .isFalse();
        assertThat(ServerMetricsScraper.startUnobserved(new TreeSet<>(List.of(1500L)), 0, 1000))
                .isFalse();
        assertThat(ServerMetricsScraper.startUnobserved(new TreeSet<>(List.of(1501L)), 0, 1000))
                .isTrue();
        assertThat(ServerMetricsScraper.startUnobserved(new TreeSet<>(), 0, 1000)).isTrue();
    }

    @Test
    void aFirstPageAnsweredAfterTheStagesFirstRequestIsALateStart() {
        ParsedPage page = PrometheusTextParser.parse("up 1\n");
        List<Scrape> window =
                List.of(
                        Scrape.success("a", 1000, page),
                        Scrape.success("b", 1000, page),
                        Scrape.success("a", 2000, page));
        // a's barrier page answered before the barrier (stamped with it); b's 40 ms after it
        var answered = Map.of(new ServerMetricsScraper.StampedReplica("b", 1000), 1040L);
        assertThat(ServerMetricsScraper.lateStarts(window, answered, 1000, 1010L, 1000))
                .isEqualTo(Map.of("b", 30L));
        // first request after b's answer: nothing of the stage was served before it
        assertThat(ServerMetricsScraper.lateStarts(window, answered, 1000, 1050L, 1000)).isEmpty();
        // parts claiming a first request before the barrier: the barrier is the limit
        assertThat(ServerMetricsScraper.lateStarts(window, answered, 1000, 500L, 1000))
                .isEqualTo(Map.of("b", 40L));
        // unknown first request: one interval of tolerance after the barrier
        assertThat(ServerMetricsScraper.lateStarts(window, answered, 1000, null, 30))
                .isEqualTo(Map.of("b", 10L));
        assertThat(ServerMetricsScraper.lateStarts(window, answered, 1000, null, 1000)).isEmpty();
        // a failed barrier scrape: the baseline is the next page, a periodic one
        List<Scrape> failedBarrier =
                List.of(Scrape.failure("a", 1000, "timed out"), Scrape.success("a", 1500, page));
        assertThat(ServerMetricsScraper.lateStarts(failedBarrier, Map.of(), 1000, 1010L, 1000))
                .isEqualTo(Map.of("a", 490L));
    }
}
