package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.MetricComparison;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.profile.lpg.StageResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code spec.baseline} on a real kube-apiserver + etcd: runs finish (the test plays the runner
 * pods through their part ConfigMaps), the operator compares their profiles with the baseline's
 * through the profile module's comparison and reports status.comparison and the Regressed
 * condition.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BaselineComparisonIT {

    /** Closed after the last test (JUnit closes the fields it marks). */
    @AutoClose private OperatorTestCluster cluster;

    private KubernetesClient client;
    private String namespace;

    @BeforeAll
    void startApiServerAndOperator() {
        // Both clients read as the operator's Quarkus client does (NewerFields).
        cluster = OperatorTestCluster.startReadingNewerFields();
        client = cluster.client();
        OperatorTestCluster.installAndAwaitEstablished(
                client,
                List.of(
                        OperatorTestCluster.withFutureSpecField(
                                OperatorTestCluster.loadCrd(
                                        client, OperatorTestCluster.BENCHMARK_RUN_CRD))));
        cluster.startOperator(
                cluster.newClientReadingNewerFields(),
                new BenchmarkRunReconciler(
                        client,
                        Clock.systemUTC(),
                        new SimpleMeterRegistry(),
                        RunAdmission.fromConfig()));
    }

    @Test
    void aRunCarryingAFieldNewerThanTheModelIsStillReconciled() throws Exception {
        String yaml =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: newer}
                spec:
                  target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                  load: {requestRates: [5], numPrompts: 40, cooldown: 0s}
                  futureField: from-a-newer-crd
                """;
        client.genericKubernetesResources(
                        BenchmarkRun.GROUP + "/" + BenchmarkRun.VERSION, BenchmarkRun.KIND)
                .inNamespace(namespace)
                .resource(
                        client.getKubernetesSerialization()
                                .unmarshal(
                                        yaml,
                                        io.fabric8.kubernetes.api.model.GenericKubernetesResource
                                                .class))
                .create();
        assertThat(
                        client.genericKubernetesResources(
                                        BenchmarkRun.GROUP + "/" + BenchmarkRun.VERSION,
                                        BenchmarkRun.KIND)
                                .inNamespace(namespace)
                                .withName("newer")
                                .get()
                                .getAdditionalProperties()
                                .toString())
                .as("the API server kept the field")
                .contains("futureField=from-a-newer-crd");
        BenchmarkRunStatus status = awaitStatus("newer", s -> s.getPhase() == Phase.INITIALIZING);
        assertThat(status.condition(ConditionTypes.TARGET_READY))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
    }

    @BeforeEach
    void namespaceWithTargetAndRunnerServiceAccount() {
        namespace = cluster.createRunNamespace("base-");
        cluster.createServiceWithOneEndpoint(namespace, "vllm", true);
    }

    /** Creates a one-stage run and plays its runner pod through to the end. */
    private BenchmarkRunStatus finishedRun(String name, String baseline, double slowdown)
            throws Exception {
        String yaml =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                  load: {requestRates: [5], numPrompts: 40, cooldown: 0s}
                %s
                """
                        .formatted(name, baseline == null ? "" : "  baseline: " + baseline);
        BenchmarkRun run = cluster.createRun(namespace, yaml);
        RunParts.playStage(
                cluster, run, Duration.ZERO, stageDone(run.getMetadata().getUid(), slowdown));
        return awaitStatus(name, s -> s.getPhase() == Phase.SUCCEEDED);
    }

    private BenchmarkRunStatus awaitStatus(String name, Predicate<BenchmarkRunStatus> predicate) {
        return cluster.awaitRunStatus(namespace, name, predicate);
    }

    private static Predicate<BenchmarkRunStatus> regressedIs(String value) {
        return s ->
                s.condition(ConditionTypes.REGRESSED)
                        .map(c -> value.equals(c.getStatus()))
                        .orElse(false);
    }

    private List<Event> events(String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    @Test
    void theSameLatenciesDoNotRegressAndSlowerOnesDo() throws Exception {
        finishedRun("base", null, 1.0);
        finishedRun("same", "{runName: base}", 1.0);
        BenchmarkRunStatus same = awaitStatus("same", regressedIs("False"));
        assertThat(same.getComparison().getBaseline()).isEqualTo("run/base");
        assertThat(same.getComparison().getVerdict())
                .isEqualTo(RunComparison.NO_SIGNIFICANT_CHANGE);
        assertThat(same.getComparison().getStages()).singleElement();
        assertThat(same.getComparison().getStages().getFirst().getMetrics())
                .isNotEmpty()
                .noneMatch(m -> Boolean.TRUE.equals(m.getSignificant()));

        finishedRun("slower", "{runName: base}", 1.5);
        BenchmarkRunStatus slower = awaitStatus("slower", regressedIs("True"));
        RunComparison comparison = slower.getComparison();
        assertThat(comparison.getVerdict()).isEqualTo(RunComparison.REGRESSION);
        MetricComparison ttftMedian =
                comparison.getStages().getFirst().getMetrics().stream()
                        .filter(
                                m ->
                                        m.getMetric().contains("ttft")
                                                && m.getMetric().contains("p50"))
                        .findFirst()
                        .orElseThrow();
        // What each side's profile says, not a number written here.
        BenchmarkRunStatus base = awaitStatus("base", s -> true);
        assertThat(ttftMedian.getBaseline())
                .isEqualTo(base.getProfiles().getFirst().at("/metrics/median_ttft_ms").asDouble());
        assertThat(ttftMedian.getCandidate())
                .isEqualTo(
                        slower.getProfiles().getFirst().at("/metrics/median_ttft_ms").asDouble());
        assertThat(ttftMedian.getChange())
                .isCloseTo(
                        (ttftMedian.getCandidate() - ttftMedian.getBaseline())
                                / ttftMedian.getBaseline(),
                        org.assertj.core.api.Assertions.within(1e-9));
        assertThat(ttftMedian.getSignificant()).isTrue();
        assertThat(ttftMedian.getWorse()).isTrue();
        Condition regressed = slower.condition(ConditionTypes.REGRESSED).orElseThrow();
        assertThat(regressed.getReason()).isEqualTo(RunComparison.REGRESSION);
        assertThat(regressed.getMessage())
                .startsWith("regressed against run/base; worst: stage 1 ")
                .contains(comparison.getWorstMetric());
        await().atMost(Duration.ofSeconds(30)).until(() -> events("Regressed").size() == 1);
        assertThat(events("Regressed").getFirst().getType()).isEqualTo("Warning");
    }

    @Test
    void aConfigMapOfProfilesIsABaselineAndAMissingBaselineIsACondition() throws Exception {
        BenchmarkRunStatus base = finishedRun("release", null, 1.0);
        // A copy of the release's output ConfigMap, as a team would keep it.
        ConfigMap output =
                client.configMaps()
                        .inNamespace(namespace)
                        .withName(base.getProfileConfigMap())
                        .get();
        client.configMaps()
                .inNamespace(namespace)
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("release-profiles")
                                .endMetadata()
                                .withData(output.getData())
                                .build())
                .create();
        finishedRun("from-map", "{configMapRef: {name: release-profiles}}", 1.0);
        BenchmarkRunStatus fromMap = awaitStatus("from-map", regressedIs("False"));
        assertThat(fromMap.getComparison().getBaseline()).isEqualTo("configmap/release-profiles");

        finishedRun("orphan", "{runName: no-such-run}", 1.0);
        BenchmarkRunStatus orphan =
                awaitStatus("orphan", s -> s.condition(ConditionTypes.REGRESSED).isPresent());
        Condition missing = orphan.condition(ConditionTypes.REGRESSED).orElseThrow();
        assertThat(missing.getStatus()).isEqualTo("Unknown");
        assertThat(missing.getReason()).isEqualTo("BaselineNotFound");
        assertThat(missing.getMessage())
                .isEqualTo(
                        "spec.baseline.runName: BenchmarkRun no-such-run not found in namespace "
                                + namespace);
        assertThat(orphan.getComparison()).isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> events("BaselineNotFound").size() == 1);
        assertThat(events("BaselineNotFound").getFirst().getType()).isEqualTo("Warning");
    }

    /**
     * {@code runNames}: four earlier runs of an unchanged target pooled as repeats, so a single run
     * is judged against their spread (a BenchmarkSchedule's {@code noiseFloorRuns} writes the
     * same). Runs 0.2 % apart make a tight floor: the same latencies are no change and 30 % slower
     * a regression; runs 4 % apart cannot rule out a 5 % change, so 1 % slower is inconclusive,
     * Regressed Unknown, naming what the noise hides.
     */
    @Test
    void severalEarlierRunsPooledAreTheNoiseFloorASingleRunIsJudgedBy() throws Exception {
        String quiet = pooledHistory("quiet", 1.000, 1.002, 0.998, 1.001);
        finishedRun("same-as-quiet", quiet, 1.0);
        BenchmarkRunStatus same = awaitStatus("same-as-quiet", regressedIs("False"));
        assertThat(same.getComparison().getBaseline())
                .isEqualTo("runs/quiet-0,quiet-1,quiet-2,quiet-3");
        assertThat(same.getComparison().getVerdict())
                .isEqualTo(RunComparison.NO_SIGNIFICANT_CHANGE);
        assertThat(same.getComparison().getStages())
                .as("four runs of one rate are that stage's repeats, not four stages")
                .singleElement();

        finishedRun("slower-than-quiet", quiet, 1.3);
        BenchmarkRunStatus slower = awaitStatus("slower-than-quiet", regressedIs("True"));
        assertThat(slower.getComparison().getVerdict()).isEqualTo(RunComparison.REGRESSION);
        assertThat(slower.condition(ConditionTypes.REGRESSED).orElseThrow().getMessage())
                .startsWith("regressed against runs/quiet-0,quiet-1,quiet-2,quiet-3; worst:");

        String noisy = pooledHistory("noisy", 1.00, 1.04, 0.96, 1.03);
        finishedRun("one-percent", noisy, 1.01);
        BenchmarkRunStatus onePercent = awaitStatus("one-percent", regressedIs("Unknown"));
        Condition undecided = onePercent.condition(ConditionTypes.REGRESSED).orElseThrow();
        assertThat(undecided.getReason()).isEqualTo(RunComparison.INCONCLUSIVE);
        assertThat(undecided.getMessage()).startsWith("inconclusive against runs/noisy-0,");
        assertThat(onePercent.getComparison().getNotes())
                .anySatisfy(
                        note ->
                                assertThat(note)
                                        .startsWith("inconclusive: stage 1 ")
                                        .contains(
                                                "can be told from the noise of 4 baseline and 1"
                                                        + " candidate repeats"));

        // One pooled run missing: the condition names the field and the run; retried.
        finishedRun("gap", "{runNames: [quiet-0, gone]}", 1.0);
        Condition gap =
                awaitStatus("gap", s -> s.condition(ConditionTypes.REGRESSED).isPresent())
                        .condition(ConditionTypes.REGRESSED)
                        .orElseThrow();
        assertThat(gap.getStatus()).isEqualTo("Unknown");
        assertThat(gap.getReason()).isEqualTo("BaselineNotFound");
        assertThat(gap.getMessage())
                .isEqualTo(
                        "spec.baseline.runNames: BenchmarkRun gone not found in namespace "
                                + namespace);
    }

    /**
     * Finished runs {@code <prefix>-0..} whose latencies are scaled by {@code slowdowns}, as the
     * {@code spec.baseline} that pools them.
     */
    private String pooledHistory(String prefix, double... slowdowns) throws Exception {
        List<String> names = new java.util.ArrayList<>();
        for (int i = 0; i < slowdowns.length; i++) {
            names.add(prefix + "-" + i);
            finishedRun(names.getLast(), null, slowdowns[i]);
        }
        return "{runNames: [" + String.join(", ", names) + "]}";
    }

    private Map<String, String> stageDone(String uid, double slowdown) {
        StageResult result =
                RunParts.slowedStage(
                        RunParts.epochNanos(Instant.parse("2026-11-29T12:00:00Z")), slowdown);
        return RunParts.report(PartReport.STATE_DONE, 1, uid, result);
    }
}
