package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.Condition;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import java.time.Instant;
import java.util.List;

/**
 * The one place a BenchmarkRun status is built ({@link StatusBuilder}'s shape, the run's condition
 * types {@link ConditionTypes#ALL}), plus the run's phase and message.
 */
public final class StatusAggregator extends StatusBuilder<BenchmarkRunStatus, StatusAggregator> {

    /**
     * @param current the status as read, or {@code null} for a new run
     * @param generation the run's metadata.generation
     * @param now the reconcile instant
     */
    public StatusAggregator(BenchmarkRunStatus current, long generation, Instant now) {
        super(current, new BenchmarkRunStatus(), generation, now, "", ConditionTypes.ALL);
    }

    /**
     * The phase this reconcile ends in.
     *
     * @return the current phase, {@link Phase#PENDING} for a new run
     */
    public Phase phase() {
        return view().getPhase() == null ? Phase.PENDING : view().getPhase();
    }

    /**
     * Sets the phase and message.
     *
     * @param phase the phase
     * @param message a human-readable explanation
     * @return this
     */
    public StatusAggregator phase(Phase phase, String message) {
        view().setPhase(phase);
        view().setMessage(message);
        return this;
    }

    @Override
    protected List<Condition> conditionsOf(BenchmarkRunStatus status) {
        return status.getConditions();
    }

    @Override
    protected void setConditions(BenchmarkRunStatus status, List<Condition> conditions) {
        status.setConditions(conditions);
    }

    @Override
    protected void setObservedGeneration(BenchmarkRunStatus status, long generation) {
        status.setObservedGeneration(generation);
    }

    /** A new run's status says Pending. */
    @Override
    protected void complete(BenchmarkRunStatus status) {
        if (status.getPhase() == null) {
            status.setPhase(Phase.PENDING);
        }
    }
}
