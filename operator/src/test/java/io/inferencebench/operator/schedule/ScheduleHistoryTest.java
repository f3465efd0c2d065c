package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.operator.schedule.ScheduleHistory.Entry;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ScheduleHistoryTest {

    private static Entry run(int minute, boolean finished, String... baselines) {
        return new Entry(
                "s-" + minute,
                Instant.parse("2026-12-02T02:00:00Z").plusSeconds(60L * minute),
                finished,
                Set.of(baselines));
    }

    @Test
    void withinTheLimitNothingIsDeleted() {
        assertThat(ScheduleHistory.prune(List.of(run(1, true), run(2, true)), 2, Set.of()))
                .isEmpty();
    }

    @Test
    void theOldestFinishedRunsGoFirstWhateverTheListOrder() {
        List<Entry> runs = List.of(run(4, true), run(1, true), run(3, true), run(2, true));
        assertThat(ScheduleHistory.prune(runs, 2, Set.of())).containsExactly("s-1", "s-2");
    }

    @Test
    void runningRunsAreNeverDeletedEvenBeyondTheLimit() {
        List<Entry> runs = List.of(run(1, false), run(2, false), run(3, true));
        assertThat(ScheduleHistory.prune(runs, 1, Set.of())).containsExactly("s-3");
        assertThat(ScheduleHistory.prune(List.of(run(1, false), run(2, false)), 1, Set.of()))
                .isEmpty();
    }

    @Test
    void theBaselineOfARunningRunAndAPinnedBaselineAreKept() {
        // previousSucceeded chains every run to the one before; a finished run keeps its verdict,
        // so only the running run's baseline is needed still.
        List<Entry> runs =
                List.of(
                        run(1, true),
                        run(2, true, "s-1"),
                        run(3, true, "s-2"),
                        run(4, false, "s-3"));
        assertThat(ScheduleHistory.prune(runs, 2, Set.of())).containsExactly("s-1", "s-2");
        assertThat(ScheduleHistory.prune(runs, 1, Set.of("s-1"))).containsExactly("s-2");
    }

    @Test
    void everyRunOfARunningRunsNoiseFloorIsKept() {
        // noiseFloorRuns: the running run is compared with three earlier runs at once.
        List<Entry> runs =
                List.of(
                        run(1, true),
                        run(2, true, "s-1"),
                        run(3, true, "s-2"),
                        run(4, true, "s-3"),
                        run(5, false, "s-4", "s-3", "s-2"));
        assertThat(ScheduleHistory.prune(runs, 2, Set.of())).containsExactly("s-1");
        assertThat(ScheduleHistory.prune(runs, 4, Set.of())).containsExactly("s-1");
        assertThat(
                        ScheduleHistory.prune(
                                List.of(run(1, true), run(2, true), run(3, false, "s-1")),
                                1,
                                Set.of()))
                .containsExactly("s-2");
    }
}
