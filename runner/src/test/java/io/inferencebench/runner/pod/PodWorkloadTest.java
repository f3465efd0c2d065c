package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShare;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StagePlan;
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
                3);
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
                        order.reportIntervalSeconds());
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
}
