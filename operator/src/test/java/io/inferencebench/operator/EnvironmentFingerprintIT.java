package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.TargetImage;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.profile.lpg.StageResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * status.environment and the profiles' environment keys on a real kube-apiserver + etcd: the target
 * pod and its GPU node are objects the test creates (pod status written through the status
 * subresource, as a kubelet would), the server is a loopback HTTP server answering /version.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EnvironmentFingerprintIT {

    static final String DIGEST =
            "docker.io/vllm/vllm-openai@sha256:"
                    + "5f2ab1b4c6f18a0b5d9f3c1e2b7a8c4d6e0f1a2b3c4d5e6f708192a3b4c5d6e7";

    private OperatorTestCluster cluster;
    private KubernetesClient client;
    private HttpServer server;
    private String hostAddress;
    private String namespace;

    @BeforeAll
    void start() throws Exception {
        // EndpointSlices refuse loopback addresses: the server listens on this machine's own
        // non-loopback address, which the endpoint then names.
        hostAddress = nonLoopbackAddress();
        server = HttpServer.create(new InetSocketAddress(hostAddress, 0), 0);
        server.createContext(
                "/version",
                exchange -> {
                    byte[] body = "{\"version\":\"0.9.1-it\"}".getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().add("Content-Type", "application/json");
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                    exchange.close();
                });
        server.start();
        cluster =
                OperatorTestCluster.startWithRunOperator(
                        new SimpleMeterRegistry(), RunAdmission.fromConfig());
        client = cluster.client();
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    private static String nonLoopbackAddress() throws java.net.SocketException {
        for (java.net.NetworkInterface nic :
                java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (java.net.InetAddress address :
                    java.util.Collections.list(nic.getInetAddresses())) {
                if (address instanceof java.net.Inet4Address && !address.isLinkLocalAddress()) {
                    return address.getHostAddress();
                }
            }
        }
        throw new IllegalStateException(
                "this test needs a non-loopback IPv4 address (EndpointSlices refuse loopback)");
    }

    private int port() {
        return server.getAddress().getPort();
    }

    private void targetPodOnAGpuNode(String pod, String node) {
        client.nodes()
                .resource(
                        new NodeBuilder()
                                .withNewMetadata()
                                .withName(node)
                                .addToLabels("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3")
                                .addToLabels("nvidia.com/gpu.count", "8")
                                .endMetadata()
                                .build())
                .create();
        Pod created =
                client.pods()
                        .inNamespace(namespace)
                        .resource(
                                new PodBuilder()
                                        .withNewMetadata()
                                        .withName(pod)
                                        .endMetadata()
                                        .withNewSpec()
                                        .withNodeName(node)
                                        .addNewContainer()
                                        .withName("proxy")
                                        .withImage("envoyproxy/envoy:v1.31.0")
                                        .endContainer()
                                        .addNewContainer()
                                        .withName("server")
                                        .withImage("vllm/vllm-openai:v0.9.1")
                                        .withCommand("vllm", "serve")
                                        .withArgs(
                                                "google/gemma-7b",
                                                "--tensor-parallel-size",
                                                "2",
                                                "--max-num-seqs",
                                                "256")
                                        .addNewPort()
                                        .withContainerPort(port())
                                        .endPort()
                                        .withNewResources()
                                        .addToLimits("nvidia.com/gpu", new Quantity("2"))
                                        .endResources()
                                        .endContainer()
                                        .endSpec()
                                        .build())
                        .create();
        // What the kubelet reports: the digest the node resolved the tag to.
        created.setStatus(
                new io.fabric8.kubernetes.api.model.PodStatusBuilder()
                        .withPhase("Running")
                        .withContainerStatuses(
                                new ContainerStatusBuilder()
                                        .withName("server")
                                        .withImage("docker.io/vllm/vllm-openai:v0.9.1")
                                        .withImageID(DIGEST)
                                        .withReady(true)
                                        .withRestartCount(0)
                                        .build(),
                                new ContainerStatusBuilder()
                                        .withName("proxy")
                                        .withImage("docker.io/envoyproxy/envoy:v1.31.0")
                                        .withImageID(
                                                "docker.io/envoyproxy/envoy@sha256:"
                                                        + "0123456789abcdef0123456789abcdef"
                                                        + "0123456789abcdef0123456789abcdef")
                                        .withReady(true)
                                        .withRestartCount(0)
                                        .build())
                        .build());
        client.pods().inNamespace(namespace).resource(created).updateStatus();
    }

    private EndpointSlice slice(int readyEndpoints) {
        List<io.fabric8.kubernetes.api.model.discovery.v1.Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < readyEndpoints; i++) {
            endpoints.add(
                    new EndpointBuilder()
                            // Only the first endpoint is asked for /version.
                            .withAddresses(i == 0 ? hostAddress : "198.51.100." + (i + 1))
                            .withNewConditions()
                            .withReady(true)
                            .endConditions()
                            .withNewTargetRef()
                            .withKind("Pod")
                            .withName(i == 0 ? "vllm-0" : "vllm-" + i)
                            .withNamespace(namespace)
                            .endTargetRef()
                            .build());
        }
        return new EndpointSliceBuilder()
                .withNewMetadata()
                .withName("vllm-1")
                .withNamespace(namespace)
                .addToLabels(Labels.ENDPOINT_SLICE_SERVICE, "vllm")
                .endMetadata()
                .withAddressType("IPv4")
                .withEndpoints(endpoints)
                .addNewPort()
                .withName("http")
                .withPort(port())
                .endPort()
                .build();
    }

    private BenchmarkRunStatus awaitStatus(String name, Predicate<BenchmarkRunStatus> predicate) {
        return cluster.awaitRunStatus(namespace, name, predicate);
    }

    @Test
    void statusAndProfilesRecordImagesDigestsVersionArgsGpusAndReadyReplicas() throws Exception {
        namespace = cluster.createRunNamespace("env-");
        targetPodOnAGpuNode("vllm-0", "gpu-node-" + namespace);
        client.services()
                .inNamespace(namespace)
                .resource(
                        new ServiceBuilder()
                                .withNewMetadata()
                                .withName("vllm")
                                .endMetadata()
                                .withNewSpec()
                                .addNewPort()
                                .withName("http")
                                .withPort(8000)
                                .endPort()
                                .endSpec()
                                .build())
                .create();
        client.discovery().v1().endpointSlices().inNamespace(namespace).resource(slice(1)).create();
        BenchmarkRun run =
                cluster.createRun(
                        namespace,
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkRun
                        metadata: {name: fingerprinted}
                        spec:
                          target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                          load: {requestRates: [5], numPrompts: 10, cooldown: 0s}
                          metrics: {enabled: false}
                        """);

        EnvironmentStatus env =
                awaitStatus("fingerprinted", s -> s.getPhase() == Phase.INITIALIZING)
                        .getEnvironment();
        assertThat(env.getImages())
                .containsExactlyInAnyOrder(
                        new TargetImage("vllm-0", "server", "vllm/vllm-openai:v0.9.1", DIGEST),
                        new TargetImage(
                                "vllm-0",
                                "proxy",
                                "envoyproxy/envoy:v1.31.0",
                                "docker.io/envoyproxy/envoy@sha256:"
                                        + "0123456789abcdef0123456789abcdef"
                                        + "0123456789abcdef0123456789abcdef"));
        assertThat(env.getServerArgs())
                .as("the container serving the target port, not the first")
                .containsExactly(
                        "vllm",
                        "serve",
                        "google/gemma-7b",
                        "--tensor-parallel-size",
                        "2",
                        "--max-num-seqs",
                        "256");
        assertThat(env.getServerVersion()).isEqualTo("0.9.1-it");
        assertThat(env.getNodes()).containsExactly("gpu-node-" + namespace);
        assertThat(env.getGpuProduct()).isEqualTo("NVIDIA-H100-80GB-HBM3");
        assertThat(env.getGpuCount()).isEqualTo(8);
        assertThat(env.getGpuRequestsPerPod()).isEqualTo(2);
        assertThat(env.getReadyReplicas().getMin()).isEqualTo(1);
        assertThat(env.getReadyReplicas().getMax()).isEqualTo(1);

        Instant stageStart = RunParts.startStage(cluster, run);
        // A second replica becomes ready during the stage.
        await().atMost(Duration.ofSeconds(10)).until(() -> !Instant.now().isBefore(stageStart));
        client.discovery().v1().endpointSlices().inNamespace(namespace).resource(slice(2)).update();
        BenchmarkRunStatus sampled =
                awaitStatus(
                        "fingerprinted", s -> s.getEnvironment().getReadyReplicas().getMax() == 2);
        assertThat(sampled.getEnvironment().getReadyReplicas().getMin()).isEqualTo(1);
        List<String> changes = sampled.getEnvironment().getReadyReplicas().getChanges();
        assertThat(changes).hasSize(2);
        assertThat(changes.getFirst()).endsWith("=1");
        assertThat(changes.getLast()).endsWith("=2");

        RunParts.finishRun(client, run, 0, stageDone(run.getMetadata().getUid()));
        BenchmarkRunStatus done =
                awaitStatus("fingerprinted", s -> s.getPhase() == Phase.SUCCEEDED);
        JsonNode profile = done.getProfiles().getFirst();
        assertThat(profile.at("/dimensions/server_version").asText()).isEqualTo("0.9.1-it");
        assertThat(profile.at("/dimensions/gpu_product").asText())
                .isEqualTo("NVIDIA-H100-80GB-HBM3");
        assertThat(profile.at("/dimensions/gpu_count").asInt()).isEqualTo(8);
        assertThat(profile.at("/config/gpu_requests_per_pod").asInt()).isEqualTo(2);
        assertThat(profile.at("/config/server_args").toString()).contains("--tensor-parallel-size");
        assertThat(profile.at("/config/target_images").findValuesAsText("image_id"))
                .contains(DIGEST);
        JsonNode ready = profile.at("/config/ready_replicas");
        assertThat(ready.path("min").asInt()).isEqualTo(1);
        assertThat(ready.path("max").asInt()).isEqualTo(2);
        List<String> series = new ArrayList<>();
        ready.path("series")
                .forEach(p -> series.add(p.path("time").asText() + "=" + p.path("ready").asInt()));
        // The profile's series is the status' record of what the operator saw.
        assertThat(series).isEqualTo(changes);
        // The output ConfigMap carries the same document.
        ConfigMap output =
                client.configMaps()
                        .inNamespace(namespace)
                        .withName(done.getProfileConfigMap())
                        .get();
        assertThat(output.getData().values().iterator().next()).contains("0.9.1-it");
    }

    private Map<String, String> stageDone(String uid) {
        StageResult result =
                RunParts.completedStage(
                        1,
                        5,
                        10,
                        RunParts.epochNanos(Instant.parse("2026-11-29T12:00:00Z")),
                        1_800_000_000L,
                        2_000_000_000L);
        RunParts.recordSteadyRequests(result, 0);
        return RunParts.report(PartReport.STATE_DONE, 1, uid, result);
    }
}
