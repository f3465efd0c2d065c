package io.inferencebench.operator.run;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.SpecValidation;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.metrics.PrometheusSourceConfigs;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks that end a run from more than one phase: an invalid spec, {@code spec.cancel}, a
 * failed runner pod or Job, {@code spec.timeout}.
 */
public final class RunGuards {

    private final RunCluster cluster;

    public RunGuards(RunCluster cluster) {
        this.cluster = cluster;
    }

    /**
     * Ends a run that must not go on whatever its phase: an invalid spec (the schema cannot check
     * everything) fails it, {@code spec.cancel} cancels it.
     *
     * @return whether the run was ended
     */
    public boolean stopsRun(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        List<String> problems = new ArrayList<>(SpecValidation.validate(run.getSpec()));
        if (run.getSpec().getMetrics() != null
                && run.getSpec().getMetrics().getPrometheus() != null) {
            problems.addAll(
                    PrometheusSourceConfigs.validate(run.getSpec().getMetrics().getPrometheus()));
        }
        if (!problems.isEmpty()) {
            String message = String.join("; ", problems);
            cluster.event(run, EventRecorder.WARNING, "InvalidSpec", message);
            status.condition(ConditionTypes.TARGET_READY, false, "InvalidSpec", message);
            turn.finish(Phase.FAILED, "InvalidSpec", "invalid spec: " + message);
            return true;
        }
        if (Boolean.TRUE.equals(run.getSpec().getCancel())) {
            turn.finish(Phase.CANCELLED, "Cancelled", cancelMessage(status));
            return true;
        }
        return false;
    }

    /**
     * Fails the run when a runner pod reported a failure or the runner Job failed; finished stages
     * are kept.
     *
     * @return whether the run was ended
     */
    public boolean runnerFailure(RunTurn turn) {
        var failedPart = turn.parts().failed();
        if (failedPart.isPresent()) {
            String message =
                    "runner pod "
                            + failedPart.get().index()
                            + " failed: "
                            + (failedPart.get().error() == null
                                    ? "no reason given"
                                    : failedPart.get().error());
            turn.finish(Phase.FAILED, "RunnerFailed", message);
            return true;
        }
        Job job = turn.runnerJob().orElse(null);
        if (job != null && job.getStatus() != null) {
            Integer failed = job.getStatus().getFailed();
            boolean jobFailed =
                    (failed != null && failed > 0)
                            || (job.getStatus().getConditions() != null
                                    && job.getStatus().getConditions().stream()
                                            .anyMatch(
                                                    c ->
                                                            "Failed".equals(c.getType())
                                                                    && "True"
                                                                            .equals(
                                                                                    c
                                                                                            .getStatus())));
            if (jobFailed) {
                String message =
                        "runner Job "
                                + job.getMetadata().getName()
                                + " failed"
                                + (failed != null ? " (" + failed + " pod(s) failed)" : "")
                                + "; results of finished stages are kept";
                turn.finish(Phase.FAILED, "RunnerFailed", message);
                return true;
            }
        }
        return false;
    }

    /**
     * Fails the run once {@code spec.timeout} has passed since its first stage started.
     *
     * @return whether the run was ended
     */
    public boolean deadlineExceeded(RunTurn turn) {
        String timeout = turn.spec().getTimeout();
        String startTime = turn.status().view().getStartTime();
        if (timeout == null || startTime == null) {
            return false;
        }
        if (turn.now().isAfter(Instant.parse(startTime).plus(Durations.parse(timeout)))) {
            turn.finish(
                    Phase.FAILED,
                    "DeadlineExceeded",
                    "spec.timeout " + timeout + " exceeded; results of finished stages are kept");
            return true;
        }
        return false;
    }

    private static String cancelMessage(StatusAggregator status) {
        int finished = status.view().getResults() == null ? 0 : status.view().getResults().size();
        return "cancelled by spec.cancel; " + finished + " finished stage profile(s) kept";
    }
}
