package io.inferencebench.operator.dependent;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.CleanupPolicy;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;

/**
 * Precondition of the runner resources (work order, control, Job): the run passed validation and
 * its target is ready, it was admitted (is past Pending), and the cleanup policy does not yet ask
 * for their removal. When it stops holding after launch, the workflow deletes them.
 */
public class Launched implements Condition<Object, BenchmarkRun> {

    @Override
    public boolean isMet(
            DependentResource<Object, BenchmarkRun> dependentResource,
            BenchmarkRun run,
            Context<BenchmarkRun> context) {
        return holds(run);
    }

    /**
     * Whether runner resources should exist.
     *
     * @param run the run
     * @return {@code true} while they are needed or kept
     */
    public static boolean holds(BenchmarkRun run) {
        BenchmarkRunStatus status = run.getStatus();
        if (status == null || status.getPhase() == null) {
            return false;
        }
        boolean targetReady =
                status.condition(ConditionTypes.TARGET_READY)
                        .map(c -> "True".equals(c.getStatus()))
                        .orElse(false);
        if (!targetReady) {
            return false;
        }
        Phase phase = status.getPhase();
        if (phase == Phase.PENDING) {
            // its target ready, waiting for a slot under the operator's active-run cap
            return false;
        }
        if (!phase.isTerminal()) {
            return true;
        }
        CleanupPolicy policy = run.getSpec().getRunner().getCleanupPolicy();
        return switch (policy == null ? CleanupPolicy.ON_SUCCESS : policy) {
            case ALWAYS -> false;
            case NEVER -> true;
            case ON_SUCCESS -> phase != Phase.SUCCEEDED;
        };
    }
}
