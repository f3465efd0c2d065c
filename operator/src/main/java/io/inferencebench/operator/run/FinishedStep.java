package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.baseline.BaselineComparison;
import io.inferencebench.operator.baseline.BaselineProfiles;
import io.inferencebench.operator.metrics.StageWindows;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Succeeded, Failed or Cancelled: the run is compared with {@code spec.baseline} once it ended, and
 * deleted when {@code ttlSecondsAfterFinished} has passed.
 */
public final class FinishedStep implements RunStep {

    private static final Logger LOG = Logger.getLogger(FinishedStep.class);

    /** Regressed reason of a run that did not succeed. */
    public static final String NOT_COMPARED = "NotCompared";

    private final RunCluster cluster;
    private final StageWindows windows;
    private final RunQueue queue;

    public FinishedStep(RunCluster cluster, StageWindows windows, RunQueue queue) {
        this.cluster = cluster;
        this.windows = windows;
        this.queue = queue;
    }

    @Override
    public Duration step(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        Integer ttl = run.getSpec().getTtlSecondsAfterFinished();
        String completion = status.view().getCompletionTime();
        if (ttl == null || completion == null) {
            return null;
        }
        Instant expiry = Instant.parse(completion).plusSeconds(ttl);
        if (!now.isBefore(expiry)) {
            LOG.infof(
                    "%s/%s: deleting after ttlSecondsAfterFinished=%d",
                    run.getMetadata().getNamespace(), run.getMetadata().getName(), ttl);
            cluster.delete(run);
            return Requeue.DELETED;
        }
        return Duration.between(now, expiry).plus(Requeue.AFTER_EXPIRY);
    }

    /**
     * What follows any step once the run has ended, in the reconcile it ended in and each later
     * one: the queue let go, the baseline compared, server-metric collection stopped, and on the
     * transition a requeue at the run's expiry.
     *
     * @param before the phase the reconcile started from
     * @param requeue the step's requeue
     * @return the requeue
     */
    public Duration ended(RunTurn turn, Phase before, Duration requeue) {
        BenchmarkRun run = turn.run();
        boolean justNow = before != turn.status().phase();
        queue.ended(turn);
        if (run.getSpec().getBaseline() != null) {
            requeue = Requeue.sooner(requeue, compareWithBaseline(turn));
        }
        windows.forget(run, justNow);
        Integer ttl = run.getSpec().getTtlSecondsAfterFinished();
        if (requeue == null && justNow && ttl != null) {
            requeue = Duration.ofSeconds(ttl).plus(Requeue.AFTER_EXPIRY);
        }
        return requeue;
    }

    /**
     * Once the run has finished: its profiles against {@code spec.baseline}'s, into {@code
     * status.comparison} and the Regressed condition. A baseline that is missing or still running
     * is looked at again later.
     *
     * @return when to look again, or {@code null}
     */
    private Duration compareWithBaseline(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        var current = status.view().condition(ConditionTypes.REGRESSED);
        boolean decided =
                current.isPresent()
                        && !(BaselineProfiles.NOT_FOUND.equals(current.get().getReason())
                                || BaselineProfiles.NOT_FINISHED.equals(current.get().getReason()));
        if (decided) {
            return null;
        }
        Phase phase = status.phase();
        List<JsonNode> profiles = status.view().getProfiles();
        if (phase != Phase.SUCCEEDED || profiles == null || profiles.isEmpty()) {
            status.condition(
                    ConditionTypes.REGRESSED,
                    "Unknown",
                    NOT_COMPARED,
                    "the run did not succeed ("
                            + phase.wireName()
                            + "); it is not compared with its baseline");
            return null;
        }
        BaselineProfiles.Result baseline = cluster.baseline(run);
        if (!baseline.available()) {
            boolean news =
                    current.map(c -> !baseline.message().equals(c.getMessage())).orElse(true);
            if (news) {
                cluster.event(run, EventRecorder.WARNING, baseline.reason(), baseline.message());
            }
            status.condition(
                    ConditionTypes.REGRESSED, "Unknown", baseline.reason(), baseline.message());
            return baseline.retry() ? Requeue.BASELINE_RETRY : null;
        }
        try {
            BaselineComparison.Outcome outcome =
                    BaselineComparison.compare(baseline.label(), baseline.profiles(), profiles);
            status.apply(s -> s.setComparison(outcome.comparison()));
            if (outcome.inconclusive()) {
                status.condition(
                        ConditionTypes.REGRESSED, "Unknown", outcome.reason(), outcome.message());
            } else {
                status.condition(
                        ConditionTypes.REGRESSED,
                        outcome.regressed(),
                        outcome.reason(),
                        outcome.message());
            }
            cluster.event(
                    run,
                    outcome.regressed() ? EventRecorder.WARNING : EventRecorder.NORMAL,
                    outcome.regressed() ? "Regressed" : "Compared",
                    outcome.message());
        } catch (IllegalArgumentException e) {
            String message = "cannot compare with " + baseline.label() + ": " + e.getMessage();
            cluster.event(run, EventRecorder.WARNING, BaselineProfiles.INVALID, message);
            status.condition(
                    ConditionTypes.REGRESSED, "Unknown", BaselineProfiles.INVALID, message);
        }
        return null;
    }
}
