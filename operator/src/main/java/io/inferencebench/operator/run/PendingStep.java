package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.operator.CapacityProgress;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.TargetProbe;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Pending: the run's references and target are checked until they are ready (or {@code
 * spec.target.readinessTimeout} ends the run), then it waits in the {@link RunQueue} for a slot,
 * then starts Initializing: the runner Job is launched by the workflow once this is patched.
 */
public final class PendingStep implements RunStep {

    private final RunCluster cluster;
    private final RunQueue queue;

    public PendingStep(RunCluster cluster, RunQueue queue) {
        this.cluster = cluster;
        this.queue = queue;
    }

    @Override
    public Duration step(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        Duration readinessTimeout =
                Durations.parse(run.getSpec().getTarget().getReadinessTimeout());
        boolean timedOut = now.isAfter(targetWaitStart(run, status, now).plus(readinessTimeout));
        List<String> missing = cluster.missingReferences(run);
        if (!missing.isEmpty()) {
            String message = String.join("; ", missing);
            queue.leave(turn, message);
            status.condition(ConditionTypes.TARGET_READY, false, "MissingReference", message);
            if (timedOut) {
                turn.finish(Phase.FAILED, "MissingReference", message);
                return null;
            }
            if (!message.equals(status.view().getMessage())) {
                cluster.event(run, EventRecorder.WARNING, "MissingReference", message);
            }
            status.phase(Phase.PENDING, message);
            return Requeue.MISSING_REFERENCE;
        }
        TargetProbe.Result probe = cluster.probeTarget(run);
        if (!probe.ready()) {
            queue.leave(turn, probe.message());
            status.condition(ConditionTypes.TARGET_READY, false, probe.reason(), probe.message());
            if (timedOut) {
                turn.finish(
                        Phase.FAILED,
                        "TargetNotReady",
                        probe.message()
                                + " after spec.target.readinessTimeout "
                                + run.getSpec().getTarget().getReadinessTimeout());
                return null;
            }
            if (!probe.message().equals(status.view().getMessage())) {
                cluster.event(run, EventRecorder.WARNING, probe.reason(), probe.message());
            }
            status.phase(Phase.PENDING, "waiting for target: " + probe.message());
            return Requeue.TARGET_NOT_READY;
        }
        List<StageSpec> stages = CapacityProgress.stages(run, status.view());
        status.condition(ConditionTypes.TARGET_READY, true, probe.reason(), probe.message());
        if (!queue.admit(turn)) {
            return Requeue.QUEUED;
        }
        EnvironmentStatus measured = cluster.observeEnvironment(run, now);
        status.apply(s -> s.setEnvironment(measured));
        status.condition(
                ConditionTypes.RUNNERS_READY,
                false,
                "Starting",
                "waiting for " + run.getSpec().getRunner().getParallelism() + " runner pod(s)");
        status.condition(ConditionTypes.COMPLETED, false, "InProgress", "run not finished");
        status.phase(Phase.INITIALIZING, "starting runner pods");
        status.apply(
                s -> {
                    s.setModel(run.getSpec().getTarget().getModel());
                    s.setStage("0/" + stages.size());
                    s.setProgress(LiveView.progress(0, stages, 0, 0));
                });
        return Requeue.RUNNERS_STARTING;
    }

    /**
     * When the wait for the target began, the start of {@code spec.target.readinessTimeout}: the
     * run's creation, or for a run that was in the queue (so its target was ready) the moment the
     * target stopped being ready; time spent waiting for a slot alone never counts.
     */
    static Instant targetWaitStart(BenchmarkRun run, StatusAggregator status, Instant now) {
        Instant created = Instant.parse(run.getMetadata().getCreationTimestamp());
        if (status.view().condition(ConditionTypes.QUEUED).isEmpty()) {
            return created;
        }
        Instant since =
                status.view()
                        .condition(ConditionTypes.TARGET_READY)
                        .map(
                                c ->
                                        "True".equals(c.getStatus())
                                                ? now
                                                : Instant.parse(c.getLastTransitionTime()))
                        .orElse(created);
        return since.isAfter(created) ? since : created;
    }
}
