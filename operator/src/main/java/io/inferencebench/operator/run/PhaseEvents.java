package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.EventRecorder;
import org.jboss.logging.Logger;

/**
 * A run's phase changes as users see them: one Event per new phase (Warning for Failed, Normal
 * otherwise) whose reason is the phase and whose message is the status message, and one log line.
 */
public final class PhaseEvents {

    /** The log category operators already filter on (the controller's). */
    private static final Logger LOG =
            Logger.getLogger("io.inferencebench.operator.BenchmarkRunReconciler");

    private final RunCluster cluster;

    public PhaseEvents(RunCluster cluster) {
        this.cluster = cluster;
    }

    /**
     * Announces the phase of {@code built} when it differs from {@code before}.
     *
     * @param before the phase the reconcile started from, {@code null} for a new run
     * @param built the status about to be patched
     */
    public void announce(BenchmarkRun run, Phase before, BenchmarkRunStatus built) {
        Phase after = built.getPhase();
        if (after == before) {
            return;
        }
        boolean bad = after == Phase.FAILED;
        cluster.event(
                run,
                bad ? EventRecorder.WARNING : EventRecorder.NORMAL,
                after.wireName(),
                built.getMessage() == null ? after.wireName() : built.getMessage());
        LOG.infof(
                "%s/%s: %s -> %s: %s",
                run.getMetadata().getNamespace(),
                run.getMetadata().getName(),
                before,
                after,
                built.getMessage());
    }
}
