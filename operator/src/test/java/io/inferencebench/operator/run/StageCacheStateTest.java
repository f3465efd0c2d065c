package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.SweepStages.firstStageFinished;
import static io.inferencebench.operator.run.SweepStages.running;
import static io.inferencebench.operator.run.Turns.CLOCK;
import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.dependent.ControlConfigMapDependent;
import io.inferencebench.profile.cache.CacheStateCheck;
import io.inferencebench.profile.cache.PrefixCacheReset;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code spec.workload.prefixCache: {state: cold}}: every ready endpoint is reset just before each
 * stage's barrier, first and later, and each stage's result and profile say the state it started
 * from; a stage whose endpoints were not all reset says undeclared and names them.
 */
class StageCacheStateTest {

    private static final Instant STAGE_ONE = NOW.minusSeconds(30);

    private final FakeCluster cluster = new FakeCluster();
    private final RecordedWindows windows = new RecordedWindows();
    private final RunningStep running =
            new RunningStep(
                    cluster,
                    windows,
                    new RunGuards(cluster),
                    new StageAssembly(cluster, windows, CLOCK),
                    new SearchStep(),
                    CLOCK);

    private static Turns coldSweep() {
        return Turns.run(
                """
                target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                workload: {prefixCache: {state: cold}}
                load: {requestRates: [5, 10], numPrompts: 100, cooldown: 0s}
                runner: {parallelism: 2}
                """);
    }

    private static BenchmarkRunStatus runningWith(List<String> cacheStates, Instant... starts) {
        BenchmarkRunStatus status = running(starts);
        status.setStagePrefixCache(cacheStates);
        return status;
    }

    @Test
    void theFirstBarrierIsSetOnlyAfterEveryEndpointWasReset() {
        InitializingStep step =
                new InitializingStep(
                        cluster, windows, new RunGuards(cluster), new SearchStep(), CLOCK);
        Map<String, String> ready =
                Map.of(PartReport.STATE, PartReport.STATE_READY, PartReport.RUN_UID, Turns.UID);
        RunTurn turn = coldSweep().part(0, ready).part(1, ready).build();

        step.step(turn);

        assertThat(cluster.cacheResetCalls).isEqualTo(1);
        assertThat(decided(turn).getStagePrefixCache()).containsExactly("cold");
    }

    @Test
    void aFinishedStageCarriesItsStateAndTheNextStageIsResetBeforeItsBarrier() {
        RunTurn turn = firstStageFinished(coldSweep(), runningWith(List.of("cold"), STAGE_ONE));

        running.step(turn);

        BenchmarkRunStatus status = decided(turn);
        StageSummary first = status.getResults().getFirst();
        assertThat(first.getPrefixCacheState()).isEqualTo("cold");
        assertThat(first.getPrefixCacheMessage()).isNull();
        assertThat(status.getProfiles().getFirst().at("/dimensions/prefix_cache").asText())
                .isEqualTo("cold");
        assertThat(cluster.cacheResetCalls).isEqualTo(1);
        assertThat(status.getStagePrefixCache()).containsExactly("cold", "cold");
        assertThat(status.getStageStartTimes()).hasSize(2);
    }

    @Test
    void anEndpointThatRefusesMakesTheStageUndeclaredNamingIt() {
        cluster.cacheResets =
                new PrefixCacheReset.Round(
                        List.of(
                                new PrefixCacheReset.Outcome(
                                        "http://10.0.0.1:8000", "/reset_prefix_cache", null),
                                new PrefixCacheReset.Outcome(
                                        "http://10.0.0.2:8000",
                                        null,
                                        "POST /reset_prefix_cache answered HTTP 404")));
        RunTurn turn = firstStageFinished(coldSweep(), runningWith(List.of("cold"), STAGE_ONE));

        running.step(turn);

        BenchmarkRunStatus status = decided(turn);
        String refused = "http://10.0.0.2:8000: POST /reset_prefix_cache answered HTTP 404";
        assertThat(status.getStagePrefixCache()).containsExactly("cold", "undeclared: " + refused);
        assertThat(cluster.events(StageCacheState.NOT_RESET))
                .singleElement()
                .satisfies(
                        e -> {
                            assertThat(e.type()).isEqualTo(EventRecorder.WARNING);
                            assertThat(e.message())
                                    .isEqualTo("stage 2: prefix cache not reset: " + refused);
                        });

        // When stage 2 is assembled, its result and profile say so.
        Instant stageTwo = NOW.minusSeconds(10);
        RunTurn second =
                coldSweep()
                        .status(
                                runningWith(
                                        List.of("cold", "undeclared: " + refused),
                                        STAGE_ONE,
                                        stageTwo))
                        .part(0, SweepStages.bothDone(0))
                        .part(1, SweepStages.bothDone(1))
                        .build();
        running.step(second);
        StageSummary two =
                decided(second).getResults().stream()
                        .filter(r -> r.getStage() == 2)
                        .findFirst()
                        .orElseThrow();
        assertThat(two.getPrefixCacheState()).isEqualTo("undeclared");
        assertThat(two.getPrefixCacheMessage()).isEqualTo(refused);
    }

