package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.condition;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.ProfileAssembly;
import io.inferencebench.operator.RunAdmission;
import io.inferencebench.operator.RunParts;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.baseline.BaselineProfiles;
import io.inferencebench.profile.lpg.StageResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A run that ended: expiry, the baseline comparison, the queue and scraping let go. */
class FinishedStepTest {

    private static final String WITH_BASELINE =
            """
            target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
            load: {requestRates: [5], numPrompts: 40}
            baseline: {runName: base}
            """;

    private final FakeCluster cluster = new FakeCluster();
    private final RecordedWindows windows = new RecordedWindows();
    private final FinishedStep step =
            new FinishedStep(cluster, windows, new RunQueue(new RunAdmission(1), cluster));

    private static BenchmarkRunStatus ended(Phase phase, int secondsAgo) {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(phase);
        status.setCompletionTime(StatusAggregator.format(NOW.minusSeconds(secondsAgo)));
        return status;
    }

    private static String ttl(int seconds) {
        return """
                target: {service: {name: vllm, port: 8000}}
                load: {requestRates: [1], numPrompts: 5}
                ttlSecondsAfterFinished: %d
                """
                .formatted(seconds);
    }

    @Test
    void aRunWithoutTtlIsKept() {
        RunTurn turn = Turns.sweep().status(ended(Phase.SUCCEEDED, 86_400)).build();
        assertThat(step.step(turn)).isNull();
        assertThat(cluster.deletes).isZero();
    }

    @Test
    void aRunIsLookedAtAgainJustAfterItExpiresAndThenDeleted() {
        RunTurn early = Turns.run(ttl(5)).status(ended(Phase.FAILED, 1)).build();
        assertThat(step.step(early)).isEqualTo(Duration.ofSeconds(4).plus(Requeue.AFTER_EXPIRY));
        assertThat(cluster.deletes).isZero();

        RunTurn expired = Turns.run(ttl(5)).status(ended(Phase.FAILED, 5)).build();
        assertThat(step.step(expired)).isSameAs(Requeue.DELETED);
        assertThat(cluster.deletes).isEqualTo(1);
    }

    @Test
    void theReconcileARunEndsInStopsScrapingAndComesBackAtItsExpiry() {
        BenchmarkRunStatus running = new BenchmarkRunStatus();
        running.setPhase(Phase.RUNNING);
        RunTurn turn = Turns.run(ttl(2)).status(running).build();
        turn.finish(Phase.FAILED, "RunnerFailed", "runner pod 0 failed: x");

        assertThat(step.ended(turn, Phase.RUNNING, null))
                .isEqualTo(Duration.ofSeconds(2).plus(Requeue.AFTER_EXPIRY));
        assertThat(windows.forgotten).containsExactly(true);

        // a later reconcile of the ended run: no new requeue from the transition
        RunTurn later = Turns.run(ttl(2)).status(ended(Phase.FAILED, 1)).build();
        assertThat(step.ended(later, Phase.FAILED, null)).isNull();
        assertThat(windows.forgotten).containsExactly(true, false);
        // the step's own requeue is kept
        assertThat(step.ended(later, Phase.FAILED, Duration.ofSeconds(1)))
                .isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aQueuedRunThatEndsWasNotAdmitted() {
        BenchmarkRunStatus queued = new BenchmarkRunStatus();
        queued.setPhase(Phase.PENDING);
        queued.setConditions(
                new ArrayList<>(
                        List.of(
                                new ConditionBuilder()
                                        .withType(ConditionTypes.QUEUED)
                                        .withStatus("True")
                                        .withReason("Queued")
                                        .withLastTransitionTime(StatusAggregator.format(NOW))
                                        .build())));
        RunTurn turn = Turns.sweep().status(queued).build();
        turn.finish(Phase.CANCELLED, "Cancelled", "cancelled by spec.cancel");

        step.ended(turn, Phase.PENDING, null);

        var condition = condition(decided(turn), ConditionTypes.QUEUED);
        assertThat(condition.getStatus()).isEqualTo("False");
        assertThat(condition.getReason()).isEqualTo("NotAdmitted");
        assertThat(condition.getMessage())
                .isEqualTo("the run ended (Cancelled) before it was let through");
    }

    @Test
    void aRunThatDidNotSucceedIsNotComparedWithItsBaseline() {
        RunTurn turn = Turns.run(WITH_BASELINE).status(ended(Phase.FAILED, 0)).build();

        assertThat(step.ended(turn, Phase.RUNNING, null)).isNull();

        var regressed = condition(decided(turn), ConditionTypes.REGRESSED);
        assertThat(regressed.getStatus()).isEqualTo("Unknown");
        assertThat(regressed.getReason()).isEqualTo(FinishedStep.NOT_COMPARED);
        assertThat(regressed.getMessage())
                .isEqualTo(
                        "the run did not succeed (Failed); it is not compared with its baseline");
        assertThat(cluster.baselineReads).isZero();
    }

    @Test
    void aMissingBaselineIsAConditionAWarningOnceAndALaterLook() {
        cluster.baseline =
                new BaselineProfiles.Result(
                        "run/base",
                        null,
                        BaselineProfiles.NOT_FOUND,
                        "spec.baseline.runName: BenchmarkRun base not found in namespace bench");
        RunTurn turn = Turns.run(WITH_BASELINE).status(succeeded(profile(1.0))).build();

        assertThat(step.ended(turn, Phase.AGGREGATING, null)).isEqualTo(Requeue.BASELINE_RETRY);

        var regressed = condition(decided(turn), ConditionTypes.REGRESSED);
        assertThat(regressed.getStatus()).isEqualTo("Unknown");
        assertThat(regressed.getReason()).isEqualTo(BaselineProfiles.NOT_FOUND);
        assertThat(cluster.events(BaselineProfiles.NOT_FOUND))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EventRecorder.WARNING));

