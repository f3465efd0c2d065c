package io.inferencebench.operator.run;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.Parts;
import io.inferencebench.operator.StatusAggregator;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * One reconcile of one run, everything a step decides from: the run as last written, the status
 * being built (the only thing a step writes), the instant of the reconcile, and what the runner
 * pods and their Job show. The reconciler reads the last three from the operator SDK's context when
 * a step first asks; a unit test passes them in, so no step needs the SDK's context.
 */
public final class RunTurn {

    private final BenchmarkRun run;
    private final StatusAggregator status;
    private final Instant now;
    private final Supplier<Parts> partsSource;
    private final Supplier<Optional<Job>> runnerJob;
    private final Supplier<Stream<BenchmarkRun>> cachedRuns;
    private Parts parts;

    /**
     * @param run the run, its spec and status as the API server has them now
     * @param status the status this reconcile builds, started from the run's
     * @param now the reconcile instant (the clock read once)
     * @param parts reads the runner pods' part ConfigMaps of this run
     * @param runnerJob reads the run's runner Job, empty before it exists
     * @param cachedRuns the runs in the operator's cache (every watched namespace), for the queue
     */
    public RunTurn(
            BenchmarkRun run,
            StatusAggregator status,
            Instant now,
            Supplier<Parts> parts,
            Supplier<Optional<Job>> runnerJob,
            Supplier<Stream<BenchmarkRun>> cachedRuns) {
        this.run = run;
        this.status = status;
        this.now = now;
        this.partsSource = parts;
        this.runnerJob = runnerJob;
        this.cachedRuns = cachedRuns;
    }

    public BenchmarkRun run() {
        return run;
    }

    public BenchmarkRunSpec spec() {
        return run.getSpec();
    }

    public StatusAggregator status() {
        return status;
    }

    public Instant now() {
        return now;
    }

    /** What the runner pods reported, read once per turn so every decision sees the same. */
    public Parts parts() {
        if (parts == null) {
            parts = partsSource.get();
        }
        return parts;
    }

    public Optional<Job> runnerJob() {
        return runnerJob.get();
    }

    public Stream<BenchmarkRun> cachedRuns() {
        return cachedRuns.get();
    }

    /** {@code namespace/name}, for log lines. */
    public String name() {
        return run.getMetadata().getNamespace() + "/" + run.getMetadata().getName();
    }

    /** Whether the status being built has condition {@code type} True. */
    public boolean conditionTrue(String type) {
        return status.view().condition(type).map(c -> "True".equals(c.getStatus())).orElse(false);
    }

    /** The finished stages' results so far, in a list of the caller's own. */
    public List<StageSummary> results() {
        List<StageSummary> results = status.view().getResults();
        return results == null ? new ArrayList<>() : new ArrayList<>(results);
    }

    /**
     * Ends the run: Completed True with the reason, the terminal phase, the completion time; the
     * live view goes.
     *
     * @param phase Succeeded, Failed or Cancelled
     * @param reason the Completed reason
     * @param message the phase message and Completed message
     */
    public void finish(Phase phase, String reason, String message) {
        status.condition(ConditionTypes.COMPLETED, true, reason, message);
        status.phase(phase, message);
        status.apply(
                s -> {
                    s.setCompletionTime(StatusAggregator.format(now));
                    s.setLive(null);
                });
    }
}