    @Test
    void withoutADeclaredStateNothingIsResetAndNothingIsSaid() {
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));

        running.step(turn);

        BenchmarkRunStatus status = decided(turn);
        assertThat(cluster.cacheResetCalls).isZero();
        assertThat(status.getStagePrefixCache()).isNull();
        assertThat(status.getResults().getFirst().getPrefixCacheState()).isNull();
        assertThat(status.getProfiles().getFirst().at("/dimensions/prefix_cache").isMissingNode())
                .isTrue();
    }

    @Test
    void onlyRandomPromptsWithoutConversationsImplyNoHitsOnAColdCache() {
        assertThat(StageCacheState.implied(coldSweep().build().run()))
                .isEqualTo(CacheStateCheck.COLD_REUSE_FREE);
        RunTurn conversation =
                Turns.run(
                                """
                                target:
                                  service: {name: vllm, port: 8000}
                                  model: google/gemma-7b
                                  api: chat
                                workload:
                                  prefixCache: {state: cold}
                                  dataset: {type: random, conversation: {turns: 3}}
                                load:
                                  stages: [{concurrency: 2, numPrompts: 12}]
                                  cooldown: 0s
                                """)
                        .build();
        assertThat(StageCacheState.implied(conversation.run())).isNull();
        assertThat(StageCacheState.implied(warmSweep().build().run()))
                .isEqualTo(CacheStateCheck.warmImplied(100, 20));
    }

    private static Turns warmSweep() {
        return Turns.run(
                """
                target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                workload:
                  prefixCache: {state: warm}
                  dataset:
                    type: prefix_repetition
                    prefixRepetition: {prefixTokens: 100, suffixTokens: 20, prefixes: 4}
                load: {requestRates: [5, 10], numPrompts: 100, cooldown: 0s}
                runner: {parallelism: 2}
                """);
    }

    private static final PrefixCacheReset.Round TWO_RESET =
            new PrefixCacheReset.Round(
                    List.of(
                            new PrefixCacheReset.Outcome(
                                    "http://10.0.0.1:8000", "/reset_prefix_cache", null),
                            new PrefixCacheReset.Outcome(
                                    "http://10.0.0.2:8000", "/reset_prefix_cache", null)));

    @Test
    void aWarmStageNamesTheEndpointsResetForTheFirstRunnerToWarmWithTimeForIt() {
        cluster.cacheResets = TWO_RESET;
        InitializingStep step =
                new InitializingStep(
                        cluster, windows, new RunGuards(cluster), new SearchStep(), CLOCK);
        Map<String, String> ready =
                Map.of(PartReport.STATE, PartReport.STATE_READY, PartReport.RUN_UID, Turns.UID);
        RunTurn turn = warmSweep().part(0, ready).part(1, ready).build();

        step.step(turn);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getStagePrefixCache()).containsExactly("warm");
        assertThat(status.getStageWarmTargets())
                .containsExactly("http://10.0.0.1:8000,http://10.0.0.2:8000");
        assertThat(Instant.parse(status.getStageStartTimes().getFirst()))
                .isEqualTo(
                        NOW.plus(InitializingStep.FIRST_BARRIER_LEAD)
                                .plus(StageCacheState.WARMING_LEAD));
        // Published with the barrier, where the runners read it.
        BenchmarkRun published = turn.run();
        published.setStatus(status);
        assertThat(ControlConfigMapDependent.desired(published).getData())
                .containsEntry(
                        RunnerWorkOrder.stageWarmKey(1),
                        "http://10.0.0.1:8000,http://10.0.0.2:8000")
                .containsKey(RunnerWorkOrder.stageStartKey(1));

        // A cold run's barrier has no such lead and no such key.
        BenchmarkRunStatus cold = decided(runningStep(coldSweep(), ready));
        assertThat(cold.getStageWarmTargets()).isNull();
        assertThat(Instant.parse(cold.getStageStartTimes().getFirst()))
                .isEqualTo(NOW.plus(InitializingStep.FIRST_BARRIER_LEAD));
    }

    @Test
    void aWarmStateWithoutTheResetWarmsEveryReadyEndpointAndEmptiesNone() {
        cluster.cacheResets = TWO_RESET;
        Map<String, String> ready =
                Map.of(PartReport.STATE, PartReport.STATE_READY, PartReport.RUN_UID, Turns.UID);
        RunTurn turn =
                runningStep(
                        Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                                workload:
                                  prefixCache: {state: warm, reset: false}
                                  dataset: {type: prefix_repetition}
                                load: {requestRates: [5, 10], numPrompts: 100, cooldown: 0s}
                                runner: {parallelism: 2}
                                """),
                        ready);

        BenchmarkRunStatus status = decided(turn);
        assertThat(cluster.cacheResetCalls).isZero();
        assertThat(cluster.cacheEndpointCalls).isEqualTo(1);
        assertThat(status.getStagePrefixCache()).containsExactly("warm");
        assertThat(status.getStageWarmTargets())
                .containsExactly("http://10.0.0.1:8000,http://10.0.0.2:8000");
    }

    private RunTurn runningStep(Turns turns, Map<String, String> ready) {
        RunTurn turn = turns.part(0, ready).part(1, ready).build();
        new InitializingStep(cluster, windows, new RunGuards(cluster), new SearchStep(), CLOCK)
                .step(turn);
        return turn;
    }

    /** Stage 1 of the warm sweep finished, the first runner having said {@code warmed}. */
    private StageSummary warmStageOne(String warmed) {
        Map<String, String> first = new java.util.LinkedHashMap<>(SweepStages.stageDone(1, 0, 2.5));
        if (warmed != null) {
            first.put(PartReport.stageWarmedKey(1), warmed);
        }
        RunTurn turn =
                warmSweep()
                        .status(runningWith(List.of("warm"), STAGE_ONE))
                        .part(0, first)
                        .part(1, SweepStages.stageDone(1, 1, 2.5))
                        .build();
        running.step(turn);
        return decided(turn).getResults().getFirst();
    }

    @Test
    void aStageTheFirstRunnerWarmedStartedWarmAndCarriesTheImpliedRate() {
        StageSummary first = warmStageOne(PartReport.WARMED);
        assertThat(first.getPrefixCacheState()).isEqualTo("warm");
        assertThat(first.getPrefixCacheMessage()).isNull();
        assertThat(first.getPrefixCacheImpliedHitRate()).isEqualTo(100 / 120.0);
    }

    @Test
    void aStageNotWarmedInTimeStartedUndeclaredSayingWhy() {
        String late =
                "the warming of 2 endpoint(s) with 4 prefixes took 10400 ms and ended 400 ms"
                        + " after the stage's barrier";
        StageSummary first = warmStageOne(late);
        assertThat(first.getPrefixCacheState()).isEqualTo("undeclared");
        assertThat(first.getPrefixCacheVerified()).isFalse();
        assertThat(first.getPrefixCacheMessage()).isEqualTo("not warmed: " + late);
        assertThat(io.inferencebench.operator.CacheStateCondition.of(List.of(first)).reason())
                .isEqualTo("NotWarmed");

        StageSummary unreported = warmStageOne(null);
        assertThat(unreported.getPrefixCacheState()).isEqualTo("undeclared");
        assertThat(unreported.getPrefixCacheMessage())
                .isEqualTo("not warmed: the first runner reported no warming before the stage");
    }
}
