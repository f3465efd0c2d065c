package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.crds.v1alpha1.ArrivalProcess;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShare;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.runner.engine.ArrivalKind;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.plan.RunPlan;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PodWorkloadTest {

    static RunnerWorkOrder order(LoadSpec load, int parallelism, List<StageShare> shares) {
        return new RunnerWorkOrder(
                "r",
                "ns",
                "uid-1",
                parallelism,
                "http://127.0.0.1:1",
                "/v1/completions",
                "vllm",
                "completions",
                "m",
                Map.of(),
                false,
                new WorkloadSpec(),
                load,
                shares,
                null,
                "r-control",
                "r-part-",
                3,
                null,
                null,
                null);
    }

    private static StageSpec stage(Double rate, Integer concurrency, Integer prompts, String d) {
        StageSpec s = new StageSpec();
        s.setRequestRate(rate);
        s.setConcurrency(concurrency);
        s.setNumPrompts(prompts);
        s.setDuration(d);
        return s;
    }

    @Test
    void eachPodGetsItsShareAndTheSharesAddUp() {
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(stage(9.0, null, 10, null), stage(null, 5, 7, "30s")));
        load.setMaxConcurrency(5);
        RunnerWorkOrder order = order(load, 3, StageShares.of(load, 3));
        long prompts = 0;
        long concurrency = 0;
        long cap = 0;
        for (int i = 0; i < 3; i++) {
            List<StagePlan> plans = PodWorkload.plans(order, i);
            assertThat(plans).hasSize(2);
            assertThat(plans.get(0).requestRate()).isEqualTo(3.0);
            assertThat(plans.get(0).index()).isZero();
            prompts += plans.get(0).numPrompts();
            cap += plans.get(0).maxConcurrency();
            assertThat(plans.get(1).closedLoop()).isTrue();
            assertThat(plans.get(1).duration()).isEqualTo(Duration.ofSeconds(30));
            concurrency += plans.get(1).concurrency();
        }
        assertThat(prompts).isEqualTo(10);
        assertThat(concurrency).isEqualTo(5);
        assertThat(cap).isEqualTo(5);
    }

    @Test
    void eachPodRampsItsShareOfBothRatesOverTheStage() {
        StageSpec ramped = stage(30.0, null, null, "60s");
        io.inferencebench.crds.v1alpha1.RampUpSpec ramp =
                new io.inferencebench.crds.v1alpha1.RampUpSpec();
        ramp.setStartRate(3.0);
        ramped.setRampUp(ramp);
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(ramped, stage(6.0, null, 12, null)));
        load.setMaxConcurrency(8);
        RunnerWorkOrder order = order(load, 3, StageShares.of(load, 3));
        double mean = 0;
        for (int i = 0; i < 3; i++) {
            StagePlan plan = PodWorkload.plans(order, i).get(0);
            assertThat(plan.ramped()).isTrue();
            assertThat(plan.rampUp().strategy())
                    .isEqualTo(io.inferencebench.runner.engine.RampUp.Strategy.LINEAR);
            assertThat(plan.rampUp().startRate()).isEqualTo(1.0);
            assertThat(plan.rampUp().endRate()).isEqualTo(10.0);
            assertThat(plan.duration()).isEqualTo(Duration.ofSeconds(60));
            assertThat(plan.maxConcurrency()).isIn(2, 3);
            mean += plan.requestRate();
            // the stage without a ramp stays constant
            assertThat(PodWorkload.plans(order, i).get(1).ramped()).isFalse();
        }
        // a linear ramp's mean is the middle of its ends: (3 + 30) / 2
        assertThat(mean).isCloseTo(16.5, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aPodWithNothingToDoInAStageGetsNoPlan() {
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(stage(2.0, null, 1, null)));
        RunnerWorkOrder order = order(load, 2, StageShares.of(load, 2));
        assertThat(PodWorkload.plans(order, 0).get(0)).isNotNull();
        assertThat(PodWorkload.plans(order, 1).get(0)).isNull();
    }

    @Test
    void aBadDurationNamesTheField() {
        LoadSpec load = new LoadSpec();
        RunnerWorkOrder order =
                order(
                        load,
                        1,
                        List.of(new StageShare(1, 1.0, null, null, "soon", 1.0, null, null)));
        assertThatThrownBy(() -> PodWorkload.plans(order, 0))
                .isInstanceOf(PodFailure.class)
                .hasMessageContaining("stages[0].duration");
    }

    @Test
    void sloThresholdsInMilliseconds() {
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setNumPrompts(4);
        SloSpec spec = new SloSpec();
        spec.setTtft("500ms");
        spec.setE2eLatency("2s");
        RunnerWorkOrder order = order(load, 1, StageShares.of(load, 1));
        RunnerWorkOrder withSlo =
                new RunnerWorkOrder(
                        order.runName(),
                        order.namespace(),
                        order.runUid(),
                        order.parallelism(),
                        order.baseUrl(),
                        order.path(),
                        order.backend(),
                        order.api(),
                        order.model(),
                        order.headers(),
                        order.apiKeyFromEnv(),
                        order.workload(),
                        order.load(),
                        order.stages(),
                        spec,
                        order.controlConfigMap(),
                        order.partConfigMapPrefix(),
                        order.reportIntervalSeconds(),
                        null,
                        null,
                        null);
        Slo slo = PodWorkload.plan(withSlo, 0).slo();
        assertThat(slo.ttftMs()).isEqualTo(500.0);
        assertThat(slo.e2elMs()).isEqualTo(2000.0);
        assertThat(slo.tpotMs()).isNull();
        assertThat(PodWorkload.plan(order, 0).slo().configured()).isFalse();
    }

    @Test
    void podsDrawDistinctSeeds() {
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setNumPrompts(4);
        RunnerWorkOrder order = order(load, 2, StageShares.of(load, 2));
        long first = PodWorkload.plan(order, 0).dataset().seed();
        assertThat(first).isZero();
        assertThat(PodWorkload.plan(order, 1).dataset().seed()).isNotEqualTo(first);
    }

    @Test
    void settingsNeverPrintTheApiKey() {
        PodSettings s =
                new PodSettings(
                        "r",
                        "ns",
                        null,
                        0,
                        Path.of("/x"),
                        "sk-very-secret",
                        null,
                        null,
                        Path.of("/tmp"),
                        false,
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(1),
                        null);
        assertThat(s.toString()).doesNotContain("sk-very-secret").contains("apiKey=set");
    }

    @Test
    void aSearchWorkOrderHasNoFixedStagesAndEachProbeIsSharedWhenItsRateIsKnown() {
        LoadSpec load = new LoadSpec();
        load.setNumPrompts(11);
        load.setMaxConcurrency(4);
        load.setArrival(ArrivalProcess.GAMMA);
        load.setBurstiness(0.5);
        load.setWarmupRequests(3);
        RunnerWorkOrder order = order(load, 3, List.of());
        long prompts = 0;
        long warmups = 0;
        for (int i = 0; i < 3; i++) {
            RunPlan plan = PodWorkload.plan(order, i);
            assertThat(plan.stages()).isEmpty();
            // Enough prompts for the pod's share of a probe, not the 1 of an empty plan.
            assertThat(PodWorkload.datasetSize(order, i, plan)).isEqualTo(i < 2 ? 4 : 3);
            warmups += plan.warmupRequests();
            StageShare share = PodWorkload.probeShare(order, 2, 7.5);
            assertThat(share.requestRate()).isEqualTo(7.5);
            StagePlan probe = PodWorkload.probe(order, i, share);
            assertThat(probe.index()).isEqualTo(1);
            assertThat(probe.requestRate()).isEqualTo(2.5);
            assertThat(probe.closedLoop()).isFalse();
            assertThat(probe.arrival()).isEqualTo(ArrivalKind.GAMMA);
            assertThat(probe.burstiness()).isEqualTo(0.5);
            assertThat(probe.maxConcurrency()).isEqualTo(i == 0 ? 2 : 1);
            prompts += probe.numPrompts();
        }
        assertThat(prompts).isEqualTo(11);
        assertThat(warmups).isEqualTo(3);
    }

    @Test
    void aSearchProbeOfDurationPreparesWhatADurationStageDoes() {
        LoadSpec load = new LoadSpec();
        load.setDuration("20s");
        RunnerWorkOrder order = order(load, 2, null);
        RunPlan plan = PodWorkload.plan(order, 1);
        assertThat(plan.stages()).isEmpty();
        assertThat(PodWorkload.datasetSize(order, 1, plan))
                .isEqualTo(RunPlan.DURATION_STAGE_PROMPTS);
        StagePlan probe = PodWorkload.probe(order, 1, PodWorkload.probeShare(order, 1, 3.0));
        assertThat(probe.duration()).isEqualTo(Duration.ofSeconds(20));
        assertThat(probe.numPrompts()).isZero();
        assertThat(probe.requestRate()).isEqualTo(1.5);
    }

    @Test
    void aGrownSearchProbeRunsItsSizeTimesTheProbeSize() {
        LoadSpec load = new LoadSpec();
        load.setNumPrompts(10);
        RunnerWorkOrder order = order(load, 2, List.of());
        StageShare share = PodWorkload.probeShare(order, 3, 8.0, 4);
        assertThat(share.numPrompts()).isEqualTo(40);
        assertThat(PodWorkload.probe(order, 0, share).numPrompts()).isEqualTo(20);
        assertThat(PodWorkload.probe(order, 1, share).numPrompts()).isEqualTo(20);
        LoadSpec timed = new LoadSpec();
        timed.setDuration("1500ms");
        RunnerWorkOrder timedOrder = order(timed, 1, null);
        assertThat(
                        PodWorkload.probe(
                                        timedOrder,
                                        0,
                                        PodWorkload.probeShare(timedOrder, 1, 3.0, 16))
                                .duration())
                .isEqualTo(Duration.ofSeconds(24));
        assertThatThrownBy(() -> PodWorkload.probeShare(order, 3, 8.0, 0))
                .isInstanceOf(PodFailure.class)
                .hasMessageContaining("stage-3-size");
    }

    @Test
    void aSearchProbeWithoutLoadForThisPodHasNoPlanAndBadInputNamesTheField() {
        LoadSpec load = new LoadSpec();
        load.setNumPrompts(1);
        RunnerWorkOrder order = order(load, 2, List.of());
        assertThat(PodWorkload.probe(order, 1, PodWorkload.probeShare(order, 1, 4.0))).isNull();
        assertThat(PodWorkload.probe(order, 0, PodWorkload.probeShare(order, 1, 0.0))).isNull();
        assertThatThrownBy(() -> PodWorkload.probeShare(order, 3, -1.0))
                .isInstanceOf(PodFailure.class)
                .hasMessageContaining("stage-3-rate");
        assertThatThrownBy(() -> PodWorkload.plans(order(new LoadSpec(), 2, List.of()), 0))
                .isInstanceOf(PodFailure.class)
                .hasMessageContaining("numPrompts nor duration");
    }
}
