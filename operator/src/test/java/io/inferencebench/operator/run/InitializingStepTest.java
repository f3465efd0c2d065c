package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.CLOCK;
import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.condition;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.StatusAggregator;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Initializing: the start barrier once every runner is ready, or the start timeout. */
class InitializingStepTest {

    private final FakeCluster cluster = new FakeCluster();
    private final RecordedWindows windows = new RecordedWindows();
    private final InitializingStep step =
            new InitializingStep(cluster, windows, new RunGuards(cluster), new SearchStep(), CLOCK);

    /** The status Pending left: Initializing since {@code since}, RunnersReady False Starting. */
    private static BenchmarkRunStatus initializing(Instant since) {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(Phase.INITIALIZING);
        status.setModel("google/gemma-7b");
        status.setConditions(
                new ArrayList<>(
                        List.of(
                                new ConditionBuilder()
                                        .withType(ConditionTypes.RUNNERS_READY)
                                        .withStatus("False")
                                        .withReason("Starting")
                                        .withLastTransitionTime(StatusAggregator.format(since))
                                        .build())));
        return status;
    }

    private static Map<String, String> ready() {
        return Map.of(PartReport.STATE, PartReport.STATE_READY, PartReport.RUN_UID, Turns.UID);
    }

    @Test
    void whenEveryRunnerIsReadyTheFirstBarrierIsSetAheadAndScrapingStarts() {
        RunTurn turn =
                Turns.sweep()
                        .status(initializing(NOW.minusSeconds(10)))
                        .part(0, ready())
                        .part(1, ready())
                        .build();

        assertThat(step.step(turn)).isEqualTo(Requeue.PROGRESS_REFRESH);

        BenchmarkRunStatus status = decided(turn);
        Instant barrier = NOW.plus(InitializingStep.FIRST_BARRIER_LEAD);
        String start = StatusAggregator.format(barrier);
        assertThat(status.getPhase()).isEqualTo(Phase.RUNNING);
        assertThat(status.getMessage()).isEqualTo("stage 1 starts at " + start);
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getStatus()).isEqualTo("True");
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getReason())
                .isEqualTo("AllReady");
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getMessage())
                .isEqualTo("2 runner pod(s) ready at the start barrier");
        assertThat(status.getStartTime()).isEqualTo(start);
        assertThat(status.getStageStartTimes()).containsExactly(start);
        assertThat(status.getStage()).isEqualTo("1/2");
        assertThat(status.getProgress().getCurrentStage()).isEqualTo(1);
        assertThat(status.getProgress().getDone()).isEqualTo("0/200");
        assertThat(status.getCapacity()).as("not a search").isNull();
        // scraping starts before the barrier, its window at the barrier
        assertThat(windows.tracked).isEqualTo(1);
        assertThat(windows.windowStarts).containsExactly(barrier.toEpochMilli());
        assertThat(cluster.readySamples).containsExactly(NOW);
    }

    @Test
    void theModelTheRunnersDiscoveredNamesTheRunWhenTheSpecHasNone() {
        BenchmarkRunStatus before = initializing(NOW);
        before.setModel(null);
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}}
                                load: {requestRates: [5], numPrompts: 10}
                                """)
                        .status(before)
                        .part(
                                0,
                                Map.of(
                                        PartReport.STATE,
                                        PartReport.STATE_READY,
                                        PartReport.MODEL,
                                        "acme/found-by-runner-7b"))
                        .build();

        step.step(turn);

        assertThat(decided(turn).getModel()).isEqualTo("acme/found-by-runner-7b");
    }

    @Test
    void theSpecsModelIsKeptWhateverTheRunnersReport() {
        RunTurn turn =
                Turns.sweep()
                        .status(initializing(NOW))
                        .part(0, Map.of(PartReport.STATE, PartReport.STATE_READY))
                        .part(
                                1,
                                Map.of(
                                        PartReport.STATE,
                                        PartReport.STATE_READY,
                                        PartReport.MODEL,
                                        "other"))
                        .build();
        step.step(turn);
        assertThat(decided(turn).getModel()).isEqualTo("google/gemma-7b");
    }

    @Test
    void whileRunnersStartTheConditionCountsTheReadyOnes() {
        RunTurn turn =
                Turns.sweep().status(initializing(NOW.minusSeconds(10))).part(0, ready()).build();

        assertThat(step.step(turn)).isEqualTo(Requeue.RUNNERS_STARTING);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.INITIALIZING);
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getReason())
                .isEqualTo("Starting");
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getMessage())
                .isEqualTo("1 of 2 runner pod(s) ready");
        // the transition time is the one admission set, not this reconcile's
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getLastTransitionTime())
                .isEqualTo(StatusAggregator.format(NOW.minusSeconds(10)));
        assertThat(windows.tracked).isZero();
    }

    @Test
    void runnersNotReadyWithinTheStartTimeoutFailTheRun() {
        String spec =
                """
                target: {service: {name: vllm, port: 8000}}
                load: {requestRates: [1], numPrompts: 5}
                runner: {startTimeout: 1s}
                """;
        RunTurn inTime = Turns.run(spec).status(initializing(NOW.minusSeconds(1))).build();
        assertThat(step.step(inTime)).isEqualTo(Requeue.RUNNERS_STARTING);

        RunTurn late = Turns.run(spec).status(initializing(NOW.minusSeconds(2))).build();
        assertThat(step.step(late)).isNull();

        BenchmarkRunStatus status = decided(late);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("RunnersNotReady");
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getReason())
                .isEqualTo("StartTimeout");
        assertThat(status.getMessage())
                .isEqualTo("0 of 1 runner pod(s) ready after spec.runner.startTimeout 1s");
    }

    @Test
    void aFailedRunnerEndsTheRunBeforeAnythingElse() {
        RunTurn turn =
                Turns.sweep()
                        .status(initializing(NOW))
                        .part(0, ready())
                        .part(1, Map.of(PartReport.STATE, PartReport.STATE_FAILED))
                        .build();

        assertThat(step.step(turn)).isNull();

        assertThat(decided(turn).getMessage()).isEqualTo("runner pod 1 failed: no reason given");
        assertThat(windows.tracked).isZero();
        assertThat(cluster.readySamples).isEmpty();
    }

    @Test
    void aSearchPublishesItsFirstProbeWithTheFirstBarrier() {
        RunTurn turn =
                Turns.run(
                                """
                                target: {url: "http://x:1", model: m}
                                load: {numPrompts: 100}
                                slo: {ttft: 500ms, minAttainment: 0.9}
                                search: {minRate: 2, maxRate: 64}
                                """)
                        .status(initializing(NOW))
                        .part(0, ready())
                        .build();

        step.step(turn);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getCapacity().getProbes())
                .singleElement()
                .satisfies(p -> assertThat(p.getRequestRate()).isEqualTo(2.0));
        assertThat(status.getStage()).isEqualTo("1/1");
    }
}
