package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A replayed trace's stage: its offsets scaled, capped, and walked as the schedule. */
class ReplayScheduleTest {

    private static StagePlan replay(double scale, long numPrompts, Duration duration) {
        return new StagePlan(
                0,
                Double.POSITIVE_INFINITY,
                null,
                numPrompts,
                duration,
                null,
                ArrivalKind.CONSTANT,
                1.0,
                null,
                new StagePlan.Replay(scale, null));
    }

    private static final long[] RECORDED = {
        0L, 400_000_000L, 400_000_000L, 2_000_000_000L, 4_000_000_000L
    };

    @Test
    void offsetsAreTheRecordedOnesTimesTheScale() {
        StagePlan bound = replay(0.5, 0, null).replaying(RECORDED);
        assertThat(bound.replayed()).isTrue();
        assertThat(bound.numPrompts()).isEqualTo(5);
        assertThat(bound.replay().offsetsNanos())
                .containsExactly(0L, 200_000_000L, 200_000_000L, 1_000_000_000L, 2_000_000_000L);
        // Its mean rate: 4 gaps over 2 s.
        assertThat(bound.requestRate()).isEqualTo(2.0);
        ArrivalSchedule schedule = ArrivalSchedule.of(bound, 99);
        for (long expected : bound.replay().offsetsNanos()) {
            assertThat(schedule.nextOffsetNanos()).isEqualTo(expected);
        }
        assertThat(schedule.nextOffsetNanos()).isEqualTo(ArrivalSchedule.MAX_OFFSET_NANOS);
        // What the stage had due within 1 s: the first three (the fourth is due at 1 s).
        ArrivalSchedule.Due due = ArrivalSchedule.of(bound, 1).due(5, 1_000_000_000L);
        assertThat(due.count()).isEqualTo(3);
        assertThat(due.lastOffsetNanos()).isEqualTo(200_000_000L);
    }

    @Test
    void theCapKeepsTheFirstRequestsAndADurationStays() {
        StagePlan bound = replay(2, 3, Duration.ofSeconds(1)).replaying(RECORDED);
        assertThat(bound.numPrompts()).isEqualTo(3);
        assertThat(bound.duration()).isEqualTo(Duration.ofSeconds(1));
        assertThat(bound.replay().offsetsNanos()).containsExactly(0L, 800_000_000L, 800_000_000L);
        // All at one instant: every request at once.
        StagePlan burst = replay(1, 2, null).replaying(new long[] {0, 0, 0});
        assertThat(burst.requestRate()).isInfinite();
        // A runner pod's share: its requests where they fall in the whole replay, at the rate it
        // is given (its share of the whole replay's mean).
        StagePlan share =
                replay(1, 0, null).replaying(new long[] {400_000_000L, 4_000_000_000L}, 0.8);
        assertThat(share.replay().offsetsNanos()).containsExactly(400_000_000L, 4_000_000_000L);
        assertThat(share.requestRate()).isEqualTo(0.8);
    }

    @Test
    void aClosedLoopSendsTheWholeTraceOnceUnlessBounded() {
        StagePlan closed =
                new StagePlan(
                        0,
                        Double.POSITIVE_INFINITY,
                        4,
                        0,
                        null,
                        null,
                        ArrivalKind.CONSTANT,
                        1.0,
                        null,
                        new StagePlan.Replay(null, null));
        StagePlan bound = closed.replaying(RECORDED);
        assertThat(bound.closedLoop()).isTrue();
        assertThat(bound.replayed()).isFalse();
        assertThat(bound.numPrompts()).isEqualTo(5);
    }

    @Test
    void onlyATracesStageReplays() {
        StagePlan rate = new StagePlan(0, 5, null, 10, null, null, ArrivalKind.POISSON, 1.0, null);
        assertThatThrownBy(() -> rate.replaying(RECORDED))
                .hasMessageContaining("stage 1 replays no trace");
        assertThatThrownBy(() -> replay(1, 0, null).replaying(new long[0]))
                .hasMessageContaining("the trace has no requests to replay");
    }
}
