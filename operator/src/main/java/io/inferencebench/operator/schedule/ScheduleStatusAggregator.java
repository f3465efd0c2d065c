package io.inferencebench.operator.schedule;

import io.fabric8.kubernetes.api.model.Condition;
import io.inferencebench.crds.v1alpha1.BenchmarkScheduleStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.operator.StatusBuilder;
import java.time.Instant;
import java.util.List;

/**
 * The one place a BenchmarkSchedule status is built: {@link StatusBuilder}'s shape, the same as a
 * run's, with the schedule's condition types {@link ConditionTypes#SCHEDULE_ALL}.
 */
public final class ScheduleStatusAggregator
        extends StatusBuilder<BenchmarkScheduleStatus, ScheduleStatusAggregator> {

    public ScheduleStatusAggregator(BenchmarkScheduleStatus current, long generation, Instant now) {
        super(
                current,
                new BenchmarkScheduleStatus(),
                generation,
                now,
                "schedule ",
                ConditionTypes.SCHEDULE_ALL);
    }

    @Override
    protected List<Condition> conditionsOf(BenchmarkScheduleStatus status) {
        return status.getConditions();
    }

    @Override
    protected void setConditions(BenchmarkScheduleStatus status, List<Condition> conditions) {
        status.setConditions(conditions);
    }

    @Override
    protected void setObservedGeneration(BenchmarkScheduleStatus status, long generation) {
        status.setObservedGeneration(generation);
    }
}
