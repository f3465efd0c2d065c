package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.operator.CapacityProgress;
import io.inferencebench.operator.Parts;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.metrics.StageWindows;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Initializing: runner pods load their data and warm up, then report ready in their parts. When all
 * are, the first stage's start barrier is set {@link #FIRST_BARRIER_LEAD} ahead and the run is
 * Running; a failed runner or {@code spec.runner.startTimeout} ends it.
 */
public final class InitializingStep implements RunStep {

    /**
     * Lead of the first stage's barrier: the server-metric scraping of the run starts with it, and
     * an operator pod that has not scraped yet (cold HTTP client, endpoint lookup) on a busy node
     * took over a second for its first answer; the start scrape must be answered before the barrier
     * to stand for it. The runners are ready and idle meanwhile.
     */
    public static final Duration FIRST_BARRIER_LEAD = Duration.ofSeconds(5);

    private final RunCluster cluster;
    private final StageWindows windows;
    private final RunGuards guards;
    private final SearchStep search;
    private final Clock clock;

    public InitializingStep(
            RunCluster cluster,
            StageWindows windows,
            RunGuards guards,
            SearchStep search,
            Clock clock) {
        this.cluster = cluster;
        this.windows = windows;
        this.guards = guards;
        this.search = search;
        this.clock = clock;
    }

    @Override
    public Duration step(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        int parallelism = run.getSpec().getRunner().getParallelism();
        if (guards.runnerFailure(turn)) {
            return null;
        }
        turn.status()
                .apply(
                        s ->
                                s.setEnvironment(
                                        cluster.sampleReadyReplicas(
                                                turn.run(), s.getEnvironment(), turn.now())));
        Parts parts = turn.parts();
        if (parts.allReady(parallelism)) {
            // Before the barrier is set from the clock: the reset takes a moment.
            StageCacheState.beforeBarrier(turn, cluster, 1);
            Instant start =
                    clock.instant().plus(FIRST_BARRIER_LEAD).plus(StageCacheState.warmingLead(run));
            status.condition(
                    ConditionTypes.RUNNERS_READY,
                    true,
                    "AllReady",
                    parallelism + " runner pod(s) ready at the start barrier");
            status.phase(Phase.RUNNING, "stage 1 starts at " + StatusAggregator.format(start));
            // Scraping starts now, before the barrier, not at the first Running reconcile.
            windows.track(run);
            windows.windowStarts(run, Instant.parse(StatusAggregator.format(start)).toEpochMilli());
            search.firstProbe(turn);
            List<StageSpec> stages = CapacityProgress.stages(run, status.view());
            // Without spec.target.model the pods discovered it; the status (MODEL column) and the
            // profiles name what they found.
            String discovered =
                    parts.all().stream()
                            .map(Parts.Part::model)
                            .flatMap(java.util.Optional::stream)
                            .findFirst()
                            .orElse(null);
            status.apply(
                    s -> {
                        if ((s.getModel() == null || s.getModel().isBlank())
                                && discovered != null) {
                            s.setModel(discovered);
                        }
                        s.setStartTime(StatusAggregator.format(start));
                        s.setStageStartTimes(List.of(StatusAggregator.format(start)));
                        s.setStage("1/" + stages.size());
                        s.setProgress(LiveView.progress(1, stages, 0, 0));
                    });
            return Requeue.PROGRESS_REFRESH;
        }
        // Since admission: RunnersReady is first decided then (TargetReady can be True much
        // earlier, while the run waited in the queue).
        Instant initializingSince =
                status.view()
                        .condition(ConditionTypes.RUNNERS_READY)
                        .map(c -> Instant.parse(c.getLastTransitionTime()))
                        .orElse(now);
        Duration startTimeout = Durations.parse(run.getSpec().getRunner().getStartTimeout());
        long ready = parts.all().stream().filter(p -> !p.state().isEmpty()).count();
        if (now.isAfter(initializingSince.plus(startTimeout))) {
            String message =
                    ready
                            + " of "
                            + parallelism
                            + " runner pod(s) ready after spec.runner.startTimeout "
                            + run.getSpec().getRunner().getStartTimeout();
            status.condition(ConditionTypes.RUNNERS_READY, false, "StartTimeout", message);
            turn.finish(Phase.FAILED, "RunnersNotReady", message);
            return null;
        }
        status.condition(
                ConditionTypes.RUNNERS_READY,
                false,
                "Starting",
                ready + " of " + parallelism + " runner pod(s) ready");
        return Requeue.RUNNERS_STARTING;
    }
}
