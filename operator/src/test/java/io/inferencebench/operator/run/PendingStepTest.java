package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.after;
import static io.inferencebench.operator.run.Turns.condition;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.RunAdmission;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.TargetProbe;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Pending: references, target, readiness timeout and the queue, at a fixed instant. */
class PendingStepTest {

    private final FakeCluster cluster = new FakeCluster();

    private PendingStep step(int maxActiveRuns) {
        return new PendingStep(cluster, new RunQueue(new RunAdmission(maxActiveRuns), cluster));
    }

    @Test
    void aMissingReferenceKeepsTheRunPendingNamesItAndWarnsOnce() {
        cluster.missing = List.of("spec.target.apiKeySecretRef: Secret hf not found");
        RunTurn turn = Turns.sweep().build();

        assertThat(step(0).step(turn)).isEqualTo(Requeue.MISSING_REFERENCE);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(status.getMessage())
                .isEqualTo("spec.target.apiKeySecretRef: Secret hf not found");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getStatus()).isEqualTo("False");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getReason())
                .isEqualTo("MissingReference");
        assertThat(cluster.events("MissingReference"))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EventRecorder.WARNING));

        // The next reconcile finds the same reference missing: no second Warning.
        RunTurn again = Turns.sweep().status(status).at(NOW.plusSeconds(5)).build();
        step(0).step(again);
        assertThat(cluster.events("MissingReference")).hasSize(1);
    }

    @Test
    void aReferenceStillMissingAfterTheReadinessTimeoutFailsTheRun() {
        cluster.missing = List.of("spec.runner.serviceAccountName: ServiceAccount x not found");
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}, readinessTimeout: 30s}
                                load: {requestRates: [1], numPrompts: 5}
                                """)
                        .createdAt(NOW.minusSeconds(31))
                        .build();

        assertThat(step(0).step(turn)).isNull();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("MissingReference");
        assertThat(status.getCompletionTime()).isEqualTo(StatusAggregator.format(NOW));
    }

    @Test
    void aTargetThatIsNotReadyKeepsTheRunWaitingWithTheProbesReason() {
        cluster.probe =
                new TargetProbe.Result(
                        false, "NoReadyEndpoints", "Service vllm has no ready endpoints");
        RunTurn turn = Turns.sweep().build();

        assertThat(step(0).step(turn)).isEqualTo(Requeue.TARGET_NOT_READY);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(status.getMessage())
                .isEqualTo("waiting for target: Service vllm has no ready endpoints");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getReason())
                .isEqualTo("NoReadyEndpoints");
        assertThat(cluster.events("NoReadyEndpoints")).hasSize(1);
        assertThat(status.condition(ConditionTypes.RUNNERS_READY)).isEmpty();
    }

    @Test
    void aTargetNotReadyAfterTheReadinessTimeoutFailsTheRunNamingTheTimeout() {
        cluster.probe =
                new TargetProbe.Result(
                        false, "NoReadyEndpoints", "Service vllm has no ready endpoints");
        RunTurn turn =
                Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}, readinessTimeout: 1s}
                                load: {requestRates: [1], numPrompts: 5}
                                """)
                        .createdAt(NOW.minusSeconds(2))
                        .build();

        assertThat(step(0).step(turn)).isNull();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.FAILED);
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason())
                .isEqualTo("TargetNotReady");
        assertThat(status.getMessage())
                .isEqualTo(
                        "Service vllm has no ready endpoints after"
                                + " spec.target.readinessTimeout 1s");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getStatus()).isEqualTo("False");
    }

    @Test
    void aReadyTargetStartsInitializingWithTheEnvironmentAndTheStageColumns() {
        EnvironmentStatus environment = new EnvironmentStatus();
        environment.setServerVersion("0.11.0");
        cluster.environment = environment;
        RunTurn turn = Turns.sweep().build();

        assertThat(step(0).step(turn)).isEqualTo(Requeue.RUNNERS_STARTING);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.INITIALIZING);
        assertThat(status.getMessage()).isEqualTo("starting runner pods");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getStatus()).isEqualTo("True");
        assertThat(condition(status, ConditionTypes.TARGET_READY).getReason())
                .isEqualTo("EndpointsReady");
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getReason())
                .isEqualTo("Starting");
        assertThat(condition(status, ConditionTypes.RUNNERS_READY).getMessage())
                .isEqualTo("waiting for 2 runner pod(s)");
        assertThat(condition(status, ConditionTypes.COMPLETED).getStatus()).isEqualTo("False");
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason()).isEqualTo("InProgress");
        assertThat(status.getEnvironment().getServerVersion()).isEqualTo("0.11.0");
        assertThat(status.getModel()).isEqualTo("google/gemma-7b");
        assertThat(status.getStage()).isEqualTo("0/2");
        assertThat(status.getProgress().getDone()).isEqualTo("0/200");
        // no cap: nothing about a queue
        assertThat(status.condition(ConditionTypes.QUEUED)).isEmpty();
        assertThat(cluster.events).isEmpty();
    }

    @Test
    void underACapARunWaitsInTheQueueAndIsAdmittedWhenTheSlotIsFree() {
        BenchmarkRun holder = active("holder", Phase.RUNNING);
        RunTurn turn = Turns.sweep().cached(holder).build();

        assertThat(step(1).step(turn)).isEqualTo(Requeue.QUEUED);

        BenchmarkRunStatus queued = decided(turn);
        assertThat(queued.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(condition(queued, ConditionTypes.QUEUED).getStatus()).isEqualTo("True");
        assertThat(condition(queued, ConditionTypes.QUEUED).getReason()).isEqualTo("Queued");
        assertThat(queued.getMessage())
                .isEqualTo(
                        "queued: 1 of 1 active runs (INFERENCEBENCH_MAX_ACTIVE_RUNS=1);"
                                + " position 1 of 1");
        assertThat(condition(queued, ConditionTypes.TARGET_READY).getStatus()).isEqualTo("True");
        assertThat(cluster.events("Queued"))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EventRecorder.NORMAL));

        PendingStep pending = step(1);
        RunTurn still = Turns.sweep().status(after(turn)).cached(holder).build();
        assertThat(pending.step(still)).isEqualTo(Requeue.QUEUED);
        assertThat(cluster.events("Queued")).as("one Event while it waits").hasSize(1);

        RunTurn freed =
                Turns.sweep().status(after(turn)).cached(active("holder", Phase.SUCCEEDED)).build();
        assertThat(pending.step(freed)).isEqualTo(Requeue.RUNNERS_STARTING);
        BenchmarkRunStatus admitted = decided(freed);
        assertThat(admitted.getPhase()).isEqualTo(Phase.INITIALIZING);
        assertThat(condition(admitted, ConditionTypes.QUEUED).getStatus()).isEqualTo("False");
        assertThat(condition(admitted, ConditionTypes.QUEUED).getReason()).isEqualTo("Admitted");
        assertThat(condition(admitted, ConditionTypes.QUEUED).getMessage())
                .isEqualTo(
                        "admitted as active run 1 of at most 1"
                                + " (INFERENCEBENCH_MAX_ACTIVE_RUNS=1)");
    }

    @Test
    void aQueuedRunWhoseTargetStopsBeingReadyLeavesTheQueue() {
        RunTurn turn = Turns.sweep().cached(active("holder", Phase.RUNNING)).build();
        PendingStep pending = step(1);
        pending.step(turn);
        cluster.probe =
                new TargetProbe.Result(
                        false, "NoReadyEndpoints", "Service vllm has no ready endpoints");

        RunTurn unready =
                Turns.sweep()
                        .status(after(turn))
                        .cached(active("holder", Phase.RUNNING))
                        .at(NOW.plusSeconds(3))
                        .build();
        assertThat(pending.step(unready)).isEqualTo(Requeue.TARGET_NOT_READY);

        BenchmarkRunStatus status = decided(unready);
        assertThat(condition(status, ConditionTypes.QUEUED).getStatus()).isEqualTo("False");
        assertThat(condition(status, ConditionTypes.QUEUED).getReason())
                .isEqualTo("TargetNotReady");
        assertThat(condition(status, ConditionTypes.QUEUED).getMessage())
                .isEqualTo(
                        "left the queue until the target is ready again: Service vllm has no"
                                + " ready endpoints");
    }

    @Test
    void timeInTheQueueDoesNotCountAgainstTheReadinessTimeout() {
        // Created long ago and queued ever since; the target stopped being ready 20 s ago.
        BenchmarkRunStatus queued = new BenchmarkRunStatus();
        queued.setPhase(Phase.PENDING);
        queued.setConditions(
                new java.util.ArrayList<>(
                        List.of(
                                since(ConditionTypes.QUEUED, "False", NOW.minusSeconds(20)),
                                since(
                                        ConditionTypes.TARGET_READY,
                                        "False",
                                        NOW.minusSeconds(20)))));
        cluster.probe =
                new TargetProbe.Result(
                        false, "NoReadyEndpoints", "Service vllm has no ready endpoints");
        String spec =
                """
                target: {service: {name: vllm, port: 8000}, readinessTimeout: 30s}
                load: {requestRates: [1], numPrompts: 5}
                """;

        RunTurn turn = Turns.run(spec).status(queued).createdAt(NOW.minusSeconds(3600)).build();
        assertThat(step(1).step(turn)).isEqualTo(Requeue.TARGET_NOT_READY);
        assertThat(decided(turn).getPhase()).isEqualTo(Phase.PENDING);

        RunTurn late =
                Turns.run(spec)
                        .status(queued)
                        .createdAt(NOW.minusSeconds(3600))
                        .at(NOW.plusSeconds(11))
                        .build();
        assertThat(step(1).step(late)).isNull();
        assertThat(decided(late).getPhase()).isEqualTo(Phase.FAILED);
    }

    @Test
    void theWaitForTheTargetStartsAtCreationForARunThatWasNeverQueued() {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setConditions(
                new java.util.ArrayList<>(
                        List.of(since(ConditionTypes.TARGET_READY, "True", NOW.minusSeconds(1)))));
        BenchmarkRun run = Turns.sweep().status(status).createdAt(NOW.minusSeconds(100)).theRun();
        assertThat(PendingStep.targetWaitStart(run, new StatusAggregator(status, 1, NOW), NOW))
                .isEqualTo(NOW.minusSeconds(100));
    }

    private static io.fabric8.kubernetes.api.model.Condition since(
            String type, String status, java.time.Instant since) {
        return new ConditionBuilder()
                .withType(type)
                .withStatus(status)
                .withReason("Test")
                .withMessage("")
                .withLastTransitionTime(StatusAggregator.format(since))
                .build();
    }

    /** Another run in the cache, past admission in {@code phase}, created before this one. */
    private static BenchmarkRun active(String name, Phase phase) {
        BenchmarkRun other = Turns.sweep().createdAt(NOW.minusSeconds(7200)).theRun();
        other.getMetadata().setName(name);
        other.getMetadata().setUid("uid-" + name);
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(phase);
        other.setStatus(status);
        return other;
    }
}
