package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.RunAdmission;
import io.inferencebench.operator.StatusAggregator;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * The operator-wide queue of runs whose target is ready (the cap {@link RunAdmission} keeps), as
 * the Queued condition shows it.
 */
public final class RunQueue {

    private static final Logger LOG = Logger.getLogger(RunQueue.class);

    /** The Queued condition's True reason, and the reason of the Event a queued run gets. */
    public static final String QUEUED_REASON = "Queued";

    private final RunAdmission admission;
    private final RunCluster cluster;

    public RunQueue(RunAdmission admission, RunCluster cluster) {
        this.admission = admission;
        this.cluster = cluster;
        if (admission.limited()) {
            LOG.infof(
                    "at most %d BenchmarkRuns past Pending at a time (%s)",
                    admission.maxActiveRuns(), RunAdmission.ENV);
        }
    }

    /**
     * Lets a Pending run whose target is ready through, or queues it under the active-run cap:
     * Queued True with its place (a Normal Event when it starts waiting), or Queued False Admitted
     * when a cap is set.
     *
     * @return whether the run may start
     */
    public boolean admit(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        RunAdmission.Decision decision =
                admission.admit(
                        RunAdmission.Candidate.of(run),
                        turn.cachedRuns().map(RunAdmission.Candidate::of).toList(),
                        now);
        if (decision instanceof RunAdmission.Queued queued) {
            boolean alreadyQueued = turn.conditionTrue(ConditionTypes.QUEUED);
            status.condition(ConditionTypes.QUEUED, true, QUEUED_REASON, queued.message());
            if (!alreadyQueued) {
                cluster.event(run, EventRecorder.NORMAL, QUEUED_REASON, queued.message());
            }
            status.phase(Phase.PENDING, queued.message());
            return false;
        }
        if (admission.limited()) {
            status.condition(
                    ConditionTypes.QUEUED,
                    false,
                    "Admitted",
                    ((RunAdmission.Admitted) decision).message());
        }
        return true;
    }

    /** A queued run whose target or references stopped being ready no longer holds a place. */
    public void leave(RunTurn turn, String why) {
        admission.leave(turn.run().getMetadata().getUid());
        if (turn.conditionTrue(ConditionTypes.QUEUED)) {
            turn.status()
                    .condition(
                            ConditionTypes.QUEUED,
                            false,
                            "TargetNotReady",
                            "left the queue until the target is ready again: " + why);
        }
    }

    /** A run that ended (cancelled, failed on its references or target) while it waited. */
    public void ended(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        if (turn.conditionTrue(ConditionTypes.QUEUED)) {
            // cancelled, or failed on its references or target, while it waited for a slot
            admission.leave(run.getMetadata().getUid());
            status.condition(
                    ConditionTypes.QUEUED,
                    false,
                    "NotAdmitted",
                    "the run ended (" + status.phase().wireName() + ") before it was let through");
        }
    }
}
