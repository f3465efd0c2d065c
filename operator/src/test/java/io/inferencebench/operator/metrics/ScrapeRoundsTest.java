package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.server.Scrape;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which replicas' first page in a window came too late to be its baseline. */
class ScrapeRoundsTest {

    @Test
    void aFirstPageAnsweredAfterTheStagesFirstRequestIsALateStart() {
        ParsedPage page = PrometheusTextParser.parse("up 1\n");
        List<Scrape> window =
                List.of(
                        Scrape.success("a", 1000, page),
                        Scrape.success("b", 1000, page),
                        Scrape.success("a", 2000, page));
        // a's barrier page answered before the barrier (stamped with it); b's 40 ms after it
        var answered = Map.of(new ScrapeRounds.StampedReplica("b", 1000), 1040L);
        assertThat(ScrapeRounds.lateStarts(window, answered, 1000, 1010L, 1000))
                .isEqualTo(Map.of("b", 30L));
        // first request after b's answer: nothing of the stage was served before it
        assertThat(ScrapeRounds.lateStarts(window, answered, 1000, 1050L, 1000)).isEmpty();
        // parts claiming a first request before the barrier: the barrier is the limit
        assertThat(ScrapeRounds.lateStarts(window, answered, 1000, 500L, 1000))
                .isEqualTo(Map.of("b", 40L));
        // unknown first request: one interval of tolerance after the barrier
        assertThat(ScrapeRounds.lateStarts(window, answered, 1000, null, 30))
                .isEqualTo(Map.of("b", 10L));
        assertThat(ScrapeRounds.lateStarts(window, answered, 1000, null, 1000)).isEmpty();
        // a failed barrier scrape: the baseline is the next page, a periodic one
        List<Scrape> failedBarrier =
                List.of(Scrape.failure("a", 1000, "timed out"), Scrape.success("a", 1500, page));
        assertThat(ScrapeRounds.lateStarts(failedBarrier, Map.of(), 1000, 1010L, 1000))
                .isEqualTo(Map.of("a", 490L));
    }
}
