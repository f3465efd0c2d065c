package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.profile.lpg.RunnerCpu;
import io.inferencebench.profile.lpg.StageResult;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The reconciler, run in-process by the Java Operator SDK against a real kube-apiserver + etcd.
 * There is no kubelet here: the test plays the runner pods by writing their part ConfigMaps, and
 * the Service's endpoints by writing an EndpointSlice.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BenchmarkRunLifecycleIT {

    private final ObjectMapper json = new ObjectMapper();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    /** Closed after the last test (JUnit closes the fields it marks). */
    @AutoClose private OperatorTestCluster cluster;

    private KubernetesClient client;
    private String namespace;

    @BeforeAll
    void startApiServerAndOperator() {
        cluster = OperatorTestCluster.startWithRunOperator(meters, RunAdmission.fromConfig());
        client = cluster.client();
    }

    @BeforeEach
    void freshNamespace() {
        namespace = cluster.createRunNamespace("it-");
    }

    private void service(String name, boolean readyEndpoint) {
        cluster.createServiceWithOneEndpoint(namespace, name, readyEndpoint);
    }

    private BenchmarkRun create(String name, int parallelism, String yamlExtra) {
        String yaml =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                  load: {requestRates: [5, 10], numPrompts: 20, cooldown: 0s}
                  runner: {parallelism: %d}
                %s
                """
                        .formatted(name, parallelism, yamlExtra);
        return cluster.createRun(namespace, yaml);
    }

    /** Creates the run {@code name} whose {@code spec} is {@code specBody}. */
    private BenchmarkRun createSpec(String name, String specBody) {
        return cluster.createRun(namespace, OperatorTestCluster.runYaml(name, null, specBody));
    }

    private BenchmarkRun get(String name) {
        return cluster.run(namespace, name);
    }

    private BenchmarkRunStatus awaitStatus(
            String name, java.util.function.Predicate<BenchmarkRunStatus> predicate) {
        return cluster.awaitRunStatus(namespace, name, predicate);
    }

    /** Waits until the run's TargetReady condition has {@code reason}; returns the status. */
    private BenchmarkRunStatus awaitTargetReadyReason(String name, String reason) {
        return awaitStatus(
                name, s -> reason.equals(condition(s, ConditionTypes.TARGET_READY, "reason")));
    }

    /**
     * Waits up to 10 s for a MissingReference Warning Event whose message contains {@code part}.
     */
    private void awaitMissingReferenceWarning(String part) {
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                warnings().stream()
                                        .anyMatch(
                                                e ->
                                                        e.getReason().equals("MissingReference")
                                                                && e.getMessage().contains(part)));
    }

    /** Waits up to 30 s for the Job {@code name} in the test namespace; returns it. */
    private Job awaitJob(String name) {
        return await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.batch()
                                        .v1()
                                        .jobs()
                                        .inNamespace(namespace)
                                        .withName(name)
                                        .get(),
                        java.util.Objects::nonNull);
    }

    private static String condition(BenchmarkRunStatus status, String type, String field) {
        return status.condition(type)
                .map(c -> field.equals("reason") ? c.getReason() : c.getStatus())
                .orElse(null);
    }

    /**
     * Rewrites stage {@code stage}'s result in a part's {@code data} as {@code edit} changes it.
     */
    private void editStageResult(
            Map<String, String> data, int stage, java.util.function.Consumer<StageResult> edit)
            throws Exception {
        StageResult result =
                json.readValue(data.get(PartReport.stageResultKey(stage)), StageResult.class);
        edit.accept(result);
        data.put(PartReport.stageResultKey(stage), json.writeValueAsString(result));
    }

    @Test
    void serviceWithoutReadyEndpointsKeepsTheRunPendingWithoutRunners() {
        service("vllm", false);
        create("no-endpoints", 1, "");
        BenchmarkRunStatus status =
                awaitStatus(
                        "no-endpoints",
                        s ->
                                "NoReadyEndpoints"
                                        .equals(
                                                condition(
                                                        s, ConditionTypes.TARGET_READY, "reason")));
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(condition(status, ConditionTypes.TARGET_READY, "status")).isEqualTo("False");
        assertThat(status.getMessage()).contains("no ready endpoints");
        assertThat(client.batch().v1().jobs().inNamespace(namespace).list().getItems()).isEmpty();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                warnings().stream()
                                        .anyMatch(e -> e.getReason().equals("NoReadyEndpoints")));
    }

    @Test
    void missingSecretIsReportedAsAConditionNotAnError() {
        service("vllm", true);
        BenchmarkRun run = create("missing-secret", 1, "");
        assertThat(run).isNotNull();
        BenchmarkRunStatus status =
                awaitStatus(
                        "missing-secret",
                        s -> s.condition(ConditionTypes.TARGET_READY).isPresent());
        // The spec has no secret; make a second run that references a missing one.
        createSpec(
                "needs-secret",
                """
                target:
                  service: {name: vllm, port: 8000}
                  apiKeySecretRef: {name: hf, key: token}
                load: {requestRates: [1], numPrompts: 5}
                """);
        status = awaitTargetReadyReason("needs-secret", "MissingReference");
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(status.getMessage())
                .contains("spec.target.apiKeySecretRef")
                .contains("Secret hf not found");
        assertThat(
                        client.batch()
                                .v1()
                                .jobs()
                                .inNamespace(namespace)
                                .withName("needs-secret-runner")
                                .get())
                .isNull();
    }

    @Test
    void runInANamespaceWithoutRunnerServiceAccountIsStoppedBeforeLaunch() {
        service("vllm", true);
        client.serviceAccounts().inNamespace(namespace).withName("inferencebench-runner").delete();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                client.serviceAccounts()
                                                .inNamespace(namespace)
                                                .withName("inferencebench-runner")
                                                .get()
                                        == null);
        long start = System.nanoTime();
        create("no-runner-sa", 1, "");
        BenchmarkRunStatus status = awaitTargetReadyReason("no-runner-sa", "MissingReference");
        // Seconds, not spec.runner.startTimeout (5m): the run never reaches Initializing.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(condition(status, ConditionTypes.TARGET_READY, "status")).isEqualTo("False");
        assertThat(status.getMessage())
                .contains("spec.runner.serviceAccountName")
                .contains(
                        "ServiceAccount inferencebench-runner not found in namespace " + namespace)
                .contains("kubectl apply -k config/rbac/runner -n " + namespace);
        awaitMissingReferenceWarning("ServiceAccount inferencebench-runner");
        assertThat(client.batch().v1().jobs().inNamespace(namespace).list().getItems()).isEmpty();

        // A run naming its own ServiceAccount is checked for that one.
        createSpec(
                "own-sa",
                """
                target: {service: {name: vllm, port: 8000}}
                load: {requestRates: [1], numPrompts: 5}
                runner: {serviceAccountName: team-runner}
                """);
        status =
                awaitStatus(
                        "own-sa",
                        s -> s.getMessage() != null && s.getMessage().contains("team-runner"));
        assertThat(status.getMessage())
                .contains("spec.runner.serviceAccountName: ServiceAccount team-runner not found");

        // Installing the runner RBAC afterwards lets the waiting run go on.
        OperatorTestCluster.createRunnerServiceAccount(client, namespace);
        status = awaitStatus("no-runner-sa", s -> s.getPhase() == Phase.INITIALIZING);
        assertThat(condition(status, ConditionTypes.TARGET_READY, "status")).isEqualTo("True");
    }

    @Test
    void missingTlsCaReferencesKeepTheRunPendingAndNameTheReference() {
        service("vllm", true);
        BenchmarkRun fromConfigMap =
                client.getKubernetesSerialization()
                        .unmarshal(
                                """
                                apiVersion: inferencebench.io/v1alpha1
                                kind: BenchmarkRun
                                metadata: {name: ca-configmap}
                                spec:
                                  target:
                                    service: {name: vllm, port: 8000, scheme: https}
                                    tls: {caConfigMapRef: {name: server-ca}}
                                  load: {requestRates: [1], numPrompts: 5}
                                """,
                                BenchmarkRun.class);
        client.resources(BenchmarkRun.class)
                .inNamespace(namespace)
                .resource(fromConfigMap)
                .create();
        BenchmarkRunStatus status = awaitTargetReadyReason("ca-configmap", "MissingReference");
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(condition(status, ConditionTypes.TARGET_READY, "status")).isEqualTo("False");
        assertThat(status.getMessage())
                .contains("spec.target.tls.caConfigMapRef: ConfigMap server-ca not found");
        awaitMissingReferenceWarning("spec.target.tls.caConfigMapRef");

        // The ConfigMap without the default key is still a missing reference, named by its key.
        client.configMaps()
                .inNamespace(namespace)
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("server-ca")
                                .endMetadata()
                                .addToData("bundle.pem", "-----BEGIN CERTIFICATE-----")
                                .build())
                .create();
        status =
                awaitStatus(
                        "ca-configmap",
                        s -> s.getMessage() != null && s.getMessage().contains("has no key"));
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(status.getMessage())
                .contains("spec.target.tls.caConfigMapRef: ConfigMap server-ca has no key ca.crt");

        createSpec(
                "ca-secret",
                """
                target:
                  service: {name: vllm, port: 8000, scheme: https}
                  tls: {caSecretRef: {name: server-tls, key: ca.pem}}
                load: {requestRates: [1], numPrompts: 5}
                """);
        status = awaitTargetReadyReason("ca-secret", "MissingReference");
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(status.getMessage())
                .contains("spec.target.tls.caSecretRef: Secret server-tls not found");
        client.secrets()
                .inNamespace(namespace)
                .resource(
                        new io.fabric8.kubernetes.api.model.SecretBuilder()
                                .withNewMetadata()
                                .withName("server-tls")
                                .endMetadata()
                                .addToStringData("ca.crt", "-----BEGIN CERTIFICATE-----")
                                .build())
                .create();
        status =
                awaitStatus(
                        "ca-secret",
                        s ->
                                s.getMessage() != null
                                        && s.getMessage()
                                                .contains(
                                                        "spec.target.tls.caSecretRef: Secret"
                                                                + " server-tls has no key ca.pem"));
        assertThat(status.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(client.batch().v1().jobs().inNamespace(namespace).list().getItems()).isEmpty();

        // With the key in place the run leaves Pending.
        client.configMaps()
                .inNamespace(namespace)
                .withName("server-ca")
                .edit(
                        cm -> {
                            cm.getData().put("ca.crt", "-----BEGIN CERTIFICATE-----");
                            return cm;
                        });
        status = awaitStatus("ca-configmap", s -> s.getPhase() == Phase.INITIALIZING);
        assertThat(condition(status, ConditionTypes.TARGET_READY, "status")).isEqualTo("True");
    }

    @Test
    void semanticallyInvalidSpecFailsWithAMessageAndAWarningEvent() {
        service("vllm", true);
        create("too-many-runners", 30, "");
        BenchmarkRunStatus status =
                awaitStatus("too-many-runners", s -> s.getPhase() == Phase.FAILED);
        assertThat(status.getMessage())
                .contains("spec.load.numPrompts: 20 is lower than spec.runner.parallelism 30");
        assertThat(condition(status, ConditionTypes.COMPLETED, "reason")).isEqualTo("InvalidSpec");
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                warnings().stream()
                                        .anyMatch(e -> e.getReason().equals("InvalidSpec")));
        assertThat(client.batch().v1().jobs().inNamespace(namespace).list().getItems()).isEmpty();
    }

    @Test
    void fullLifecycleWithBarriersProducesOneProfilePerStage() throws Exception {
        service("vllm", true);
        BenchmarkRun run = create("sweep", 2, "");
        String uid = run.getMetadata().getUid();

        BenchmarkRunStatus status = awaitStatus("sweep", s -> s.getPhase() == Phase.INITIALIZING);
        assertThat(condition(status, ConditionTypes.TARGET_READY, "status")).isEqualTo("True");
        Job job = awaitJob("sweep-runner");
        assertThat(job.getSpec().getParallelism()).isEqualTo(2);
        assertThat(job.getSpec().getCompletionMode()).isEqualTo("Indexed");
        assertThat(job.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(uid));
        ConfigMap workOrder =
                client.configMaps().inNamespace(namespace).withName("sweep-runner").get();
        RunnerWorkOrder order =
                json.readValue(workOrder.getData().get(RunnerWorkOrder.KEY), RunnerWorkOrder.class);
        assertThat(order.baseUrl()).isEqualTo("http://vllm." + namespace + ".svc:8000");
        ConfigMap control =
                client.configMaps().inNamespace(namespace).withName("sweep-control").get();
        assertThat(control.getData()).doesNotContainKey(RunnerWorkOrder.stageStartKey(1));

        // Runners report ready at the start barrier.
        for (int i = 0; i < 2; i++) {
            writePart(run, i, Map.of(PartReport.STATE, PartReport.STATE_READY));
        }
        status = awaitStatus("sweep", s -> s.getPhase() == Phase.RUNNING);
        assertThat(condition(status, ConditionTypes.RUNNERS_READY, "status")).isEqualTo("True");
        assertThat(status.getStageStartTimes()).hasSize(1);
        assertThat(status.getStage()).isEqualTo("1/2");
        String stageOneStart = status.getStageStartTimes().getFirst();
        // Later part events must not move a barrier that runners may already have read.
        writePart(run, 0, Map.of(PartReport.STATE, PartReport.STATE_RUNNING));
        writePart(run, 1, Map.of(PartReport.STATE, PartReport.STATE_RUNNING));
        Thread.sleep(1500);
        assertThat(get("sweep").getStatus().getStageStartTimes()).containsExactly(stageOneStart);
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                client.configMaps()
                                        .inNamespace(namespace)
                                        .withName("sweep-control")
                                        .get()
                                        .getData()
                                        .containsKey(RunnerWorkOrder.stageStartKey(1)));
        assertThat(
                        client.configMaps()
                                .inNamespace(namespace)
                                .withName("sweep-control")
                                .get()
                                .getData()
                                .get(RunnerWorkOrder.stageStartKey(1)))
                .isEqualTo(stageOneStart);

        // Live progress reaches the operator metrics (what /q/metrics serves).
        writePart(
                run,
                0,
                Map.of(
                        PartReport.STATE,
                        PartReport.STATE_RUNNING,
                        PartReport.PROGRESS,
                        "{\"stage\":1,\"completed\":4,\"failed\":0,\"inFlight\":1,"
                                + "\"achievedRate\":2.5,\"ttftP50Ms\":40.0}"));
        writePart(
                run,
                1,
                Map.of(
                        PartReport.STATE,
                        PartReport.STATE_RUNNING,
                        PartReport.PROGRESS,
                        "{\"stage\":1,\"completed\":3,\"failed\":0,\"inFlight\":1,"
                                + "\"achievedRate\":2.0,\"ttftP50Ms\":60.0}"));
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> {
                            assertThat(runGauge(RunMetrics.LIVE_RPS, "sweep")).isEqualTo(4.5);
                            assertThat(runGauge(RunMetrics.LIVE_TTFT_P50, "sweep")).isEqualTo(0.05);
                        });
        assertThat(runGauge(RunMetrics.STAGE, "sweep")).isEqualTo(1.0);
        assertThat(runGauge(RunMetrics.STAGES, "sweep")).isEqualTo(2.0);
        assertThat(runGauge(RunMetrics.LIVE_REQUESTED_RPS, "sweep")).isEqualTo(5.0);
        assertThat(phaseGauge(Phase.RUNNING)).isGreaterThanOrEqualTo(1.0);

        // Both finish stage 1: the operator opens the stage-2 barrier.
        for (int i = 0; i < 2; i++) {
            writePart(run, i, stageDone(1, i, 2.5, uid));
        }
        status =
                awaitStatus(
                        "sweep",
                        s -> s.getStageStartTimes() != null && s.getStageStartTimes().size() == 2);
        assertThat(status.getStage()).isEqualTo("2/2");
        assertThat(status.getResults()).hasSize(1);

        for (int i = 0; i < 2; i++) {
            Map<String, String> data = new LinkedHashMap<>(stageDone(1, i, 2.5, uid));
            data.putAll(stageDone(2, i, 5.0, uid));
            RunParts.finishRun(client, run, i, data);
        }
        status = awaitStatus("sweep", s -> s.getPhase() == Phase.SUCCEEDED);
        assertThat(status.getProfiles()).hasSize(2);
        assertThat(status.getResults()).hasSize(2);
        assertThat(status.getResults().get(0).getCompleted()).isEqualTo(20L);
        assertThat(status.getResults().get(1).getRequestRate()).isEqualTo(10.0);
        assertThat(status.getResults().get(0).getStatistics()).isEqualTo("merged");
        assertThat(status.getProfiles().get(0).at("/metrics/num_prompts").asLong()).isEqualTo(20);
        assertThat(condition(status, ConditionTypes.COMPLETED, "status")).isEqualTo("True");
        // 10.1.2.3 serves nothing: the run succeeds, but says its server metrics are missing.
        assertThat(condition(status, ConditionTypes.SERVER_METRICS_COLLECTED, "reason"))
                .isEqualTo("ScrapesFailed");
        assertThat(status.getSummary().getRps()).isNotBlank();
        assertThat(status.getProgress().getDone()).isEqualTo("40/40");
        // A finished run leaves the per-run series and counts under its phase.
        await().atMost(Duration.ofSeconds(2 * RunMetrics.SWEEP_SECONDS + 5))
                .untilAsserted(
                        () -> {
                            assertThat(runGaugeOrNull(RunMetrics.STAGE, "sweep")).isNull();
                            assertThat(phaseGauge(Phase.SUCCEEDED)).isGreaterThanOrEqualTo(1.0);
                        });

        ConfigMap profiles =
                await().atMost(Duration.ofSeconds(30))
                        .until(
                                () ->
                                        client.configMaps()
                                                .inNamespace(namespace)
                                                .withName(ResourceNames.profile("sweep"))
                                                .get(),
                                java.util.Objects::nonNull);
        assertThat(profiles.getData().keySet())
                .containsExactlyInAnyOrder(
                        status.getResults().get(0).getProfileKey(),
                        status.getResults().get(1).getProfileKey());
        assertThat(status.getResults().get(0).getProfileKey())
                .matches("vllm-5\\.0qps-gemma-7b-\\d{8}-\\d{6}\\.json");
        // Cleanup policy OnSuccess removes the runner Job after success.
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.batch()
                                                .v1()
                                                .jobs()
                                                .inNamespace(namespace)
                                                .withName("sweep-runner")
                                                .get()
                                        == null);
    }

    @Test
    void serverMetricsFromAUrlTargetLandInTheProfile() throws Exception {
        com.sun.net.httpserver.HttpServer server =
                com.sun.net.httpserver.HttpServer.create(
                        new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        java.util.concurrent.atomic.AtomicInteger scrapes =
                new java.util.concurrent.atomic.AtomicInteger();
        server.createContext(
                "/",
                exchange -> {
                    byte[] body;
                    if (exchange.getRequestURI().getPath().equals("/metrics")) {
                        scrapes.incrementAndGet();
                        body =
                                ("# TYPE vllm:num_requests_running gauge\n"
                                                + "vllm:num_requests_running{model_name=\"m\"} 3\n"
                                                + "# TYPE vllm:num_requests_waiting gauge\n"
                                                + "vllm:num_requests_waiting{model_name=\"m\"} 1\n")
                                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
                        exchange.getResponseHeaders()
                                .add("Content-Type", "text/plain; version=0.0.4");
                    } else {
                        body = "ok".getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    }
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                    exchange.close();
                });
        server.start();
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort();
            BenchmarkRun run =
                    client.getKubernetesSerialization()
                            .unmarshal(
                                    """
                                    apiVersion: inferencebench.io/v1alpha1
                                    kind: BenchmarkRun
                                    metadata: {name: scraped}
                                    spec:
                                      target: {url: "%s", model: m}
                                      load: {requestRates: [5], numPrompts: 10}
                                      metrics: {interval: 200ms}
                                    """
                                            .formatted(url),
                                    BenchmarkRun.class);
            run =
                    client.resources(BenchmarkRun.class)
                            .inNamespace(namespace)
                            .resource(run)
                            .create();
            Instant stageStart = RunParts.startStage(cluster, run);
            // A runner finishes its stage only after the start barrier: let the window run 1.5 s.
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> Instant.now().isAfter(stageStart.plusMillis(1500)));
            assertThat(scrapes.get()).isGreaterThanOrEqualTo(3);
            RunParts.finishRun(client, run, 0, stageDone(1, 0, 5.0, run.getMetadata().getUid()));
            BenchmarkRunStatus status =
                    awaitStatus("scraped", s -> s.getPhase() == Phase.SUCCEEDED);
            assertThat(condition(status, ConditionTypes.SERVER_METRICS_COLLECTED, "status"))
                    .as("%s", status.condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                    .isEqualTo("True");
            assertThat(
                            status.getProfiles()
                                    .getFirst()
                                    .at("/metrics/server_metrics/vllm:num_requests_running/Mean")
                                    .asText())
                    .isEqualTo("3");
            assertThat(status.getResults().getFirst().getStatistics()).isEqualTo("exact");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void failedRunnerJobFailsTheRunAndCancelStopsAnother() {
        service("vllm", true);
        create("job-fails", 1, "");
        awaitStatus("job-fails", s -> s.getPhase() == Phase.INITIALIZING);
        Job job = awaitJob("job-fails-runner");
        job.setStatus(new JobStatusBuilder().withFailed(1).build());
        client.batch().v1().jobs().inNamespace(namespace).resource(job).updateStatus();
        BenchmarkRunStatus failed = awaitStatus("job-fails", s -> s.getPhase() == Phase.FAILED);
        assertThat(failed.getMessage()).contains("runner Job job-fails-runner failed");
        assertThat(condition(failed, ConditionTypes.COMPLETED, "reason")).isEqualTo("RunnerFailed");

        create("cancel-me", 1, "");
        awaitStatus("cancel-me", s -> s.getPhase() == Phase.INITIALIZING);
        client.resources(BenchmarkRun.class)
                .inNamespace(namespace)
                .withName("cancel-me")
                .edit(
                        r -> {
                            r.getSpec().setCancel(true);
                            return r;
                        });
        BenchmarkRunStatus cancelled =
                awaitStatus("cancel-me", s -> s.getPhase() == Phase.CANCELLED);
        assertThat(condition(cancelled, ConditionTypes.COMPLETED, "reason")).isEqualTo("Cancelled");
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                "true"
                                        .equals(
                                                client.configMaps()
                                                        .inNamespace(namespace)
                                                        .withName("cancel-me-control")
                                                        .get()
                                                        .getData()
                                                        .get(RunnerWorkOrder.CANCEL_KEY)));
    }

    @Test
    void timeoutsFailTheRunWithTheirReasonAndTtlDeletesIt() {
        service("vllm", false);
        createSpec(
                "never-ready",
                """
                target: {service: {name: vllm, port: 8000}, readinessTimeout: 1s}
                load: {requestRates: [1], numPrompts: 5}
                ttlSecondsAfterFinished: 2
                """);
        BenchmarkRunStatus failed = awaitStatus("never-ready", s -> s.getPhase() == Phase.FAILED);
        assertThat(condition(failed, ConditionTypes.COMPLETED, "reason"))
                .isEqualTo("TargetNotReady");
        assertThat(failed.getMessage()).contains("spec.target.readinessTimeout 1s");
        assertThat(failed.getCompletionTime()).isNotNull();
        await().atMost(Duration.ofSeconds(20)).until(() -> get("never-ready") == null);

        service("ready", true);
        createSpec(
                "runners-late",
                """
                target: {service: {name: ready, port: 8000}}
                load: {requestRates: [1], numPrompts: 5}
                runner: {startTimeout: 1s, cleanupPolicy: Always}
                """);
        BenchmarkRunStatus late = awaitStatus("runners-late", s -> s.getPhase() == Phase.FAILED);
        assertThat(condition(late, ConditionTypes.COMPLETED, "reason"))
                .isEqualTo("RunnersNotReady");
        assertThat(condition(late, ConditionTypes.RUNNERS_READY, "reason"))
                .isEqualTo("StartTimeout");
        assertThat(late.getMessage()).contains("0 of 1 runner pod(s) ready");
        // cleanupPolicy Always removes the runner Job after the failure.
        await().atMost(Duration.ofSeconds(20))
                .until(
                        () ->
                                client.batch()
                                                .v1()
                                                .jobs()
                                                .inNamespace(namespace)
                                                .withName("runners-late-runner")
                                                .get()
                                        == null);
    }

    @Test
    void runnerPodTemplateIsAdmittedByPodSecurityRestricted() {
        String restricted = namespace + "-restricted";
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(restricted)
                                .addToLabels("pod-security.kubernetes.io/enforce", "restricted")
                                .addToLabels("pod-security.kubernetes.io/enforce-version", "latest")
                                .endMetadata()
                                .build())
                .create();
        BenchmarkRun run = TestRuns.sweep();
        run.getMetadata().setNamespace(restricted);
        run.getSpec().getRunner().setParallelism(2);
        Job job =
                io.inferencebench.operator.dependent.RunnerJobDependent.desired(
                        run, new RunnerDefaults("example/runner:1", "IfNotPresent"));
        io.fabric8.kubernetes.api.model.Pod pod =
                new io.fabric8.kubernetes.api.model.PodBuilder()
                        .withMetadata(job.getSpec().getTemplate().getMetadata())
                        .editMetadata()
                        .withName("sweep-runner-0-test")
                        .withNamespace(restricted)
                        .endMetadata()
                        .withSpec(job.getSpec().getTemplate().getSpec())
                        .build();
        // Pod Security admission runs in the API server itself: a violation is a 403 here.
        var created = client.pods().inNamespace(restricted).resource(pod).create();
        assertThat(created.getMetadata().getUid()).isNotBlank();

        // The same check rejects a privileged variant, so the assertion above can fail.
        io.fabric8.kubernetes.api.model.Pod privileged =
                new io.fabric8.kubernetes.api.model.PodBuilder(pod)
                        .editMetadata()
                        .withName("privileged")
                        .endMetadata()
                        .editSpec()
                        .editFirstContainer()
                        .editSecurityContext()
                        .withPrivileged(true)
                        .endSecurityContext()
                        .endContainer()
                        .endSpec()
                        .build();
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> client.pods().inNamespace(restricted).resource(privileged).create())
                .hasMessageContaining("restricted");
    }

    @Test
    void applyToRunnerJobLatency() {
        service("vllm", true);
        List<Long> millis = new ArrayList<>();
        int runs = Integer.getInteger("inferencebench.latency.runs", 10);
        for (int i = 0; i < runs; i++) {
            String name = "latency-" + i;
            long start = System.nanoTime();
            create(name, 1, "");
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10))
                    .until(
                            () ->
                                    client.batch()
                                                    .v1()
                                                    .jobs()
                                                    .inNamespace(namespace)
                                                    .withName(name + "-runner")
                                                    .get()
                                            != null);
            millis.add((System.nanoTime() - start) / 1_000_000);
        }
        millis.sort(Long::compare);
        System.out.println(
                "apply -> runner Job created, ms (sorted, "
                        + runs
                        + " runs): p50="
                        + millis.get(millis.size() / 2)
                        + " p99="
                        + millis.get((int) Math.ceil(millis.size() * 0.99) - 1)
                        + " all="
                        + millis);
        assertThat(millis.get(millis.size() / 2)).isLessThan(5_000);
    }

    private Double runGaugeOrNull(String name, String run) {
        Gauge gauge = meters.find(name).tag("namespace", namespace).tag("name", run).gauge();
        return gauge == null ? null : gauge.value();
    }

    private double runGauge(String name, String run) {
        Double value = runGaugeOrNull(name, run);
        assertThat(value).as("%s{namespace=%s,name=%s}", name, namespace, run).isNotNull();
        return value;
    }

    private double phaseGauge(Phase phase) {
        return meters.get(RunMetrics.RUNS).tag("phase", phase.wireName()).gauge().value();
    }

    private List<Event> warnings() {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> "Warning".equals(e.getType()))
                .toList();
    }

    @Test
    void theModelDiscoveredByTheRunnersReachesStatusAndProfiles() throws Exception {
        service("vllm", true);
        String yaml =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: discovered}
                spec:
                  target: {service: {name: vllm, port: 8000}}
                  load: {requestRates: [5], numPrompts: 10, cooldown: 0s}
                """;
        BenchmarkRun run =
                client.resources(BenchmarkRun.class)
                        .inNamespace(namespace)
                        .resource(
                                client.getKubernetesSerialization()
                                        .unmarshal(yaml, BenchmarkRun.class))
                        .create();
        String uid = run.getMetadata().getUid();
        awaitStatus("discovered", s -> s.getPhase() == Phase.INITIALIZING);
        writePart(
                run,
                0,
                Map.of(
                        PartReport.STATE,
                        PartReport.STATE_READY,
                        PartReport.MODEL,
                        "acme/found-by-runner-7b"));
        BenchmarkRunStatus status = awaitStatus("discovered", s -> s.getPhase() == Phase.RUNNING);
        assertThat(status.getModel()).isEqualTo("acme/found-by-runner-7b");
        Map<String, String> data = new LinkedHashMap<>(stageDone(1, 0, 2.5, uid));
        data.put(PartReport.STATE, PartReport.STATE_DONE);
        data.put(PartReport.MODEL, "acme/found-by-runner-7b");
        writePart(run, 0, data);
        status = awaitStatus("discovered", s -> s.getPhase() == Phase.SUCCEEDED);
        assertThat(status.getProfiles().get(0).at("/dimensions/model_id").asText())
                .isEqualTo("acme/found-by-runner-7b");
        assertThat(status.getProfiles().get(0).at("/config/model").asText())
                .isEqualTo("acme/found-by-runner-7b");
        assertThat(status.getResults().get(0).getProfileKey())
                .matches("vllm-2\\.5qps-found-by-runner-7b-\\d{8}-\\d{6}\\.json");
    }

    @Test
    void aStageWithTooManyFailedRequestsDidNotDeliverItsLoad() throws Exception {
        service("vllm", true);
        BenchmarkRun run = create("failing", 1, "");
        String uid = run.getMetadata().getUid();
        RunParts.startStage(cluster, run);
        writePart(run, 0, stageDone(1, 0, 2.5, uid));
        awaitStatus(
                "failing",
                s -> s.getStageStartTimes() != null && s.getStageStartTimes().size() == 2);
        Map<String, String> data = new LinkedHashMap<>(stageDone(1, 0, 2.5, uid));
        // Stage 2: 10 answered, 18 rate-limited: 64 % failed.
        Map<String, String> second = new LinkedHashMap<>(stageDone(2, 0, 2.5, uid));
        editStageResult(
                second,
                2,
                failing -> {
                    for (int i = 0; i < 18; i++) {
                        failing.countFailure("http_429");
                    }
                    failing.sent += 18;
                });
        data.putAll(second);
        RunParts.finishRun(client, run, 0, data);
        BenchmarkRunStatus status = awaitStatus("failing", s -> s.getPhase() == Phase.SUCCEEDED);
        assertThat(status.getResults().get(0).getLoadDelivered()).isTrue();
        assertThat(status.getResults().get(1).getLoadDelivered()).isFalse();
        assertThat(status.getResults().get(1).getFailureRatio()).isCloseTo(18 / 28.0, within(1e-9));
        assertThat(status.getResults().get(1).getErrorsByClass())
                .containsExactly(entry("http_429", 18L));
        var delivered = status.condition(ConditionTypes.LOAD_DELIVERED).orElseThrow();
        assertThat(delivered.getStatus()).isEqualTo("False");
        assertThat(delivered.getReason()).isEqualTo("TooManyFailures");
        assertThat(delivered.getMessage())
                .contains("stage 2: 64.3 % of requests failed (http_429: 18)")
                .contains("spec.load.maxFailureRatio 0.10");
    }

    @Test
    void aRunnerOutOfCpuDidNotDeliverItsLoad() throws Exception {
        service("vllm", true);
        BenchmarkRun run = create("starved", 2, "");
        String uid = run.getMetadata().getUid();
        RunParts.startStage(cluster, run, 2);
        List<Map<String, String>> firstStage = new ArrayList<>();
        for (int index = 0; index < 2; index++) {
            Map<String, String> data = new LinkedHashMap<>(stageDone(1, index, 2.5, uid));
            // runner 1's threads waited for a CPU 2.9 s of the 4 s stage; runner 0 had enough
            RunnerCpu cpu = new RunnerCpu();
            cpu.runner = index;
            cpu.cpuSeconds = index == 1 ? 1.1 : 0.2;
            cpu.wallSeconds = 4.0;
            cpu.availableCpus = 2;
            cpu.runQueueWaitSeconds = index == 1 ? 2.9 : 0.05;
            editStageResult(data, 1, result -> result.runnerCpu = cpu);
            firstStage.add(data);
            writePart(run, index, data);
        }
        awaitStatus(
                "starved",
                s -> s.getStageStartTimes() != null && s.getStageStartTimes().size() == 2);
        for (int index = 0; index < 2; index++) {
            Map<String, String> data = new LinkedHashMap<>(firstStage.get(index));
            data.putAll(stageDone(2, index, 5, uid));
            RunParts.finishRun(client, run, index, data);
        }
        BenchmarkRunStatus status = awaitStatus("starved", s -> s.getPhase() == Phase.SUCCEEDED);
        var stage = status.getResults().get(0);
        assertThat(stage.getLoadDelivered()).isFalse();
        assertThat(stage.getLoadDeliveredReason()).isEqualTo("RunnerSaturated");
        var delivered = status.condition(ConditionTypes.LOAD_DELIVERED).orElseThrow();
        assertThat(delivered.getStatus()).isEqualTo("False");
        assertThat(delivered.getReason()).isEqualTo("RunnerSaturated");
        assertThat(delivered.getMessage())
                .startsWith(
                        "stage 1: runner 1 ran out of its 2 CPU: its threads waited 2.90 s for a CPU in"
                                + " 4.00 s")
                .endsWith("results are not a valid measurement of the requested load");
    }

    private Map<String, String> stageDone(int stage, int index, double rateShare, String uid) {
        StageResult result =
                RunParts.completedStage(
                        stage,
                        rateShare,
                        10,
                        RunParts.epochNanos(
                                Instant.parse("2026-11-29T12:00:00Z").plusSeconds(stage * 60L)),
                        3_600_000_000L,
                        4_000_000_000L);
        RunParts.recordSteadyRequests(result, index);
        return RunParts.report(PartReport.STATE_RUNNING, stage, uid, result);
    }

    private void writePart(BenchmarkRun run, int index, Map<String, String> data) {
        RunParts.write(client, run, index, data);
    }
}
