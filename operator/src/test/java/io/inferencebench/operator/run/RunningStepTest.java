package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.SweepStages.bothDone;
import static io.inferencebench.operator.run.SweepStages.firstStageFinished;
import static io.inferencebench.operator.run.SweepStages.running;
import static io.inferencebench.operator.run.SweepStages.stageDone;
import static io.inferencebench.operator.run.Turns.CLOCK;
import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.condition;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Running: the live view, a stage's end, the next barrier, the last stage. */
class RunningStepTest {

    /** The first stage's barrier, 30 s before the turn. */
    private static final Instant STAGE_ONE = NOW.minusSeconds(30);

    private final FakeCluster cluster = new FakeCluster();
    private final RecordedWindows windows = new RecordedWindows();
    private final RunGuards guards = new RunGuards(cluster);
    private final RunningStep step =
            new RunningStep(
                    cluster,
                    windows,
                    guards,
                    new StageAssembly(cluster, windows, CLOCK),
                    new SearchStep(),
                    CLOCK);

    private static Map<String, String> progress(
            int stage, int completed, double rate, double ttft) {
        return Map.of(
                PartReport.STATE,
                PartReport.STATE_RUNNING,
                PartReport.PROGRESS,
                ("{\"stage\":%d,\"completed\":%d,\"failed\":1,\"inFlight\":1,"
                                + "\"achievedRate\":%s,\"ttftP50Ms\":%s}")
                        .formatted(stage, completed, rate, ttft));
    }

