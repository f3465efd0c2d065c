package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.MetricComparison;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.testkit.ApiServerFixture;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
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

    private final ObjectMapper json = new ObjectMapper();
    private ApiServerFixture apiServer;
    private KubernetesClient client;
    private Operator operator;
    private String namespace;

    @BeforeAll
    void startApiServerAndOperator() throws Exception {
        apiServer = ApiServerFixture.start();
        // Both clients read as the operator's Quarkus client does (NewerFields).
        client = lenientClient();
        try (InputStream crdYaml =
                BenchmarkRun.class.getResourceAsStream(
                        "/META-INF/fabric8/benchmarkruns.inferencebench.io-v1.yml")) {
            CustomResourceDefinition crd =
                    client.apiextensions().v1().customResourceDefinitions().load(crdYaml).item();
            // A CRD newer than this operator: one more spec field than the Java model knows.
            crd.getSpec()
                    .getVersions()
                    .getFirst()
                    .getSchema()
                    .getOpenAPIV3Schema()
                    .getProperties()
                    .get("spec")
                    .getProperties()
                    .put(
                            "futureField",
                            new io.fabric8.kubernetes.api.model.apiextensions.v1
                                            .JSONSchemaPropsBuilder()
                                    .withType("string")
                                    .build());
            client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        }
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName(BenchmarkRun.CRD_NAME)
                .waitUntilCondition(
                        c ->
                                c.getStatus() != null
                                        && c.getStatus().getConditions() != null
                                        && c.getStatus().getConditions().stream()
                                                .anyMatch(
                                                        x ->
                                                                x.getType().equals("Established")
                                                                        && x.getStatus()
                                                                                .equals("True")),
                        60,
                        TimeUnit.SECONDS);
        operator = new Operator(o -> o.withKubernetesClient(lenientClient()));
        operator.register(
                new BenchmarkRunReconciler(client, Clock.systemUTC(), new SimpleMeterRegistry()));
        operator.start();
    }

    private KubernetesClient lenientClient() {
        return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withConfig(
                        io.fabric8.kubernetes.client.Config.fromKubeconfig(
                                apiServer.kubeconfigYaml()))
                .withKubernetesSerialization(NewerFields.serialization())
                .build();
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

    @AfterAll
    void stop() {
        if (operator != null) {
            operator.stop();
        }
        if (client != null) {
            client.close();
        }
        if (apiServer != null) {
            apiServer.close();
        }
    }

    @BeforeEach
    void namespaceWithTargetAndRunnerServiceAccount() {
        namespace = "base-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(namespace)
                                .endMetadata()
                                .build())
                .create();
        client.serviceAccounts()
                .inNamespace(namespace)
                .resource(
                        new ServiceAccountBuilder()
                                .withNewMetadata()
                                .withName("inferencebench-runner")
                                .endMetadata()
                                .build())
                .create();
        client.services()
                .inNamespace(namespace)
                .resource(
                        new ServiceBuilder()
                                .withNewMetadata()
                                .withName("vllm")
                                .endMetadata()
                                .withNewSpec()
                                .addNewPort()
                                .withPort(8000)
                                .endPort()
                                .endSpec()
                                .build())
                .create();
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .resource(
                        new EndpointSliceBuilder()
                                .withNewMetadata()
                                .withName("vllm-1")
                                .addToLabels("kubernetes.io/service-name", "vllm")
                                .endMetadata()
                                .withAddressType("IPv4")
                                .addNewEndpoint()
                                .withAddresses("10.1.2.3")
                                .withNewConditions()
                                .withReady(true)
                                .endConditions()
                                .endEndpoint()
                                .addNewPort()
                                .withPort(8000)
                                .endPort()
                                .build())
                .create();
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
        BenchmarkRun run =
                client.resources(BenchmarkRun.class)
                        .inNamespace(namespace)
                        .resource(
                                client.getKubernetesSerialization()
                                        .unmarshal(yaml, BenchmarkRun.class))
                        .create();
        awaitStatus(name, s -> s.getPhase() == Phase.INITIALIZING);
        writePart(run, Map.of(PartReport.STATE, PartReport.STATE_READY));
        awaitStatus(name, s -> s.getPhase() == Phase.RUNNING);
        writePart(run, stageDone(run.getMetadata().getUid(), slowdown));
        return awaitStatus(name, s -> s.getPhase() == Phase.SUCCEEDED);
    }

    private BenchmarkRunStatus awaitStatus(String name, Predicate<BenchmarkRunStatus> predicate) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(
                        () -> {
                            BenchmarkRun r =
                                    client.resources(BenchmarkRun.class)
                                            .inNamespace(namespace)
                                            .withName(name)
                                            .get();
                            return r.getStatus() != null && predicate.test(r.getStatus());
                        });
        return client.resources(BenchmarkRun.class)
                .inNamespace(namespace)
                .withName(name)
                .get()
                .getStatus();
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

    private Map<String, String> stageDone(String uid, double slowdown) throws Exception {
        StageResult result = new StageResult();
        result.stageIndex = 0;
        result.requestedRate = 5;
        result.numPromptsRequested = 40;
        result.sent = 40;
        result.completed = 40;
        long start = Instant.parse("2026-11-29T12:00:00Z").toEpochMilli() * 1_000_000L;
        result.firstDispatchEpochNanos = start;
        result.lastDispatchEpochNanos = start + 7_800_000_000L;
        result.lastCompletionEpochNanos = start + 8_400_000_000L;
        result.totalInputTokens = 40 * 100;
        result.totalOutputTokens = 40 * 50;
        result.outputTokenSource = "usage";
        result.inputTokenSource = "usage";
        for (int r = 0; r < 40; r++) {
            result.latencyMs.record(slowdown * (400 + r));
            result.ttftMs.record(slowdown * (40 + r));
            result.tpotMs.record(slowdown * (7.0 + r * 0.02));
            result.itlMs.record(slowdown * (7.0 + r * 0.02));
            result.perTokenLatencySec.record(slowdown * 0.0027);
            result.perOutputTokenLatencyMs.record(slowdown * 8.0);
            result.inputLen.record(100);
            result.outputLen.record(50);
            result.scheduleLagMs.record(0.5);
        }
        return Map.of(
                PartReport.STATE,
                PartReport.STATE_DONE,
                PartReport.STAGES_DONE,
                "1",
                PartReport.RUN_UID,
                uid,
                PartReport.stageResultKey(1),
                json.writeValueAsString(result));
    }

    private void writePart(BenchmarkRun run, Map<String, String> data) {
        ConfigMap part =
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(ResourceNames.part(run.getMetadata().getName(), 0))
                        .withNamespace(namespace)
                        .addToLabels(Labels.of(run, Labels.RUNNER))
                        .addToLabels(Labels.PART_INDEX, "0")
                        .withOwnerReferences(
                                new OwnerReferenceBuilder()
                                        .withApiVersion("inferencebench.io/v1alpha1")
                                        .withKind("BenchmarkRun")
                                        .withName(run.getMetadata().getName())
                                        .withUid(run.getMetadata().getUid())
                                        .build())
                        .endMetadata()
                        .withData(data)
                        .build();
        client.configMaps().inNamespace(namespace).resource(part).createOr(c -> c.update());
    }
}
