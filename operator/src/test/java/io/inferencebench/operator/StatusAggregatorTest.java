package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import java.time.Instant;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

class StatusAggregatorTest {

    static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
    static final Instant T1 = Instant.parse("2026-11-29T12:05:00Z");

    @Test
    void newRunStartsPendingWithTransitionTimesNow() {
        StatusAggregator aggregator = new StatusAggregator(null, 1, T0);
        aggregator.condition(ConditionTypes.TARGET_READY, false, "NoReadyEndpoints", "none ready");
        BenchmarkRunStatus status = aggregator.build();
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(status.getObservedGeneration()).isEqualTo(1L);
        Condition targetReady = status.condition(ConditionTypes.TARGET_READY).orElseThrow();
        assertThat(targetReady.getStatus()).isEqualTo("False");
        assertThat(targetReady.getReason()).isEqualTo("NoReadyEndpoints");
        assertThat(targetReady.getLastTransitionTime()).isEqualTo("2026-11-29T12:00:00Z");
        assertThat(targetReady.getObservedGeneration()).isEqualTo(1L);
        assertThat(aggregator.changed()).isTrue();
    }

    @Test
    void keepsTransitionTimeWhenStatusUnchangedEvenIfMessageChanges() {
        BenchmarkRunStatus first =
                new StatusAggregator(null, 1, T0)
                        .condition(ConditionTypes.RUNNERS_READY, false, "Starting", "0 of 2 ready")
                        .build();
        StatusAggregator second = new StatusAggregator(first, 1, T1);
        second.condition(ConditionTypes.RUNNERS_READY, false, "Starting", "1 of 2 ready");
        BenchmarkRunStatus next = second.build();
        Condition runnersReady = next.condition(ConditionTypes.RUNNERS_READY).orElseThrow();
        assertThat(runnersReady.getMessage()).isEqualTo("1 of 2 ready");
        assertThat(runnersReady.getLastTransitionTime()).isEqualTo("2026-11-29T12:00:00Z");
        assertThat(second.changed()).isTrue();
    }

    @Test
    void movesTransitionTimeWhenStatusFlips() {
        BenchmarkRunStatus first =
                new StatusAggregator(null, 1, T0)
                        .condition(ConditionTypes.TARGET_READY, false, "NoReadyEndpoints", "x")
                        .build();
        BenchmarkRunStatus next =
                new StatusAggregator(first, 1, T1)
                        .condition(ConditionTypes.TARGET_READY, true, "EndpointsReady", "y")
                        .build();
        assertThat(
                        next.condition(ConditionTypes.TARGET_READY)
                                .orElseThrow()
                                .getLastTransitionTime())
                .isEqualTo("2026-11-29T12:05:00Z");
    }

    @Test
    void carriesUndecidedConditionsForwardAndOrdersThem() {
        BenchmarkRunStatus first =
                new StatusAggregator(null, 1, T0)
                        .condition(ConditionTypes.COMPLETED, false, "InProgress", "")
                        .condition(ConditionTypes.TARGET_READY, true, "EndpointsReady", "")
                        .build();
        BenchmarkRunStatus next =
                new StatusAggregator(first, 1, T1)
                        .condition(ConditionTypes.RUNNERS_READY, true, "AllReady", "")
                        .build();
        assertThat(next.getConditions())
                .extracting(Condition::getType)
                .containsExactly(
                        ConditionTypes.TARGET_READY,
                        ConditionTypes.RUNNERS_READY,
                        ConditionTypes.COMPLETED);
        assertThat(
                        next.condition(ConditionTypes.TARGET_READY)
                                .orElseThrow()
                                .getLastTransitionTime())
                .isEqualTo("2026-11-29T12:00:00Z");
    }

    @Test
    void unchangedStatusNeedsNoPatch() {
        BenchmarkRunStatus first =
                new StatusAggregator(null, 1, T0)
                        .phase(Phase.INITIALIZING, "starting")
                        .condition(ConditionTypes.TARGET_READY, true, "EndpointsReady", "ok")
                        .build();
        StatusAggregator again = new StatusAggregator(first, 1, T1);
        again.phase(Phase.INITIALIZING, "starting");
        again.condition(ConditionTypes.TARGET_READY, true, "EndpointsReady", "ok");
        again.build();
        assertThat(again.changed()).isFalse();
    }

    @Test
    void doesNotMutateTheCurrentStatus() {
        BenchmarkRunStatus first =
                new StatusAggregator(null, 1, T0).phase(Phase.PENDING, "waiting").build();
        new StatusAggregator(first, 2, T1)
                .phase(Phase.FAILED, "boom")
                .apply(s -> s.setStage("1/2"))
                .build();
        assertThat(first.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(first.getStage()).isNull();
        assertThat(first.getObservedGeneration()).isEqualTo(1L);
    }

    @Test
    void conditionsOnlyThroughTheAggregator() {
        StatusAggregator aggregator = new StatusAggregator(null, 1, T0);
        assertThatThrownBy(() -> aggregator.apply(s -> s.setConditions(new ArrayList<>())))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> aggregator.condition("Ready", true, "X", ""))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
