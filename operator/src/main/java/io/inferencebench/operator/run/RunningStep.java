package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunProgress;
import io.inferencebench.crds.v1alpha1.StageResult;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.operator.CapacityProgress;
import io.inferencebench.operator.Parts;
import io.inferencebench.operator.StageWindows;
import io.inferencebench.operator.StatusAggregator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Running: while a stage runs, the live view follows the runners' progress; when every runner
 * finished it, the stage is assembled ({@link StageAssembly}) and the next stage's barrier is set
 * {@link #BARRIER_LEAD} plus the cool-down ahead, or after the last stage (or the search's last
 * probe) the run is Aggregating. A failed runner or {@code spec.timeout} ends it.
 */
public final class RunningStep implements RunStep {

    /** Time between opening a barrier and the instant runners start, so all see it in time. */
    public static final Duration BARRIER_LEAD = Duration.ofSeconds(2);

    private final RunCluster cluster;
    private final StageWindows windows;
    private final RunGuards guards;
    private final StageAssembly assembly;
    private final Clock clock;

    public RunningStep(
            RunCluster cluster,
            StageWindows windows,
            RunGuards guards,
            StageAssembly assembly,
            Clock clock) {
        this.cluster = cluster;
        this.windows = windows;
        this.guards = guards;
        this.assembly = assembly;
        this.clock = clock;
    }

    @Override
    public Duration step(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        if (guards.runnerFailure(turn) || guards.deadlineExceeded(turn)) {
            return null;
        }
        turn.status()
                .apply(
                        s ->
                                s.setEnvironment(
                                        cluster.sampleReadyReplicas(
                                                turn.run(), s.getEnvironment(), turn.now())));
        int parallelism = run.getSpec().getRunner().getParallelism();
        List<StageSpec> stages = CapacityProgress.stages(run, status.view());
        windows.track(run);
        Parts parts = turn.parts();
        List<String> starts = new ArrayList<>(status.view().getStageStartTimes());
        int current = starts.size();
        windows.windowStarts(run, Instant.parse(starts.get(current - 1)).toEpochMilli());
        LiveView.live(status, parts, current, stages, now);
        if (parts.finishedStage(current) >= parallelism) {
            boolean assembled =
                    status.view().getResults() != null
                            && status.view().getResults().stream()
                                    .anyMatch(r -> r.getStage() == current);
            if (!assembled) {
                // A Prometheus source is read only once its first sample at or after the stage
                // end exists; reconcile again then rather than wait here.
                Duration due = windows.reportDueIn(run, current, now.toEpochMilli());
                if (due.isPositive()) {
                    return due;
                }
            }
            assembly.assemble(turn, current);
            long completed = 0;
            long failed = 0;
            for (StageResult r : turn.results()) {
                completed += r.getCompleted() == null ? 0 : r.getCompleted();
                failed += r.getFailed() == null ? 0 : r.getFailed();
            }
            RunProgress finished = LiveView.progress(current, stages, completed, failed);
            status.apply(s -> s.setProgress(finished));
            if (CapacityProgress.searching(run)) {
                // The next probe's rate follows from the merged results of the probes so far.
                List<StageResult> probed = turn.results();
                probed.sort(java.util.Comparator.comparingInt(StageResult::getStage));
                var step = CapacityProgress.next(run, probed);
                var capacity = CapacityProgress.status(run, probed, step);
                status.apply(s -> s.setCapacity(capacity));
                if (step.done()) {
                    status.phase(
                            Phase.AGGREGATING,
                            "search finished after "
                                    + probed.size()
                                    + " probe(s): "
                                    + step.result().message()
                                    + "; writing profiles");
                    return Requeue.SOON;
                }
            } else if (current == stages.size()) {
                status.phase(Phase.AGGREGATING, "all stages finished; writing profiles");
                return Requeue.SOON;
            }
            List<StageSpec> planned = CapacityProgress.stages(run, status.view());
            // From the clock, not the reconcile's start: assembling the stage (its end scrape,
            // the profile) took a while on a busy node, and a barrier set from the older instant
            // could already be near or past, leaving no time for its start scrape.
            Instant next =
                    clock.instant()
                            .plus(run.getSpec().getLoad().cooldownValue())
                            .plus(BARRIER_LEAD);
            starts.add(StatusAggregator.format(next));
            windows.windowStarts(run, Instant.parse(starts.getLast()).toEpochMilli());
            int nextStage = current + 1;
            status.phase(
                    Phase.RUNNING,
                    "stage " + nextStage + " starts at " + StatusAggregator.format(next));
            status.apply(
                    s -> {
                        s.setStageStartTimes(List.copyOf(starts));
                        s.setStage(nextStage + "/" + planned.size());
                    });
            return Requeue.PROGRESS_REFRESH;
        }
        return Requeue.PROGRESS_REFRESH;
    }
}
