package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.CLOCK;
import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.condition;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.metrics.ServerMetricsCondition;
import io.inferencebench.profile.lpg.LoadVerdict;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Aggregating: the run's verdicts from its stages, then Succeeded. */
class AggregatingStepTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final FakeCluster cluster = new FakeCluster();
    private final AggregatingStep step =
            new AggregatingStep(new StageAssembly(cluster, new RecordedWindows(), CLOCK));

    private static StageSummary stage(int n, Boolean delivered, String reason, String message) {
        StageSummary r = new StageSummary();
        r.setStage(n);
        r.setProfileKey("p" + n + ".json");
        r.setLoadDelivered(delivered);
        r.setLoadDeliveredReason(reason);
        r.setLoadDeliveredMessage(message);
        return r;
    }

    /** Aggregating with these stages, each with a profile without server metrics. */
    private static BenchmarkRunStatus aggregating(StageSummary... stages) {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(Phase.AGGREGATING);
        status.setResults(new ArrayList<>(List.of(stages)));
        List<com.fasterxml.jackson.databind.JsonNode> profiles = new ArrayList<>();
        for (StageSummary ignored : stages) {
            profiles.add(JSON.createObjectNode().set("metrics", JSON.createObjectNode()));
        }
        status.setProfiles(profiles);
        status.setProfileConfigMaps(List.of("sweep-profile"));
        return status;
    }

    @Test
    void everyStageDeliveredSucceedsAndNamesTheProfilesConfigMap() {
        RunTurn turn =
                Turns.sweep()
                        .status(
                                aggregating(
                                        stage(1, true, LoadVerdict.DELIVERED, null),
                                        stage(2, true, LoadVerdict.DELIVERED, null)))
                        .build();

        assertThat(step.step(turn)).isNull();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.SUCCEEDED);
        assertThat(status.getMessage())
                .isEqualTo("2 stage profile(s) written to ConfigMap sweep-profile");
        assertThat(condition(status, ConditionTypes.COMPLETED).getReason()).isEqualTo("Succeeded");
        assertThat(status.getCompletionTime()).isEqualTo(StatusAggregator.format(NOW));
        assertThat(condition(status, ConditionTypes.LOAD_DELIVERED).getStatus()).isEqualTo("True");
        assertThat(condition(status, ConditionTypes.LOAD_DELIVERED).getReason())
                .isEqualTo(LoadVerdict.DELIVERED);
        assertThat(condition(status, ConditionTypes.LOAD_DELIVERED).getMessage())
                .isEqualTo("every stage delivered its schedule");
        // scraping on by default, but no stage has server metrics
        assertThat(condition(status, ConditionTypes.SERVER_METRICS_COLLECTED).getStatus())
                .isEqualTo("False");
        assertThat(condition(status, ConditionTypes.SERVER_METRICS_COLLECTED).getReason())
                .isEqualTo(ServerMetricsCondition.SCRAPES_FAILED);
        assertThat(status.condition(ConditionTypes.SLO_MET)).as("no spec.slo").isEmpty();
    }

    @Test
    void unevenReplicaSharesMakeLoadBalancedFalseAndOneReplicaSetsNoCondition() {
        StageSummary even = stage(1, true, LoadVerdict.DELIVERED, null);
        even.setReplicaShares("34/33/33 %");
        even.setLoadBalanced(true);
        StageSummary uneven = stage(2, true, LoadVerdict.DELIVERED, null);
        uneven.setReplicaShares("67/17/17 %");
        uneven.setLoadBalanced(false);
        uneven.setLoadBalancedMessage("replica sim-b served 80, 4.00x replica sim-a's 20");
        RunTurn turn = Turns.sweep().status(aggregating(even, uneven)).build();
        step.step(turn);
        var balanced = condition(decided(turn), ConditionTypes.LOAD_BALANCED);
        assertThat(balanced.getStatus()).isEqualTo("False");
        assertThat(balanced.getReason()).isEqualTo("Uneven");
        assertThat(balanced.getMessage())
                .startsWith("stage 2 (67/17/17 %): replica sim-b served 80, 4.00x");
        assertThat(decided(turn).getPhase())
                .as("the run still succeeds")
                .isEqualTo(Phase.SUCCEEDED);

        RunTurn single =
                Turns.sweep()
                        .status(aggregating(stage(1, true, LoadVerdict.DELIVERED, null)))
                        .build();
        step.step(single);
        assertThat(decided(single).condition(ConditionTypes.LOAD_BALANCED))
                .as("one replica: nothing to balance")
                .isEmpty();
    }

    @Test
    void aDeclaredCacheStateIsVerifiedOrContradictedAndTheRunStillSucceeds() {
        StageSummary cold = stage(1, true, LoadVerdict.DELIVERED, null);
        cold.setPrefixCacheState("cold");
        cold.setPrefixCacheVerified(true);
        cold.setPrefixCacheHitRateByReplica(java.util.Map.of("sim-a", 0.0));
        StageSummary kept = stage(2, true, LoadVerdict.DELIVERED, null);
        kept.setPrefixCacheState("cold");
        kept.setPrefixCacheVerified(false);
        kept.setPrefixCacheMessage("replica sim-a found 75.0 % of its prompt tokens cached");
        RunTurn turn = Turns.sweep().status(aggregating(cold, kept)).build();
        step.step(turn);
        var verified = condition(decided(turn), ConditionTypes.CACHE_STATE_VERIFIED);
        assertThat(verified.getStatus()).isEqualTo("False");
        assertThat(verified.getReason()).isEqualTo("UnexpectedHits");
        assertThat(verified.getMessage()).startsWith("stage 2: replica sim-a found 75.0 %");
        assertThat(decided(turn).getPhase()).isEqualTo(Phase.SUCCEEDED);

        RunTurn undeclared =
                Turns.sweep()
                        .status(aggregating(stage(1, true, LoadVerdict.DELIVERED, null)))
                        .build();
        step.step(undeclared);
        assertThat(decided(undeclared).condition(ConditionTypes.CACHE_STATE_VERIFIED))
                .as("no declared state: nothing to verify")
                .isEmpty();
    }

    @Test
    void tooManyFailuresInAnyStageIsTheRunsReasonAndEveryUndeliveredStageIsNamed() {
        RunTurn turn =
                Turns.sweep()
                        .status(
                                aggregating(
                                        stage(1, false, "ScheduleLagged", "schedule lag 40 ms"),
                                        stage(
                                                2,
                                                false,
                                                LoadVerdict.TOO_MANY_FAILURES,
                                                "64.3 % of requests failed")))
                        .build();

        step.step(turn);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).as("the run still succeeds").isEqualTo(Phase.SUCCEEDED);
        var delivered = condition(status, ConditionTypes.LOAD_DELIVERED);
        assertThat(delivered.getStatus()).isEqualTo("False");
        assertThat(delivered.getReason()).isEqualTo(LoadVerdict.TOO_MANY_FAILURES);
        assertThat(delivered.getMessage())
                .isEqualTo(
                        "stage 1: schedule lag 40 ms; stage 2: 64.3 % of requests failed; results"
                                + " are not a valid measurement of the requested load");
    }

    @Test
    void otherwiseTheFirstUndeliveredStagesReasonAndAStageTooShortToJudgeIsUnknown() {
        RunTurn first =
                Turns.sweep()
                        .status(
                                aggregating(
                                        stage(1, true, LoadVerdict.DELIVERED, null),
                                        stage(2, false, "RunnerSaturated", "runner 1 ran out")))
                        .build();
        step.step(first);
        assertThat(condition(decided(first), ConditionTypes.LOAD_DELIVERED).getReason())
                .isEqualTo("RunnerSaturated");

        RunTurn unknown =
                Turns.sweep()
                        .status(
                                aggregating(
                                        stage(1, true, LoadVerdict.DELIVERED, null),
                                        stage(
                                                2,
                                                null,
                                                LoadVerdict.SCHEDULE_TOO_SHORT,
                                                "achieved 2000 req/s ...: too short to judge")))
                        .build();
        step.step(unknown);
        var delivered = condition(decided(unknown), ConditionTypes.LOAD_DELIVERED);
        assertThat(delivered.getStatus()).isEqualTo("Unknown");
        assertThat(delivered.getReason()).isEqualTo(LoadVerdict.SCHEDULE_TOO_SHORT);
        assertThat(delivered.getMessage())
                .startsWith("stage 2: achieved 2000 req/s ...: too short to judge;")
                .contains("a longer stage");

        // a stage that failed outweighs one too short to judge
        RunTurn both =
                Turns.sweep()
                        .status(
                                aggregating(
                                        stage(1, null, LoadVerdict.SCHEDULE_TOO_SHORT, "short"),
                                        stage(2, false, null, null)))
                        .build();
        step.step(both);
        var failed = condition(decided(both), ConditionTypes.LOAD_DELIVERED);
        assertThat(failed.getStatus()).isEqualTo("False");
        assertThat(failed.getReason()).isEqualTo(LoadVerdict.RATE_NOT_ACHIEVED);
        assertThat(failed.getMessage()).startsWith("stage 2: load not delivered;");
    }

    @Test
    void withAnSloEveryStageMustMeetItAndTheSloColumnSaysSo() {
        String spec =
                """
                target: {service: {name: vllm, port: 8000}, model: m}
                load: {requestRates: [5, 10], numPrompts: 20}
                slo: {ttft: 500ms}
                metrics: {enabled: false}
                """;
        StageSummary met = stage(1, true, LoadVerdict.DELIVERED, null);
        met.setSloMet(true);
        StageSummary missed = stage(2, true, LoadVerdict.DELIVERED, null);
        missed.setSloMet(false);

        RunTurn allMet = Turns.run(spec).status(aggregating(met, met)).build();
        step.step(allMet);
        BenchmarkRunStatus status = decided(allMet);
        assertThat(condition(status, ConditionTypes.SLO_MET).getStatus()).isEqualTo("True");
        assertThat(condition(status, ConditionTypes.SLO_MET).getReason()).isEqualTo("Met");
        assertThat(condition(status, ConditionTypes.SLO_MET).getMessage())
                .isEqualTo("every stage met spec.slo");
        assertThat(status.getSummary().getSlo()).isEqualTo("Met");
        assertThat(condition(status, ConditionTypes.SERVER_METRICS_COLLECTED).getReason())
                .isEqualTo(ServerMetricsCondition.DISABLED);

        RunTurn oneMissed = Turns.run(spec).status(aggregating(met, missed)).build();
        step.step(oneMissed);
        status = decided(oneMissed);
        assertThat(condition(status, ConditionTypes.SLO_MET).getStatus()).isEqualTo("False");
        assertThat(condition(status, ConditionTypes.SLO_MET).getReason()).isEqualTo("Missed");
        assertThat(condition(status, ConditionTypes.SLO_MET).getMessage())
                .isEqualTo("some stage missed spec.slo");
        assertThat(status.getSummary().getSlo()).isEqualTo("Missed");
    }

    @Test
    void profilesKeptOnlyInConfigMapsAreReadBackForTheServerMetricsVerdict() throws Exception {
        BenchmarkRunStatus status = aggregating(stage(1, true, LoadVerdict.DELIVERED, null));
        // status.profiles gave way to the ConfigMaps (too large); the stored one has coverage
        status.setProfiles(null);
        cluster.stored.put(
                "p1.json",
                JSON.readTree(
                        "{\"metrics\":{\"server_metrics_coverage\":"
                                + "{\"expected\":5,\"succeeded\":5,\"failed\":0}}}"));
        RunTurn turn = Turns.sweep().status(status).build();

        step.step(turn);

        var collected = condition(decided(turn), ConditionTypes.SERVER_METRICS_COLLECTED);
        assertThat(collected.getStatus()).isEqualTo("True");
        assertThat(collected.getReason()).isEqualTo(ServerMetricsCondition.COLLECTED);
        assertThat(decided(turn).getPhase()).isEqualTo(Phase.SUCCEEDED);
    }
}
