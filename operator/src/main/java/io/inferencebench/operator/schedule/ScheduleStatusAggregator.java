package io.inferencebench.operator.schedule;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkScheduleStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.operator.StatusAggregator;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The one place a BenchmarkSchedule status is built: starts from the status as read, takes what
 * this reconcile decided, keeps each condition's {@code lastTransitionTime} unless its status
 * flipped. {@link #changed()} says whether a patch is needed.
 */
public final class ScheduleStatusAggregator {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final BenchmarkScheduleStatus current;
    private final BenchmarkScheduleStatus next;
    private final long generation;
    private final String now;
    private final Map<String, Condition> decided = new LinkedHashMap<>();

    public ScheduleStatusAggregator(BenchmarkScheduleStatus current, long generation, Instant now) {
        this.current = current;
        this.next =
                current == null
                        ? new BenchmarkScheduleStatus()
                        : JSON.convertValue(
                                JSON.valueToTree(current), BenchmarkScheduleStatus.class);
        this.generation = generation;
        this.now = StatusAggregator.format(now);
    }

    /**
     * Decides a condition.
     *
     * @param type one of {@link ConditionTypes#SCHEDULE_ALL}
     * @param status True, False or Unknown
     * @param reason CamelCase reason
     * @param message details
     * @return this
     */
    public ScheduleStatusAggregator condition(
            String type, String status, String reason, String message) {
        if (!ConditionTypes.SCHEDULE_ALL.contains(type)) {
            throw new IllegalArgumentException("unknown schedule condition type " + type);
        }
        decided.put(
                type,
                new ConditionBuilder()
                        .withType(type)
                        .withStatus(status)
                        .withReason(reason)
                        .withMessage(message == null ? "" : message)
                        .withObservedGeneration(generation)
                        .build());
        return this;
    }

    /**
     * Changes fields other than conditions.
     *
     * @param change edits the status being built
     * @return this
     */
    public ScheduleStatusAggregator apply(Consumer<BenchmarkScheduleStatus> change) {
        List<Condition> before = next.getConditions();
        change.accept(next);
        if (next.getConditions() != before) {
            throw new IllegalStateException("conditions are set through condition(...)");
        }
        return this;
    }

    /** The status being built (do not edit conditions). */
    public BenchmarkScheduleStatus view() {
        return next;
    }

    /** The status as read, or {@code null}. */
    public BenchmarkScheduleStatus before() {
        return current;
    }

    /**
     * Builds the status.
     *
     * @return the new status; conditions in {@link ConditionTypes#SCHEDULE_ALL} order
     */
    public BenchmarkScheduleStatus build() {
        next.setConditions(
                StatusAggregator.mergeConditions(
                        current == null ? null : current.getConditions(),
                        decided,
                        ConditionTypes.SCHEDULE_ALL,
                        now));
        next.setObservedGeneration(generation);
        return next;
    }

    /** Whether the built status differs from the one read (call after {@link #build()}). */
    public boolean changed() {
        return current == null || !JSON.valueToTree(current).equals(JSON.valueToTree(next));
    }
}
