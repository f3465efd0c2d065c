package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.condition;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.LiveStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The checks that end a run from any phase before its step. */
class RunGuardsTest {

    private final FakeCluster cluster = new FakeCluster();
    private final RunGuards guards = new RunGuards(cluster);

    /** The sweep's runner Job, its status to be filled in. */
    private static JobBuilder sweepRunnerJob() {
        return new JobBuilder().withNewMetadata().withName("sweep-runner").endMetadata();
    }

    @Test
    void aSemanticallyInvalidSpecFailsTheRunWithAMessageAndAWarning() {
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}}
                                load: {requestRates: [5], numPrompts: 20}
                                runner: {parallelism: 30}
                                """)
                        .build();

        assertThat(guards.stopsRun(turn)).isTrue();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(status.getMessage())
                .startsWith("invalid spec: ")
                .contains("spec.load.numPrompts: 20 is lower than spec.runner.parallelism 30");
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("InvalidSpec");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getReason())
                .isEqualTo("InvalidSpec");
        assertThat(status.getCompletionTime()).isEqualTo(StatusAggregator.format(NOW));
        assertThat(cluster.events("InvalidSpec"))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EventRecorder.WARNING));
    }

    @Test
    void aPrometheusSelectorTheSchemaLetThroughButJavaCannotCompileIsAnInvalidSpec() {
        RunTurn turn =
                Turns.run(
                                """
                                target: {url: "http://127.0.0.1:1", model: m}
                                load: {requestRates: [5], numPrompts: 20}
                                metrics:
                                  prometheus: {url: "http://prom:9090", selector: '{job=~"(unclosed"}'}
                                """)
                        .build();

        boolean stopped = guards.stopsRun(turn);

        BenchmarkRunStatus status = decided(turn);
        assertThat(stopped).as("%s", status.getMessage()).isTrue();
        assertThat(status.getMessage())
                .contains("spec.metrics.prometheus.selector: invalid regular expression");
    }

    @Test
    void cancelEndsTheRunKeepingItsFinishedStages() {
        BenchmarkRunStatus running = new BenchmarkRunStatus();
        running.setPhase(Phase.RUNNING);
        StageSummary first = new StageSummary();
        first.setStage(1);
        running.setResults(new ArrayList<>(List.of(first)));
        running.setLive(new LiveStatus());
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}}
                                load: {requestRates: [5, 10], numPrompts: 20}
                                cancel: true
                                """)
                        .status(running)
                        .build();

        assertThat(guards.stopsRun(turn)).isTrue();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.CANCELLED);
        assertThat(status.getMessage())
                .isEqualTo("cancelled by spec.cancel; 1 finished stage profile(s) kept");
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason()).isEqualTo("Cancelled");
        assertThat(status.getLive()).isNull();
        assertThat(status.getResults()).hasSize(1);
    }

    @Test
    void aValidRunningRunIsNotStopped() {
        RunTurn turn = Turns.sweep().build();
        assertThat(guards.stopsRun(turn)).isFalse();
        assertThat(decided(turn).getPhase()).isEqualTo(Phase.PENDING);
        assertThat(cluster.events).isEmpty();
    }

    @Test
    void aRunnerPodThatReportsAFailureFailsTheRunNamingItsReason() {
        RunTurn turn =
                Turns.sweep()
                        .part(0, Map.of(PartReport.STATE, PartReport.STATE_RUNNING))
                        .part(
                                1,
                                Map.of(
                                        PartReport.STATE,
                                        PartReport.STATE_FAILED,
                                        PartReport.ERROR,
                                        "dataset not found"))
                        .build();

        assertThat(guards.runnerFailure(turn)).isTrue();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(status.getMessage()).isEqualTo("runner pod 1 failed: dataset not found");
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("RunnerFailed");
    }

    @Test
    void aFailedRunnerJobFailsTheRunByItsCountOrItsCondition() {
        RunTurn counted =
                Turns.sweep()
                        .job(sweepRunnerJob().withNewStatus().withFailed(1).endStatus().build())
                        .build();
        assertThat(guards.runnerFailure(counted)).isTrue();
        assertThat(decided(counted).getMessage())
                .isEqualTo(
                        "runner Job sweep-runner failed (1 pod(s) failed); results of finished"
                                + " stages are kept");

        RunTurn byCondition =
                Turns.sweep()
                        .job(
                                sweepRunnerJob()
                                        .withNewStatus()
                                        .addNewCondition()
                                        .withType("Failed")
                                        .withStatus("True")
                                        .endCondition()
                                        .endStatus()
                                        .build())
                        .build();
        assertThat(guards.runnerFailure(byCondition)).isTrue();
        assertThat(decided(byCondition).getMessage())
                .isEqualTo("runner Job sweep-runner failed; results of finished stages are kept");

        RunTurn healthy =
                Turns.sweep()
                        .job(sweepRunnerJob().withNewStatus().withActive(2).endStatus().build())
                        .build();
        assertThat(guards.runnerFailure(healthy)).isFalse();
    }

    @Test
    void theTimeoutCountsFromTheFirstStagesStart() {
        String spec =
                """
                target: {service: {name: vllm, port: 8000}}
                load: {requestRates: [5], numPrompts: 20}
                timeout: 10m
                """;
        BenchmarkRunStatus running = new BenchmarkRunStatus();
        running.setPhase(Phase.RUNNING);
        running.setStartTime(StatusAggregator.format(NOW.minusSeconds(600)));

        RunTurn inTime = Turns.run(spec).status(running).build();
        assertThat(guards.deadlineExceeded(inTime)).isFalse();

        RunTurn late = Turns.run(spec).status(running).at(NOW.plusSeconds(1)).build();
        assertThat(guards.deadlineExceeded(late)).isTrue();
        BenchmarkRunStatus status = decided(late);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("DeadlineExceeded");
        assertThat(status.getMessage())
                .isEqualTo("spec.timeout 10m exceeded; results of finished stages are kept");

        RunTurn noTimeout = Turns.sweep().status(running).at(NOW.plusSeconds(86400)).build();
        assertThat(guards.deadlineExceeded(noTimeout)).isFalse();
    }
}
