package io.inferencebench.e2e.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.e2e.HttpGet;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.e2e.PodYaml;
import io.inferencebench.e2e.ProjectImages;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.testkit.HostState;
import io.inferencebench.testkit.MachineLock;
import io.inferencebench.testkit.RealNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Smoke test of {@link RealNode}: the control plane plus a real kubelet, containerd, kube-proxy and
 * CoreDNS run the project's own images — the simulator behind a ClusterIP Service answers the host
 * and, by DNS name, other pods; the runner image benchmarks it as a Job — and the host is left as
 * it was. Part of the E2E tier of {@code make test} ({@code make e2e-node} runs the real-node
 * classes alone); it needs root and {@code make images}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealNodeE2E {

    private static final String NS = "real-node";
    private static final Path NODE_DIR = Path.of("/var/tmp/inferencebench/node");

    private final Path repo = OperatorFixtures.findRepoRoot();
    private final ProjectImages images = ProjectImages.ofThisRepository();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private MachineLock machineLock;
    private Map<String, List<String>> hostBefore;
    private RealNode node;
    private KubernetesClient client;
    private String bridge;
    private long startMillis;

    @BeforeAll
    void startNode() {
        assertThat(System.getProperty("user.name"))
                .as("RealNodeE2E runs containerd and kubelet: run it as root")
                .isEqualTo("root");
        for (String image : List.of("runner", "model-sim")) {
            assertThat(tarball(image)).as("image tarball (built by `make images`)").exists();
        }
        // the lock first: another cluster's host state must not count as the "before"
        machineLock =
                MachineLock.acquire(MachineLock.file(), MachineLock.DEFAULT_WAIT, "RealNodeE2E");
        hostBefore = HostState.capture(NODE_DIR);
        long start = System.nanoTime();
        node = RealNode.start();
        startMillis = (System.nanoTime() - start) / 1_000_000;
        System.out.println(
                "[RealNodeE2E] node up in " + startMillis + " ms: " + node.startupPhases());
        client = node.adminClient();
        bridge = node.controlPlane().network().bridge();
        for (String image : List.of("runner", "model-sim")) {
            var imported = node.importImage(tarball(image));
            assertThat(imported.ok())
                    .as("ctr images import " + image + ": " + imported.output())
                    .isTrue();
        }
        client.resource(
                        """
                        apiVersion: v1
                        kind: Namespace
                        metadata:
                          name: %s
                          labels: {pod-security.kubernetes.io/enforce: restricted}
                        """
                                .formatted(NS))
                .serverSideApply();
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.serviceAccounts().inNamespace(NS).withName("default").get()
                                        != null);
    }

    @AfterAll
    void stopNode() {
        if (node != null) {
            // the node directory goes with close(): keep the component logs for a failure report
            Path logs = repo.resolve("e2e/target/real-node-logs");
            try {
                Files.createDirectories(logs);
                for (var log : node.logFiles().entrySet()) {
                    Files.copy(
                            log.getValue(),
                            logs.resolve(log.getKey() + ".log"),
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
                for (var log : node.controlPlane().logFiles().entrySet()) {
                    Files.copy(
                            log.getValue(),
                            logs.resolve(log.getKey() + ".log"),
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (java.io.IOException e) {
                System.err.println("[RealNodeE2E] copying logs: " + e);
            }
            node.close();
        }
        if (machineLock == null) {
            return;
        }
        Map<String, List<String>> after = HostState.capture(NODE_DIR);
        machineLock.close();
        System.out.println("[RealNodeE2E] host state after teardown: " + after);
        assertThat(HostState.differences(hostBefore, after))
                .as("host state before the node started vs after it stopped")
                .isEmpty();
        assertThat(NODE_DIR).as("node directory removed").doesNotExist();
        if (bridge != null) {
            assertThat(Path.of("/sys/class/net", bridge)).as("bridge removed").doesNotExist();
        }
    }

    @Test
    @Order(1)
    void nodeIsReadyWithTheRealKubeletAndContainerd() {
        Node n = client.nodes().withName(node.nodeName()).get();
        assertThat(n).isNotNull();
        assertThat(n.getStatus().getConditions())
                .filteredOn(c -> "Ready".equals(c.getType()))
                .extracting(NodeCondition::getStatus)
                .containsExactly("True");
        assertThat(n.getStatus().getNodeInfo().getKubeletVersion()).isEqualTo("v1.34.4");
        assertThat(n.getStatus().getNodeInfo().getContainerRuntimeVersion())
                .startsWith("containerd://");
        assertThat(n.getStatus().getAddresses())
                .anyMatch(
                        a ->
                                "InternalIP".equals(a.getType())
                                        && a.getAddress()
                                                .equals(node.controlPlane().apiServerHost()));
        assertThat(HostState.sysctl("net.ipv4.ip_forward"))
                .as("ip_forward as before (the CNI bridge has isGateway: false)")
                .isEqualTo(sysctlBefore("net.ipv4.ip_forward"));
    }

    @Test
    @Order(2)
    void simulatorPodBecomesReadyAndItsServiceAnswersTheHost() throws Exception {
        SimulatorDeployment.named("sim")
                .model("tiny")
                .timeToFirstToken(5)
                .interTokenLatency(1)
                .maxNumSeqs(64)
                .restricted(reference("model-sim"))
                .readinessPath("/v1/models")
                .limits("1", "256Mi")
                .create(client, NS);
        long start = System.nanoTime();
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                client
                                        .pods()
                                        .inNamespace(NS)
                                        .withLabel("app", "sim")
                                        .list()
                                        .getItems()
                                        .stream()
                                        .anyMatch(RealNodeE2E::ready));
        System.out.println(
                "[RealNodeE2E] simulator pod Ready in "
                        + (System.nanoTime() - start) / 1_000_000
                        + " ms");
        Pod pod = client.pods().inNamespace(NS).withLabel("app", "sim").list().getItems().get(0);
        assertThat(pod.getStatus().getPodIP())
                .startsWith(node.controlPlane().network().cidr().replaceAll("\\.0/24$", "."));
        Service svc = client.services().inNamespace(NS).withName("sim").get();
        String clusterIp = svc.getSpec().getClusterIP();
        // host -> ClusterIP (kube-proxy's nft rules) -> pod
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(250))
                .ignoreExceptions()
                .until(
                        () ->
                                HttpGet.get(http, "http://" + clusterIp + ":8000/v1/models")
                                                .statusCode()
                                        == 200);
        assertThat(HttpGet.get(http, "http://" + clusterIp + ":8000/v1/models").body())
                .contains("tiny");
        // the OpenAI API itself, through the Service: a completion with exactly the tokens asked
        // for, and the vLLM metrics that count it
        double servedBefore = successCount(clusterIp);
        HttpResponse<String> completion =
                http.send(
                        HttpRequest.newBuilder(
                                        URI.create("http://" + clusterIp + ":8000/v1/completions"))
                                .timeout(Duration.ofSeconds(10))
                                .header("Content-Type", "application/json")
                                .POST(
                                        HttpRequest.BodyPublishers.ofString(
                                                "{\"model\":\"tiny\",\"prompt\":\"hello there\","
                                                        + "\"max_tokens\":5,\"ignore_eos\":true}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(completion.statusCode()).as(completion.body()).isEqualTo(200);
        var answer = new com.fasterxml.jackson.databind.ObjectMapper().readTree(completion.body());
        assertThat(answer.path("choices").size()).as(completion.body()).isEqualTo(1);
        assertThat(answer.path("choices").get(0).path("text").asText()).isNotBlank();
        assertThat(answer.path("usage").path("completion_tokens").asInt()).isEqualTo(5);
        assertThat(answer.path("model").asText()).isEqualTo("tiny");
        assertThat(successCount(clusterIp) - servedBefore)
                .as("vllm:request_success_total on the simulator's /metrics")
                .isEqualTo(1.0);
        // and the container runs as the image's non-root user with the limits applied
        var id = node.ctr(List.of("-n", "k8s.io", "tasks", "ls"), Duration.ofSeconds(10));
        assertThat(id.output()).contains("RUNNING");
    }

    @Test
    @Order(3)
    void anotherPodReachesTheServiceByDnsNameAndOutsideNamesDoNotResolve() {
        String clusterIp =
                client.services().inNamespace(NS).withName("sim").get().getSpec().getClusterIP();
        String fqdn = "sim." + NS + ".svc.cluster.local";
        // getent (libc) resolves through the pod's resolv.conf, i.e. kube-dns -> CoreDNS.
        String script =
                "set -e; echo resolved: $(getent hosts sim | awk '{print $1}');"
                        + " echo fqdn: $(getent hosts "
                        + fqdn
                        + " | awk '{print $1}');"
                        + " if getent hosts example.com; then echo outside: resolved; else echo outside: none; fi;"
                        + " cat /etc/resolv.conf";
        Pod probe = runPod("dns-probe", List.of("sh", "-c", script));
        String log = client.pods().inNamespace(NS).withName(probe.getMetadata().getName()).getLog();
        assertThat(probe.getStatus().getPhase()).as(log).isEqualTo("Succeeded");
        assertThat(log)
                .contains("resolved: " + clusterIp)
                .contains("fqdn: " + clusterIp)
                .contains("outside: none")
                .contains("nameserver " + node.dnsServiceIp())
                .contains("search " + NS + ".svc.cluster.local");
    }

    @Test
    @Order(4)
    void runnerImageBenchmarksTheServiceAsAJob() throws Exception {
        String clusterIp =
                client.services().inNamespace(NS).withName("sim").get().getSpec().getClusterIP();
        double before = successCount(clusterIp);
        client.resource(
                        """
                        apiVersion: batch/v1
                        kind: Job
                        metadata: {name: bench, namespace: %s}
                        spec:
                          backoffLimit: 0
                          template:
                            spec:
                              restartPolicy: Never
                              automountServiceAccountToken: false
                              %s
                              containers:
                              - name: runner
                                image: %s
                                imagePullPolicy: Never
                                args: [run, --base-url, "http://sim.%s.svc.cluster.local:8000", --backend, vllm,
                                       --random-input-len, "16", --random-output-len, "8",
                                       --request-rate, "20", --num-prompts, "30", --result-dir, /tmp/results]
                                resources:
                                  limits: {cpu: "1", memory: 768Mi}
                                %s
                                volumeMounts: [{name: tmp, mountPath: /tmp}]
                              volumes: [{name: tmp, emptyDir: {}}]
                        """
                                .formatted(
                                        NS,
                                        PodYaml.RESTRICTED_POD_SECURITY,
                                        reference("runner"),
                                        NS,
                                        PodYaml.RESTRICTED_CONTAINER_SECURITY))
                .serverSideApply();
        await().atMost(Duration.ofMinutes(4))
                .pollInterval(Duration.ofSeconds(1))
                .until(
                        () -> {
                            Job j =
                                    client.batch()
                                            .v1()
                                            .jobs()
                                            .inNamespace(NS)
                                            .withName("bench")
                                            .get();
                            return j.getStatus() != null
                                    && (nonZero(j.getStatus().getSucceeded())
                                            || nonZero(j.getStatus().getFailed()));
                        });
        Job job = client.batch().v1().jobs().inNamespace(NS).withName("bench").get();
        Pod pod =
                client.pods()
                        .inNamespace(NS)
                        .withLabel("job-name", "bench")
                        .list()
                        .getItems()
                        .get(0);
        String log = client.pods().inNamespace(NS).withName(pod.getMetadata().getName()).getLog();
        assertThat(job.getStatus().getSucceeded()).as("runner Job log:\n" + log).isEqualTo(1);
        // What the server itself counted, not what the client says it sent.
        assertThat(successCount(clusterIp) - before).isEqualTo(30.0);
    }

    private Pod runPod(String name, List<String> command) {
        StringBuilder cmd = new StringBuilder();
        for (String c : command) {
            cmd.append(cmd.isEmpty() ? "" : ", ")
                    .append('"')
                    .append(c.replace("\\", "\\\\").replace("\"", "\\\""))
                    .append('"');
        }
        client.resource(
                        """
                        apiVersion: v1
                        kind: Pod
                        metadata: {name: %s, namespace: %s}
                        spec:
                          restartPolicy: Never
                          automountServiceAccountToken: false
                          %s
                          containers:
                          - name: main
                            image: %s
                            imagePullPolicy: Never
                            command: [%s]
                            %s
                        """
                                .formatted(
                                        name,
                                        NS,
                                        PodYaml.RESTRICTED_POD_SECURITY,
                                        reference("runner"),
                                        cmd,
                                        PodYaml.RESTRICTED_CONTAINER_SECURITY))
                .serverSideApply();
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .until(
                        () -> {
                            String phase =
                                    client.pods()
                                            .inNamespace(NS)
                                            .withName(name)
                                            .get()
                                            .getStatus()
                                            .getPhase();
                            return "Succeeded".equals(phase) || "Failed".equals(phase);
                        });
        return client.pods().inNamespace(NS).withName(name).get();
    }

    private static boolean ready(Pod p) {
        return p.getStatus() != null
                && p.getStatus().getConditions() != null
                && p.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static boolean nonZero(Integer i) {
        return i != null && i > 0;
    }

    private String sysctlBefore(String name) {
        return hostBefore.get("sysctls").stream()
                .filter(l -> l.startsWith(name + " = "))
                .map(l -> l.substring(name.length() + 3))
                .findFirst()
                .orElse(null);
    }

    private double successCount(String clusterIp) throws Exception {
        return SimulatorDeployment.requestSuccesses(http, "http://" + clusterIp + ":8000/metrics");
    }

    private Path tarball(String image) {
        return images.tarball(image);
    }

    private String reference(String image) {
        return images.reference(image);
    }
}
