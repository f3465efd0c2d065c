package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunProgress;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.operator.CapacityProgress;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.metrics.StageWindows;
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
    private final SearchStep search;
    private final Clock clock;

    public RunningStep(
            RunCluster cluster,
            StageWindows windows,
            RunGuards guards,
            StageAssembly assembly,
            SearchStep search,
            Clock clock) {
        this.cluster = cluster;
        this.windows = windows;
        this.guards = guards;
        this.assembly = assembly;
        this.search = search;
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
        status.apply(
                s -> s.setEnvironment(cluster.sampleReadyReplicas(run, s.getEnvironment(), now)));
        List<StageSpec> stages = CapacityProgress.stages(run, status.view());
        windows.track(run);
        int current = status.view().getStageStartTimes().size();
        windows.windowStarts(run, stageStart(status, current).toEpochMilli());
        LiveView.live(status, turn.parts(), current, stages, now);
        if (turn.parts().finishedStage(current) < run.getSpec().getRunner().getParallelism()) {
            return Requeue.PROGRESS_REFRESH;
        }
        if (!assembled(status, current)) {
            // A Prometheus source is read only once its first sample at or after the stage end
            // exists; reconcile again then rather than wait here.
            Duration due = windows.reportDueIn(run, current, now.toEpochMilli());
            if (due.isPositive()) {
                return due;
            }
        }
        assembly.assemble(turn, current);
        RunProgress finished = LiveView.finished(current, stages, turn.results());
        status.apply(s -> s.setProgress(finished));
        if (search.searching(run)) {
            if (search.probed(turn)) {
                return Requeue.SOON;
            }
        } else if (current == stages.size()) {
            status.phase(Phase.AGGREGATING, "all stages finished; writing profiles");
            return Requeue.SOON;
        }
        nextBarrier(turn, current + 1);
        return Requeue.PROGRESS_REFRESH;
    }

    private static Instant stageStart(StatusAggregator status, int stage) {
        return Instant.parse(status.view().getStageStartTimes().get(stage - 1));
    }

    private static boolean assembled(StatusAggregator status, int stage) {
        return status.view().getResults() != null
                && status.view().getResults().stream().anyMatch(r -> r.getStage() == stage);
    }

    /** Opens the barrier of {@code stage}: the cool-down plus {@link #BARRIER_LEAD} from now. */
    private void nextBarrier(RunTurn turn, int stage) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        List<StageSpec> planned = CapacityProgress.stages(run, status.view());
        StageCacheState.beforeBarrier(turn, cluster, stage);
        // From the clock, not the reconcile's start: assembling the stage (its end scrape, the
        // profile) took a while on a busy node, and a barrier set from the older instant could
        // already be near or past, leaving no time for its start scrape.
        Instant next =
                clock.instant()
                        .plus(run.getSpec().getLoad().cooldownValue())
                        .plus(BARRIER_LEAD)
                        .plus(StageCacheState.warmingLead(run));
        List<String> starts = new ArrayList<>(status.view().getStageStartTimes());
        starts.add(StatusAggregator.format(next));
        windows.windowStarts(run, Instant.parse(starts.getLast()).toEpochMilli());
        status.phase(
                Phase.RUNNING, "stage " + stage + " starts at " + StatusAggregator.format(next));
        status.apply(
                s -> {
                    s.setStageStartTimes(List.copyOf(starts));
                    s.setStage(stage + "/" + planned.size());
                });
    }
}
