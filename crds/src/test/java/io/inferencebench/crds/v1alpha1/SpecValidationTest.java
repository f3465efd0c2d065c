package io.inferencebench.crds.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SpecValidationTest {

    private static BenchmarkRunSpec validSpec() {
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        TargetSpec target = new TargetSpec();
        target.setService(new ServiceTarget("vllm", 8000));
        spec.setTarget(target);
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0, 5.0));
        load.setNumPrompts(100);
        spec.setLoad(load);
        return spec;
    }

    @Test
    void validSpecHasNoProblems() {
        assertThat(SpecValidation.validate(validSpec())).isEmpty();
    }

    @Test
    void targetNeedsExactlyOneOfServiceOrUrl() {
        BenchmarkRunSpec spec = validSpec();
        spec.getTarget().setUrl("http://x:1");
        assertThat(SpecValidation.validate(spec))
                .containsExactly("spec.target: exactly one of service or url must be set");
    }

    @Test
    void stageProblemsNameTheStage() {
        LoadSpec load = new LoadSpec();
        StageSpec both = StageSpec.rate(1, 10, null);
        both.setConcurrency(2);
        StageSpec unbounded = new StageSpec();
        unbounded.setRequestRate(-1.0);
        load.setStages(List.of(both, unbounded));
        List<String> problems = SpecValidation.validateLoad(load, "load");
        assertThat(problems)
                .anyMatch(p -> p.startsWith("load.stages[0]: exactly one of requestRate"))
                .anyMatch(p -> p.startsWith("load.stages[1]: at least one of numPrompts"))
                .anyMatch(p -> p.startsWith("load.stages[1].requestRate: must be greater than 0"));
    }

    @Test
    void badDurationsAndBurstinessAreReported() {
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setDuration("0s");
        load.setCooldown("10");
        load.setBurstiness(0.5);
        assertThat(SpecValidation.validateLoad(load, "load"))
                .anyMatch(p -> p.startsWith("load.duration: must be greater than zero"))
                .anyMatch(p -> p.startsWith("load.cooldown: invalid duration '10'"))
                .anyMatch(p -> p.startsWith("load.burstiness: burstiness other than 1"));
    }

    @Test
    void datasetRulesMatchTheCrd() {
        WorkloadSpec workload = new WorkloadSpec();
        workload.getDataset().setType(DatasetType.SHAREGPT);
        workload.getDataset().setInputTokens(TokenDistribution.uniform(10, 5));
        assertThat(SpecValidation.validateWorkload(workload, "workload"))
                .anyMatch(p -> p.startsWith("workload.dataset.source: is required"))
                .anyMatch(p -> p.startsWith("workload.dataset.inputTokens: applies only"))
                .anyMatch(p -> p.startsWith("workload.dataset.inputTokens.min: 10 is greater"));
    }

    @Test
    void everyRunnerPodNeedsWork() {
        BenchmarkRunSpec spec = validSpec();
        spec.getLoad().setNumPrompts(3);
        spec.getRunner().setParallelism(4);
        assertThat(SpecValidation.validate(spec))
                .containsExactly(
                        "spec.load.numPrompts: 3 is lower than spec.runner.parallelism 4; every"
                                + " runner pod needs at least one prompt");
        LoadSpec closed = new LoadSpec();
        closed.setStages(List.of(StageSpec.concurrency(2, 100, null)));
        assertThat(SpecValidation.validateShares(closed, 4))
                .containsExactly(
                        "spec.load.stages[0].concurrency: 2 is lower than spec.runner.parallelism"
                                + " 4; every runner pod needs at least one request in flight");
    }

    @Test
    void prometheusSectionIsCheckedLikeTheSchema() {
        BenchmarkRunSpec spec = validSpec();
        PrometheusSpec prometheus = new PrometheusSpec();
        prometheus.setUrl("http://prometheus.monitoring:9090/prefix");
        prometheus.setSelector("{namespace=\"llm\", job=~'vllm-.*',}");
        prometheus.setLabels(java.util.Map.of("cluster", "east"));
        prometheus.setStep("500ms");
        spec.getMetrics().setPrometheus(prometheus);
        assertThat(SpecValidation.validate(spec)).isEmpty();

        prometheus.setUrl("http://user:pw@prometheus:9090");
        prometheus.setSelector("up{job=\"x\"}");
        prometheus.setLabels(java.util.Map.of("k8s-ns", "x"));
        prometheus.setReplicaLabel("pod name");
        prometheus.setStep("0s");
        prometheus.setTimeout("30");
        spec.getMetrics().setEnabled(false);
        assertThat(SpecValidation.validate(spec))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus: needs spec.metrics.enabled"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.url: must be an http://"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.selector: must be PromQL"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.labels: 'k8s-ns'"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.replicaLabel: must be"))
                .anyMatch(p -> p.equals("spec.metrics.prometheus.step: must be greater than zero"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.timeout: invalid duration"))
                .hasSize(7);
    }
}