    @Test
    void whileAStageRunsTheLiveViewSumsTheRunnersProgress() {
        RunTurn turn =
                Turns.sweep()
                        .status(running(STAGE_ONE))
                        .part(0, progress(1, 4, 2.5, 40))
                        .part(1, progress(1, 3, 2.0, 60))
                        .build();

        assertThat(step.step(turn)).isEqualTo(Requeue.PROGRESS_REFRESH);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.RUNNING);
        assertThat(status.getLive().getRunnersReporting()).isEqualTo(2);
        assertThat(status.getLive().getCompleted()).isEqualTo(7);
        assertThat(status.getLive().getFailed()).isEqualTo(2);
        assertThat(status.getLive().getInFlight()).isEqualTo(2);
        assertThat(status.getLive().getAchievedRate()).isEqualTo(4.5);
        assertThat(status.getLive().getRequestRate()).isEqualTo(5.0);
        assertThat(status.getLive().getTtftP50Ms()).isEqualTo(50.0);
        assertThat(status.getLive().getUpdatedAt()).isEqualTo(StatusAggregator.format(NOW));
        assertThat(status.getSummary().getRps()).isEqualTo("4.50");
        assertThat(status.getSummary().getTtftP50()).isEqualTo("50ms");
        assertThat(status.getProgress().getDone()).isEqualTo("7/200");
        assertThat(status.getResults()).isNull();
        assertThat(windows.tracked).isEqualTo(1);
        assertThat(windows.windowStarts).containsExactly(STAGE_ONE.toEpochMilli());
        assertThat(cluster.readySamples).containsExactly(NOW);
    }

    @Test
    void progressReportsOfAnotherStageAreLeftOutOfTheLiveView() {
        RunTurn turn =
                Turns.sweep()
                        .status(running(STAGE_ONE))
                        .part(0, progress(1, 4, 2.5, 40))
                        .part(1, progress(0, 9, 9.0, 90))
                        .build();
        step.step(turn);
        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getLive().getRunnersReporting()).isEqualTo(1);
        assertThat(status.getLive().getCompleted()).isEqualTo(4);
        assertThat(status.getSummary().getTtftP50()).isEqualTo("40ms");
    }

    @Test
    void whenEveryRunnerFinishedAStageItsProfileIsStoredAndTheNextBarrierOpens() {
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));

        assertThat(step.step(turn)).isEqualTo(Requeue.PROGRESS_REFRESH);

        BenchmarkRunStatus status = decided(turn);
        // cooldown 0s: the barrier is BARRIER_LEAD from the clock
        String next = StatusAggregator.format(NOW.plus(RunningStep.BARRIER_LEAD));
        assertThat(status.getPhase()).isEqualTo(Phase.RUNNING);
        assertThat(status.getMessage()).isEqualTo("stage 2 starts at " + next);
        assertThat(status.getStageStartTimes())
                .containsExactly(StatusAggregator.format(STAGE_ONE), next);
        assertThat(status.getStage()).isEqualTo("2/2");
        assertThat(status.getResults())
                .singleElement()
                .satisfies(
                        r -> {
                            assertThat(r.getStage()).isEqualTo(1);
                            assertThat(r.getCompleted()).isEqualTo(20L);
                            assertThat(r.getRequestRate()).isEqualTo(5.0);
                            assertThat(r.getStatistics()).isEqualTo("merged");
                        });
        assertThat(status.getProfiles()).hasSize(1);
        assertThat(status.getProfiles().getFirst().at("/metrics/num_prompts").asLong())
                .isEqualTo(20);
        assertThat(cluster.stored).containsOnlyKeys(status.getResults().getFirst().getProfileKey());
        assertThat(status.getProfileConfigMap()).isEqualTo("sweep-profile");
        assertThat(condition(status, ConditionTypes.RESULTS_STORED).getReason())
                .isEqualTo("InStatus");
        assertThat(status.getProgress().getDone()).isEqualTo("20/200");
        assertThat(status.getSummary().getRps()).isNotBlank();
        assertThat(status.getSummary().getLatencyP99()).endsWith("ms");
        // the window of stage 1 reported, from its barrier to now; stage 2's opened
        assertThat(windows.reported)
                .singleElement()
                .satisfies(
                        w ->
                                assertThat(w)
                                        .containsExactly(
                                                1,
                                                STAGE_ONE.toEpochMilli(),
                                                NOW.toEpochMilli(),
                                                NOW.minusSeconds(25).toEpochMilli()));
        assertThat(windows.windowStarts)
                .containsExactly(
                        STAGE_ONE.toEpochMilli(),
                        NOW.plus(RunningStep.BARRIER_LEAD).toEpochMilli());
    }

    @Test
    void theNextBarrierLeavesTheCooldown() {
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}, model: m}
                                load: {requestRates: [5, 10], numPrompts: 20, cooldown: 30s}
                                """)
                        .status(running(STAGE_ONE))
                        .part(0, stageDone(1, 0, 5))
                        .build();

        step.step(turn);

        assertThat(decided(turn).getStageStartTimes().getLast())
                .isEqualTo(
                        StatusAggregator.format(
                                NOW.plusSeconds(30).plus(RunningStep.BARRIER_LEAD)));
    }

    @Test
    void afterTheLastStageTheRunIsAggregatingSoon() {
        BenchmarkRunStatus stageTwo = Turns.after(stageOneAssembled());
        RunTurn turn =
                Turns.sweep().status(stageTwo).part(0, bothDone(0)).part(1, bothDone(1)).build();

        assertThat(step.step(turn)).isEqualTo(Requeue.SOON);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.AGGREGATING);
        assertThat(status.getMessage()).isEqualTo("all stages finished; writing profiles");
        assertThat(status.getResults()).extracting(r -> r.getStage()).containsExactly(1, 2);
        assertThat(status.getResults().get(1).getRequestRate()).isEqualTo(10.0);
        assertThat(status.getProgress().getDone()).isEqualTo("40/200");
        assertThat(status.getStageStartTimes()).hasSize(2);
        assertThat(cluster.stored).hasSize(2);
    }

    @Test
    void aStageWhoseRunnersAreNotAllDoneIsNotAssembled() {
        RunTurn turn =
                Turns.sweep()
                        .status(running(STAGE_ONE))
                        .part(0, stageDone(1, 0, 2.5))
                        .part(1, progress(1, 9, 2.5, 40))
                        .build();
        assertThat(step.step(turn)).isEqualTo(Requeue.PROGRESS_REFRESH);
        assertThat(decided(turn).getResults()).isNull();
        assertThat(windows.reported).isEmpty();
    }

    @Test
    void aPrometheusWindowNotDueYetIsWaitedForWithoutAssembling() {
        windows.dueIn = Duration.ofMillis(2_500);
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));

        assertThat(step.step(turn)).isEqualTo(Duration.ofMillis(2_500));

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getResults()).isNull();
        assertThat(status.getStageStartTimes()).hasSize(1);
        assertThat(cluster.stored).isEmpty();
    }

    @Test
    void aStageWithoutAnyServerMetricsWarnsAndTheRunGoesOn() {
        windows.report =
                new ServerMetricsReport(
                        List.of(),
                        Map.of(),
                        new ScrapeCoverage(
                                4, 0, 4, 1, List.of("10.1.2.3: connection refused"), Map.of()));
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));

        assertThat(step.step(turn)).isEqualTo(Requeue.PROGRESS_REFRESH);

        assertThat(cluster.events("ScrapesFailed"))
                .singleElement()
                .satisfies(
                        e -> {
                            assertThat(e.type()).isEqualTo(EventRecorder.WARNING);
                            assertThat(e.message())
                                    .isEqualTo(
                                            "no server metrics for stage 1: 10.1.2.3: connection"
                                                    + " refused; the run continues without them");
                        });
        assertThat(decided(turn).getResults()).hasSize(1);
    }

    @Test
    void aRunPastItsTimeoutFailsBeforeItsStageIsLookedAt() {
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}, model: m}
                                load: {requestRates: [5, 10], numPrompts: 20}
                                timeout: 10s
                                """)
                        .status(running(STAGE_ONE))
                        .part(0, stageDone(1, 0, 5))
                        .build();

        assertThat(step.step(turn)).isNull();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("DeadlineExceeded");
        assertThat(status.getResults()).isNull();
        assertThat(windows.tracked).isZero();
    }

    @Test
    void aRunnerPodFailingMidStageFailsTheRunAndKeepsWhatWasAssembled() {
        BenchmarkRunStatus stageTwo = Turns.after(stageOneAssembled());
        RunTurn turn =
                Turns.sweep()
                        .status(stageTwo)
                        .part(0, bothDone(0))
                        .part(
                                1,
                                Map.of(
                                        PartReport.STATE,
                                        PartReport.STATE_FAILED,
                                        PartReport.ERROR,
                                        "OOMKilled"))
                        .build();

        assertThat(step.step(turn)).isNull();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(status.getMessage()).isEqualTo("runner pod 1 failed: OOMKilled");
        assertThat(status.getResults()).hasSize(1);
        assertThat(status.getCompletionTime()).isEqualTo(StatusAggregator.format(NOW));
    }

    /** The turn in which stage 1 of the sweep was assembled and stage 2's barrier opened. */
    private RunTurn stageOneAssembled() {
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));
        step.step(turn);
        return turn;
    }
}
