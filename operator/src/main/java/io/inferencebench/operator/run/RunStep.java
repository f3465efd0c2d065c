package io.inferencebench.operator.run;

import java.time.Duration;

/**
 * What the run does in one phase. A step reads the turn, decides into its status (conditions,
 * phase, fields) and asks the cluster only through {@link RunCluster} and the stage windows; the
 * reconciler patches the status once, after the step.
 */
public interface RunStep {

    /**
     * Decides one reconcile of a run in this step's phase.
     *
     * @return when to reconcile again, {@code null} for only on events, or {@link Requeue#DELETED}
     *     when the run is gone
     */
    Duration step(RunTurn turn);
}