        RunTurn again = Turns.run(WITH_BASELINE).status(Turns.after(turn)).build();
        assertThat(step.ended(again, Phase.SUCCEEDED, null)).isEqualTo(Requeue.BASELINE_RETRY);
        assertThat(cluster.baselineReads).as("looked at again").isEqualTo(2);
        assertThat(cluster.events(BaselineProfiles.NOT_FOUND)).as("no second Warning").hasSize(1);
    }

    @Test
    void aBaselineThatCannotBeReadIsNotLookedAtAgain() {
        cluster.baseline =
                new BaselineProfiles.Result(
                        "configmap/x", null, BaselineProfiles.INVALID, "not an LPG profile");
        RunTurn turn = Turns.run(WITH_BASELINE).status(succeeded(profile(1.0))).build();
        assertThat(step.ended(turn, Phase.AGGREGATING, null)).isNull();
        assertThat(condition(decided(turn), ConditionTypes.REGRESSED).getReason())
                .isEqualTo(BaselineProfiles.INVALID);
    }

    @Test
    void theSameLatenciesDoNotRegressAndSlowerOnesDo() {
        cluster.baseline =
                new BaselineProfiles.Result("run/base", List.of(profile(1.0)), null, null);

        RunTurn same = Turns.run(WITH_BASELINE).status(succeeded(profile(1.0))).build();
        assertThat(step.ended(same, Phase.AGGREGATING, null)).isNull();
        BenchmarkRunStatus status = decided(same);
        assertThat(condition(status, ConditionTypes.REGRESSED).getStatus()).isEqualTo("False");
        assertThat(condition(status, ConditionTypes.REGRESSED).getMessage())
                .startsWith("no regression against run/base");
        assertThat(status.getComparison().getVerdict())
                .isEqualTo(RunComparison.NO_SIGNIFICANT_CHANGE);
        assertThat(cluster.events("Compared"))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EventRecorder.NORMAL));

        RunTurn slower = Turns.run(WITH_BASELINE).status(succeeded(profile(1.5))).build();
        step.ended(slower, Phase.AGGREGATING, null);
        status = decided(slower);
        var regressed = condition(status, ConditionTypes.REGRESSED);
        assertThat(regressed.getStatus()).isEqualTo("True");
        assertThat(regressed.getReason()).isEqualTo(RunComparison.REGRESSION);
        assertThat(regressed.getMessage())
                .startsWith("regressed against run/base; worst: stage 1 ")
                .contains(status.getComparison().getWorstMetric());
        assertThat(cluster.events("Regressed"))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EventRecorder.WARNING));

        // decided once: later reconciles do not read the baseline again
        int reads = cluster.baselineReads;
        RunTurn later = Turns.run(WITH_BASELINE).status(Turns.after(slower)).build();
        step.ended(later, Phase.SUCCEEDED, null);
        assertThat(cluster.baselineReads).isEqualTo(reads);
    }

    @Test
    void repeatsWhoseNoiseCouldHideAChangeLeaveRegressedUnknownAndSaySo() {
        // three repeats a side wandering by about 5 %: no change can be told below that
        cluster.baseline =
                new BaselineProfiles.Result(
                        "run/base",
                        List.of(profile(1.00, 1), profile(1.06, 2), profile(0.95, 3)),
                        null,
                        null);
        RunTurn turn =
                Turns.run(WITH_BASELINE)
                        .status(succeeded(profile(1.01, 1), profile(0.97, 2), profile(1.05, 3)))
                        .build();
        step.ended(turn, Phase.AGGREGATING, null);
        BenchmarkRunStatus status = decided(turn);
        var regressed = condition(status, ConditionTypes.REGRESSED);
        assertThat(regressed.getStatus()).isEqualTo("Unknown");
        assertThat(regressed.getReason()).isEqualTo(RunComparison.INCONCLUSIVE);
        assertThat(regressed.getMessage()).startsWith("inconclusive against run/base");
        assertThat(status.getComparison().getVerdict()).isEqualTo(RunComparison.INCONCLUSIVE);
        assertThat(status.getComparison().getNotes())
                .anySatisfy(n -> assertThat(n).startsWith("inconclusive: stage 1 "));
        assertThat(cluster.events("Compared")).singleElement();
        // decided: a later reconcile does not compare again
        int reads = cluster.baselineReads;
        step.ended(
                Turns.run(WITH_BASELINE).status(Turns.after(turn)).build(), Phase.SUCCEEDED, null);
        assertThat(cluster.baselineReads).isEqualTo(reads);
    }

    @Test
    void aBaselineThatIsNoProfileIsAnInvalidBaseline() {
        JsonNode notAProfile = new ObjectMapper().createObjectNode().put("hello", "world");
        cluster.baseline =
                new BaselineProfiles.Result("run/base", List.of(notAProfile), null, null);
        RunTurn turn = Turns.run(WITH_BASELINE).status(succeeded(profile(1.0))).build();

        assertThat(step.ended(turn, Phase.AGGREGATING, null)).isNull();

        var regressed = condition(decided(turn), ConditionTypes.REGRESSED);
        assertThat(regressed.getStatus()).isEqualTo("Unknown");
        assertThat(regressed.getReason()).isEqualTo(BaselineProfiles.INVALID);
        assertThat(regressed.getMessage()).startsWith("cannot compare with run/base: ");
        assertThat(cluster.events(BaselineProfiles.INVALID)).hasSize(1);
    }

    private static BenchmarkRunStatus succeeded(JsonNode... profiles) {
        BenchmarkRunStatus status = ended(Phase.SUCCEEDED, 0);
        status.setProfiles(new ArrayList<>(List.of(profiles)));
        return status;
    }

    /** The profile of one 5 req/s stage of 40 requests, its latencies times {@code slowdown}. */
    private static JsonNode profile(double slowdown) {
        return profile(slowdown, 1);
    }

    /** The same as stage {@code stage} (1-based) of its run, e.g. one repeat of a 5 req/s stage. */
    private static JsonNode profile(double slowdown, int stage) {
        StageResult result =
                RunParts.slowedStage(RunParts.epochNanos(NOW.minusSeconds(60)), slowdown);
        result.stageIndex = stage - 1;
        BenchmarkRun run = Turns.run(WITH_BASELINE).theRun();
        return ProfileAssembly.assemble(
                        run,
                        stage,
                        List.of(result),
                        "google/gemma-7b",
                        new HashSet<>(),
                        NOW.minusSeconds(60),
                        null)
                .profile();
    }
}
