package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.inferencebench.crds.v1alpha1.BenchmarkScheduleStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import java.time.Instant;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

/** The schedule's status builder has the run's shape: the same transition and patch rules. */
class ScheduleStatusAggregatorTest {

    private static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
    private static final Instant T1 = Instant.parse("2026-11-29T12:05:00Z");

    @Test
    void aConditionKeepsItsTransitionTimeUntilItsStatusFlips() {
        BenchmarkScheduleStatus first =
                new ScheduleStatusAggregator(null, 3, T0)
                        .condition(ConditionTypes.REGRESSING, "Unknown", "Pending", "no run yet")
                        .build();
        assertThat(first.getObservedGeneration()).isEqualTo(3L);
        assertThat(first.condition(ConditionTypes.REGRESSING).orElseThrow().getObservedGeneration())
                .isEqualTo(3L);

        BenchmarkScheduleStatus same =
                new ScheduleStatusAggregator(first, 3, T1)
                        .condition(ConditionTypes.REGRESSING, "Unknown", "Pending", "still none")
                        .build();
        Condition kept = same.condition(ConditionTypes.REGRESSING).orElseThrow();
        assertThat(kept.getMessage()).isEqualTo("still none");
        assertThat(kept.getLastTransitionTime()).isEqualTo("2026-11-29T12:00:00Z");

        BenchmarkScheduleStatus flipped =
                new ScheduleStatusAggregator(same, 3, T1)
                        .condition(ConditionTypes.REGRESSING, false, "NoRegression", "ok")
                        .build();
        assertThat(flipped.condition(ConditionTypes.REGRESSING).orElseThrow())
                .satisfies(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getLastTransitionTime()).isEqualTo("2026-11-29T12:05:00Z");
                        });
    }

    @Test
    void conditionsComeInTheKindsOrderAndUndecidedOnesStay() {
        BenchmarkScheduleStatus first =
                new ScheduleStatusAggregator(null, 1, T0)
                        .condition(ConditionTypes.REGRESSING, "Unknown", "Pending", "")
                        .condition(ConditionTypes.SCHEDULE_VALID, true, "Valid", "")
                        .build();
        assertThat(first.getConditions())
                .extracting(Condition::getType)
                .containsExactlyElementsOf(ConditionTypes.SCHEDULE_ALL);
        BenchmarkScheduleStatus next =
                new ScheduleStatusAggregator(first, 1, T1)
                        .condition(ConditionTypes.REGRESSING, true, "Regression", "worse")
                        .build();
        assertThat(next.condition(ConditionTypes.SCHEDULE_VALID).orElseThrow().getReason())
                .isEqualTo("Valid");
    }

    @Test
    void nothingDecidedAgainIsNoPatch() {
        BenchmarkScheduleStatus first =
                new ScheduleStatusAggregator(null, 1, T0)
                        .condition(ConditionTypes.SCHEDULE_VALID, true, "Valid", "")
                        .apply(s -> s.setLastRun("nightly-1"))
                        .build();
        ScheduleStatusAggregator again =
                new ScheduleStatusAggregator(first, 1, T1)
                        .condition(ConditionTypes.SCHEDULE_VALID, true, "Valid", "")
                        .apply(s -> s.setLastRun("nightly-1"));
        again.build();
        assertThat(again.changed()).isFalse();
        assertThat(again.before()).isSameAs(first);

        ScheduleStatusAggregator moved =
                new ScheduleStatusAggregator(first, 1, T1).apply(s -> s.setLastRun("nightly-2"));
        moved.build();
        assertThat(moved.changed()).isTrue();
    }

    @Test
    void onlyTheSchedulesConditionTypesAndOnlyThroughCondition() {
        ScheduleStatusAggregator status = new ScheduleStatusAggregator(null, 1, T0);
        assertThatThrownBy(() -> status.condition(ConditionTypes.TARGET_READY, true, "Ready", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unknown schedule condition type TargetReady");
        assertThatThrownBy(() -> status.apply(s -> s.setConditions(new ArrayList<>())))
                .isInstanceOf(IllegalStateException.class);
    }
}
