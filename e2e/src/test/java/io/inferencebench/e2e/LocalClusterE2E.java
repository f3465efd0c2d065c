package io.inferencebench.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.e2e.programs.HttpEcho;
import io.inferencebench.e2e.programs.InClusterProbe;
import io.inferencebench.e2e.programs.IndexProbe;
import io.inferencebench.testkit.ClusterDumpExtension;
import io.inferencebench.testkit.ImageMap;
import io.inferencebench.testkit.LocalCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The local control plane and local node, end to end, with real Kubernetes controllers. */
@ExtendWith({ClusterDumpExtension.class, LocalClusterE2E.DeleteNamespacesOnSuccess.class})
class LocalClusterE2E {

    private static final List<String> namespacesOfCurrentTest =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Deletes a passing test's namespaces so its pods stop competing for CPU with later tests; a
     * failing test's namespaces stay for the cluster dump.
     */
    static final class DeleteNamespacesOnSuccess
            implements org.junit.jupiter.api.extension.BeforeEachCallback,
                    org.junit.jupiter.api.extension.TestWatcher {
        @Override
        public void beforeEach(org.junit.jupiter.api.extension.ExtensionContext context) {
            namespacesOfCurrentTest.clear();
        }

        @Override
        public void testSuccessful(org.junit.jupiter.api.extension.ExtensionContext context) {
            for (String ns : namespacesOfCurrentTest) {
                client.namespaces().withName(ns).delete();
            }
        }
    }

    /** Runs {@code java -cp <test classpath> <args...>}: our test programs. */
    static final String PROGRAMS_IMAGE = "ib-test/java-programs:latest";

    static final String SHELL_IMAGE = "busybox:1.36";

    private static LocalCluster cluster;
    private static KubernetesClient client;

    @BeforeAll
    static void startCluster() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        cluster =
                LocalCluster.shared(
                        node ->
                                node.images(ImageMap.defaults())
                                        .image(
                                                PROGRAMS_IMAGE,
                                                ImageMap.Mapping.of(
                                                        java,
                                                        "-XX:TieredStopAtLevel=1",
                                                        "-XX:+UseSerialGC",
                                                        "-Xshare:auto",
                                                        "-cp",
                                                        classpath))
                                        .restartBackoff(Duration.ofSeconds(1)));
        client = cluster.client();
        System.out.println(
                "local cluster (control plane + node) ready in "
                        + cluster.startupTime().toMillis()
                        + " ms; control plane alone "
                        + cluster.controlPlane().startupTime().toMillis()
                        + " ms");
    }

    private static String newNamespace(String prefix) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 6);
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .build())
                .create();
        namespacesOfCurrentTest.add(name);
        // the ServiceAccount controller creates "default" asynchronously; pods need it
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.serviceAccounts().inNamespace(name).withName("default").get()
                                        != null);
        return name;
    }

    private static Pod pod(String namespace, String name) {
        return client.pods().inNamespace(namespace).withName(name).get();
    }

    private static boolean isReady(Pod pod) {
        return pod != null
                && pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
    }

    private static boolean jobCondition(Job job, String type) {
        return job != null
                && job.getStatus() != null
                && job.getStatus().getConditions() != null
                && job.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals(type) && c.getStatus().equals("True"));
    }

    @Test
    void indexedJobCompletesAndEachPodSeesItsIndexAndConfigMapFile() {
        String ns = newNamespace("indexed");
        client.configMaps()
                .inNamespace(ns)
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("probe-config")
                                .endMetadata()
                                .addToData("greeting", "hello-indexed\n")
                                .build())
                .create();
        Job job =
                new JobBuilder()
                        .withNewMetadata()
                        .withName("probe")
                        .endMetadata()
                        .withNewSpec()
                        .withCompletionMode("Indexed")
                        .withParallelism(2)
                        .withCompletions(2)
                        .withBackoffLimit(0)
                        .withNewTemplate()
                        .withNewSpec()
                        .withRestartPolicy("Never")
                        .addNewContainer()
                        .withName("probe")
                        .withImage(PROGRAMS_IMAGE)
                        .withArgs(IndexProbe.class.getName())
                        .addNewEnv()
                        .withName("POD_NAME")
                        .withNewValueFrom()
                        .withNewFieldRef()
                        .withFieldPath("metadata.name")
                        .endFieldRef()
                        .endValueFrom()
                        .endEnv()
                        .addNewEnv()
                        .withName("INDEX")
                        .withNewValueFrom()
                        .withNewFieldRef()
                        .withFieldPath(
                                "metadata.annotations['batch.kubernetes.io/job-completion-index']")
                        .endFieldRef()
                        .endValueFrom()
                        .endEnv()
                        .addNewVolumeMount()
                        .withName("config")
                        .withMountPath("/etc/probe")
                        .withReadOnly(true)
                        .endVolumeMount()
                        .endContainer()
                        .addNewVolume()
                        .withName("config")
                        .withNewConfigMap()
                        .withName("probe-config")
                        .endConfigMap()
                        .endVolume()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build();
        client.batch().v1().jobs().inNamespace(ns).resource(job).create();

        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                jobCondition(
                                        client.batch()
                                                .v1()
                                                .jobs()
                                                .inNamespace(ns)
                                                .withName("probe")
                                                .get(),
                                        "Complete"));

        Job done = client.batch().v1().jobs().inNamespace(ns).withName("probe").get();
        assertThat(done.getStatus().getSucceeded()).isEqualTo(2);
        assertThat(done.getStatus().getFailed()).isNull();
        List<Pod> pods =
                client.pods().inNamespace(ns).withLabel("job-name", "probe").list().getItems();
        assertThat(pods).hasSize(2);
        Set<String> indexes =
                pods.stream()
                        .map(
                                p ->
                                        p.getMetadata()
                                                .getAnnotations()
                                                .get("batch.kubernetes.io/job-completion-index"))
                        .collect(Collectors.toSet());
        assertThat(indexes).containsExactlyInAnyOrder("0", "1");
        for (Pod pod : pods) {
            String index =
                    pod.getMetadata()
                            .getAnnotations()
                            .get("batch.kubernetes.io/job-completion-index");
            String log = cluster.node().logs(ns, pod.getMetadata().getName(), "probe");
            assertThat(log)
                    .contains("pod=" + pod.getMetadata().getName())
                    .contains("index=" + index + " ")
                    .contains("jobIndex=" + index + " ")
                    .contains("greeting=hello-indexed")
                    .contains("sameViaRoot=true")
                    .contains("podIP=" + pod.getStatus().getPodIP());
            assertThat(pod.getStatus().getPhase()).isEqualTo("Succeeded");
            ContainerStateTerminated terminated =
                    pod.getStatus().getContainerStatuses().get(0).getState().getTerminated();
            assertThat(terminated.getExitCode()).isZero();
            assertThat(terminated.getReason()).isEqualTo("Completed");
            assertThat(terminated.getStartedAt()).isNotNull();
            assertThat(terminated.getFinishedAt()).isNotNull();
            assertThat(pod.getStatus().getHostIP()).isEqualTo(cluster.node().nodeIp());
        }
        assertThat(pods.stream().map(p -> p.getStatus().getPodIP()).distinct()).hasSize(2);
    }

    @Test
    void deploymentServiceGetsEndpointSlicesWithPodIpsAndPodsServeHttp() throws Exception {
        String ns = newNamespace("svc");
        client.apps()
                .deployments()
                .inNamespace(ns)
                .resource(
                        new DeploymentBuilder()
                                .withNewMetadata()
                                .withName("echo")
                                .endMetadata()
                                .withNewSpec()
                                .withReplicas(2)
                                .withNewSelector()
                                .addToMatchLabels("app", "echo")
                                .endSelector()
                                .withNewTemplate()
                                .withNewMetadata()
                                .addToLabels("app", "echo")
                                .endMetadata()
                                .withNewSpec()
                                .addNewContainer()
                                .withName("echo")
                                .withImage(PROGRAMS_IMAGE)
                                .withArgs(HttpEcho.class.getName())
                                .addNewEnv()
                                .withName("POD_NAME")
                                .withNewValueFrom()
                                .withNewFieldRef()
                                .withFieldPath("metadata.name")
                                .endFieldRef()
                                .endValueFrom()
                                .endEnv()
                                .addNewEnv()
                                .withName("PORT")
                                .withValue("8080")
                                .endEnv()
                                .addNewPort()
                                .withName("http")
                                .withContainerPort(8080)
                                .endPort()
                                .withNewReadinessProbe()
                                .withNewHttpGet()
                                .withPath("/healthz")
                                .withPort(new IntOrString("http"))
                                .endHttpGet()
                                .withPeriodSeconds(1)
                                .endReadinessProbe()
                                .withNewLivenessProbe()
                                .withNewTcpSocket()
                                .withPort(new IntOrString("http"))
                                .endTcpSocket()
                                .withInitialDelaySeconds(3)
                                .withPeriodSeconds(1)
                                .withFailureThreshold(2)
                                .endLivenessProbe()
                                .endContainer()
                                .endSpec()
                                .endTemplate()
                                .endSpec()
                                .build())
                .create();
        client.services()
                .inNamespace(ns)
                .resource(
                        new ServiceBuilder()
                                .withNewMetadata()
                                .withName("echo")
                                .endMetadata()
                                .withNewSpec()
                                .addToSelector("app", "echo")
                                .addNewPort()
                                .withName("http")
                                .withPort(80)
                                .withTargetPort(new IntOrString("http"))
                                .endPort()
                                .endSpec()
                                .build())
                .create();

        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                client
                                                .pods()
                                                .inNamespace(ns)
                                                .withLabel("app", "echo")
                                                .list()
                                                .getItems()
                                                .stream()
                                                .filter(LocalClusterE2E::isReady)
                                                .count()
                                        == 2);
        List<Pod> pods = client.pods().inNamespace(ns).withLabel("app", "echo").list().getItems();
        Set<String> podIps =
                pods.stream().map(p -> p.getStatus().getPodIP()).collect(Collectors.toSet());
        assertThat(podIps).hasSize(2);

        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> readyEndpointAddresses(ns, "echo").equals(podIps));
        var slice =
                client.discovery()
                        .v1()
                        .endpointSlices()
                        .inNamespace(ns)
                        .withLabel("kubernetes.io/service-name", "echo")
                        .list()
                        .getItems()
                        .get(0);
        assertThat(slice.getPorts().get(0).getPort()).isEqualTo(8080);
        assertThat(slice.getEndpoints())
                .allSatisfy(
                        e -> {
                            assertThat(e.getNodeName()).isEqualTo(cluster.node().name());
                            assertThat(e.getTargetRef().getKind()).isEqualTo("Pod");
                        });

        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
        assertThat(pods)
                .allSatisfy(
                        p ->
                                assertThat(
                                                p.getStatus()
                                                        .getContainerStatuses()
                                                        .get(0)
                                                        .getRestartCount())
                                        .as("tcpSocket liveness probe passes")
                                        .isZero());
        for (Pod pod : pods) {
            String ip = pod.getStatus().getPodIP();
            HttpResponse<String> response =
                    http.send(
                            HttpRequest.newBuilder(URI.create("http://" + ip + ":8080/"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body())
                    .isEqualTo("hello from " + pod.getMetadata().getName() + " at " + ip);
        }

        // Through the Service: its ClusterIP from the host, and its DNS-style name from a pod.
        String clusterIp =
                client.services().inNamespace(ns).withName("echo").get().getSpec().getClusterIP();
        // a new client per request means a new connection, which the proxy balances round robin
        Set<String> responders = new java.util.HashSet<>();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> response =
                    HttpClient.newHttpClient()
                            .send(
                                    HttpRequest.newBuilder(
                                                    URI.create("http://" + clusterIp + ":80/"))
                                            .timeout(Duration.ofSeconds(5))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            responders.add(response.body().split(" ")[2]);
        }
        assertThat(responders)
                .isEqualTo(
                        pods.stream()
                                .map(p -> p.getMetadata().getName())
                                .collect(Collectors.toSet()));
        client.pods()
                .inNamespace(ns)
                .resource(
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("caller")
                                .endMetadata()
                                .withNewSpec()
                                .withRestartPolicy("Never")
                                .addNewContainer()
                                .withName("curl")
                                .withImage(SHELL_IMAGE)
                                .withCommand(
                                        "sh",
                                        "-c",
                                        "curl -sS -m 5 http://echo."
                                                + ns
                                                + ".svc.cluster.local/; echo; curl -sS -m 5 http://echo:80/; echo")
                                .endContainer()
                                .endSpec()
                                .build())
                .create();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                Set.of("Succeeded", "Failed")
                                        .contains(pod(ns, "caller").getStatus().getPhase()));
        String callerLog = cluster.node().logs(ns, "caller", "curl");
        assertThat(pod(ns, "caller").getStatus().getPhase()).as(callerLog).isEqualTo("Succeeded");
        assertThat(callerLog.lines().filter(l -> l.startsWith("hello from echo-"))).hasSize(2);
    }

    private static Set<String> readyEndpointAddresses(String ns, String service) {
        return client
                .discovery()
                .v1()
                .endpointSlices()
                .inNamespace(ns)
                .withLabel("kubernetes.io/service-name", service)
                .list()
                .getItems()
                .stream()
                .flatMap(
                        s ->
                                s.getEndpoints() == null
                                        ? java.util.stream.Stream.<Endpoint>empty()
                                        : s.getEndpoints().stream())
                .filter(
                        e ->
                                e.getConditions() != null
                                        && Boolean.TRUE.equals(e.getConditions().getReady()))
                .flatMap(e -> e.getAddresses().stream())
                .collect(Collectors.toSet());
    }

    @Test
    void failingContainerFailsJobWithExitCodeInPodStatus() {
        String ns = newNamespace("fail");
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns)
                .resource(
                        new JobBuilder()
                                .withNewMetadata()
                                .withName("doomed")
                                .endMetadata()
                                .withNewSpec()
                                .withBackoffLimit(0)
                                .withNewTemplate()
                                .withNewSpec()
                                .withRestartPolicy("Never")
                                .addNewContainer()
                                .withName("main")
                                .withImage(SHELL_IMAGE)
                                .withCommand("sh", "-c", "echo about to fail; exit 3")
                                .endContainer()
                                .endSpec()
                                .endTemplate()
                                .endSpec()
                                .build())
                .create();

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                jobCondition(
                                        client.batch()
                                                .v1()
                                                .jobs()
                                                .inNamespace(ns)
                                                .withName("doomed")
                                                .get(),
                                        "Failed"));

        Pod pod =
                client.pods()
                        .inNamespace(ns)
                        .withLabel("job-name", "doomed")
                        .list()
                        .getItems()
                        .get(0);
        assertThat(pod.getStatus().getPhase()).isEqualTo("Failed");
        ContainerStateTerminated terminated =
                pod.getStatus().getContainerStatuses().get(0).getState().getTerminated();
        assertThat(terminated.getExitCode()).isEqualTo(3);
        assertThat(terminated.getReason()).isEqualTo("Error");
        assertThat(pod.getStatus().getContainerStatuses().get(0).getRestartCount()).isZero();
        assertThat(cluster.node().logs(ns, pod.getMetadata().getName(), "main"))
                .contains("about to fail");
        // the same log through the API server (kubectl logs), proxied to the node
        assertThat(client.pods().inNamespace(ns).withName(pod.getMetadata().getName()).getLog())
                .isEqualTo("about to fail\n");
        Job job = client.batch().v1().jobs().inNamespace(ns).withName("doomed").get();
        assertThat(job.getStatus().getFailed()).isEqualTo(1);
    }

    @Test
    void deletingRunningPodSendsSigtermStopsItsProcessAndRemovesThePod() {
        String ns = newNamespace("delete");
        client.pods()
                .inNamespace(ns)
                .resource(
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("sleeper")
                                .endMetadata()
                                .withNewSpec()
                                .withTerminationGracePeriodSeconds(20L)
                                .addNewContainer()
                                .withName("main")
                                .withImage(SHELL_IMAGE)
                                .withCommand(
                                        "sh",
                                        "-c",
                                        "trap 'echo got SIGTERM; exit 0' TERM; echo started; sleep 2;"
                                                + " echo marking ready; touch $IB_VOLUME_ROOT/ready;"
                                                + " while true; do sleep 0.1; done")
                                .withNewReadinessProbe()
                                .withNewExec()
                                .withCommand("sh", "-c", "test -f $IB_VOLUME_ROOT/ready")
                                .endExec()
                                .withPeriodSeconds(1)
                                .endReadinessProbe()
                                .endContainer()
                                .endSpec()
                                .build())
                .create();
        await().atMost(Duration.ofSeconds(60)).until(() -> isReady(pod(ns, "sleeper")));
        assertThat(cluster.node().logs(ns, "sleeper", "main")).contains("marking ready");
        // The exec readiness probe held Ready back until the file appeared (about 2 s in).
        Pod ready = pod(ns, "sleeper");
        java.time.Instant containerStart =
                java.time.Instant.parse(
                        ready.getStatus()
                                .getContainerStatuses()
                                .get(0)
                                .getState()
                                .getRunning()
                                .getStartedAt());
        java.time.Instant readySince =
                java.time.Instant.parse(
                        ready.getStatus().getConditions().stream()
                                .filter(c -> c.getType().equals("Ready"))
                                .findFirst()
                                .orElseThrow()
                                .getLastTransitionTime());
        assertThat(Duration.between(containerStart, readySince))
                .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        long pid = cluster.node().containerPid(ns, "sleeper", "main").orElseThrow();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);
        Pod running = pod(ns, "sleeper");
        assertThat(running.getStatus().getPhase()).isEqualTo("Running");
        assertThat(
                        running.getStatus()
                                .getContainerStatuses()
                                .get(0)
                                .getState()
                                .getRunning()
                                .getStartedAt())
                .isNotNull();

        long start = System.nanoTime();
        client.pods().inNamespace(ns).withName("sleeper").delete();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> pod(ns, "sleeper") == null);

        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
        assertThat(cluster.node().logs(ns, "sleeper", "main"))
                .contains("started")
                .contains("got SIGTERM");
    }

    @Test
    void processIgnoringSigtermIsKilledWhenGracePeriodEnds() {
        String ns = newNamespace("grace");
        client.pods()
                .inNamespace(ns)
                .resource(
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("stubborn")
                                .endMetadata()
                                .withNewSpec()
                                .withTerminationGracePeriodSeconds(2L)
                                .addNewContainer()
                                .withName("main")
                                .withImage(SHELL_IMAGE)
                                .withCommand(
                                        "sh",
                                        "-c",
                                        "trap '' TERM; echo started; while true; do sleep 0.1; done")
                                .endContainer()
                                .endSpec()
                                .build())
                .create();
        await().atMost(Duration.ofSeconds(60)).until(() -> isReady(pod(ns, "stubborn")));
        long pid = cluster.node().containerPid(ns, "stubborn", "main").orElseThrow();

        long start = System.nanoTime();
        client.pods().inNamespace(ns).withName("stubborn").delete();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        Duration killedAfter = Duration.ofNanos(System.nanoTime() - start);

        assertThat(killedAfter)
                .isGreaterThanOrEqualTo(Duration.ofMillis(1800))
                .isLessThan(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(15)).until(() -> pod(ns, "stubborn") == null);
    }

    @Test
    void inPodClientHasExactlyItsServiceAccountsRbac() throws Exception {
        String ns = newNamespace("rbac");
        client.serviceAccounts()
                .inNamespace(ns)
                .resource(
                        new ServiceAccountBuilder()
                                .withNewMetadata()
                                .withName("reader")
                                .endMetadata()
                                .build())
                .create();
        client.rbac()
                .roles()
                .inNamespace(ns)
                .resource(
                        new RoleBuilder()
                                .withNewMetadata()
                                .withName("configmap-reader")
                                .endMetadata()
                                .addNewRule()
                                .withApiGroups("")
                                .withResources("configmaps")
                                .withVerbs("get", "list")
                                .endRule()
                                .build())
                .create();
        client.rbac()
                .roleBindings()
                .inNamespace(ns)
                .resource(
                        new RoleBindingBuilder()
                                .withNewMetadata()
                                .withName("reader")
                                .endMetadata()
                                .withNewRoleRef()
                                .withApiGroup("rbac.authorization.k8s.io")
                                .withKind("Role")
                                .withName("configmap-reader")
                                .endRoleRef()
                                .addNewSubject()
                                .withKind("ServiceAccount")
                                .withName("reader")
                                .withNamespace(ns)
                                .endSubject()
                                .build())
                .create();
        client.secrets()
                .inNamespace(ns)
                .resource(
                        new SecretBuilder()
                                .withNewMetadata()
                                .withName("hidden")
                                .endMetadata()
                                .addToStringData("k", "v")
                                .build())
                .create();
        client.pods()
                .inNamespace(ns)
                .resource(
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("probe")
                                .endMetadata()
                                .withNewSpec()
                                .withServiceAccountName("reader")
                                .withRestartPolicy("Never")
                                .addNewContainer()
                                .withName("probe")
                                .withImage(PROGRAMS_IMAGE)
                                .withArgs(InClusterProbe.class.getName())
                                .endContainer()
                                .endSpec()
                                .build())
                .create();

        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () -> {
                            Pod p = pod(ns, "probe");
                            return p.getStatus() != null
                                    && Set.of("Succeeded", "Failed")
                                            .contains(p.getStatus().getPhase());
                        });

        String log = cluster.node().logs(ns, "probe", "probe");
        assertThat(log)
                .contains("master=" + cluster.controlPlane().apiServerUrl())
                .contains("namespace=" + ns)
                .contains("configmaps=ok:")
                .contains("secrets=http-403");
        assertThat(pod(ns, "probe").getStatus().getPhase()).isEqualTo("Succeeded");

        // The projected token came from the TokenRequest API, bound to this pod.
        Path podDir = cluster.node().podDirectory(ns, "probe").orElseThrow();
        Path token;
        try (var files = java.nio.file.Files.walk(podDir.resolve("volumes"))) {
            token =
                    files.filter(f -> f.getFileName().toString().equals("token"))
                            .findFirst()
                            .orElseThrow();
        }
        var review =
                client.authentication()
                        .v1()
                        .tokenReviews()
                        .create(
                                new io.fabric8.kubernetes.api.model.authentication
                                                .TokenReviewBuilder()
                                        .withNewSpec()
                                        .withToken(java.nio.file.Files.readString(token))
                                        .endSpec()
                                        .build());
        assertThat(review.getStatus().getAuthenticated()).isTrue();
        assertThat(review.getStatus().getUser().getUsername())
                .isEqualTo("system:serviceaccount:" + ns + ":reader");
        assertThat(
                        review.getStatus()
                                .getUser()
                                .getExtra()
                                .get("authentication.kubernetes.io/pod-name"))
                .containsExactly("probe");
        assertThat(java.nio.file.Files.readString(token.resolveSibling("namespace"))).isEqualTo(ns);
        assertThat(java.nio.file.Files.readString(token.resolveSibling("ca.crt")))
                .isEqualTo(cluster.controlPlane().caCertificatePem());
    }

    @Test
    void volumesEnvFromAndRestartOnFailureBehaveLikeAKubelet() {
        String ns = newNamespace("volumes");
        client.configMaps()
                .inNamespace(ns)
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("settings")
                                .endMetadata()
                                .addToData(Map.of("MODE", "fast", "LEVEL", "3"))
                                .build())
                .create();
        client.secrets()
                .inNamespace(ns)
                .resource(
                        new SecretBuilder()
                                .withNewMetadata()
                                .withName("creds")
                                .endMetadata()
                                .addToStringData(Map.of("token", "s3cr3t", "unused", "x"))
                                .build())
                .create();
        String script =
                String.join(
                        "; ",
                        "echo env MODE=$MODE LEVEL=$LEVEL TOKEN=$TOKEN GREETING=$GREETING",
                        "echo secret $(cat $IB_MOUNT_SECRETS/api-token) mode $(stat -c %a $(readlink -f $IB_MOUNT_SECRETS/api-token))",
                        "echo unused-present $(test -e $IB_MOUNT_SECRETS/unused && echo yes || echo no)",
                        "echo labels $(cat $IB_VOLUME_ROOT/etc/podinfo/labels)",
                        "if [ -f $IB_MOUNT_DATA/marker ]; then echo second run; exit 0; fi",
                        "touch $IB_MOUNT_DATA/marker; echo first run; exit 1");
        client.pods()
                .inNamespace(ns)
                .resource(
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("worker")
                                .addToLabels("tier", "backend")
                                .endMetadata()
                                .withNewSpec()
                                .withRestartPolicy("OnFailure")
                                .addNewContainer()
                                .withName("main")
                                .withImage(SHELL_IMAGE)
                                .withCommand("sh", "-c", script)
                                .addNewEnvFrom()
                                .withNewConfigMapRef()
                                .withName("settings")
                                .endConfigMapRef()
                                .endEnvFrom()
                                .addNewEnv()
                                .withName("TOKEN")
                                .withNewValueFrom()
                                .withNewSecretKeyRef()
                                .withName("creds")
                                .withKey("token")
                                .endSecretKeyRef()
                                .endValueFrom()
                                .endEnv()
                                .addNewEnv()
                                .withName("GREETING")
                                .withValue("mode-$(MODE)")
                                .endEnv()
                                .addNewVolumeMount()
                                .withName("secrets")
                                .withMountPath("/secrets")
                                .endVolumeMount()
                                .addNewVolumeMount()
                                .withName("data")
                                .withMountPath("/data")
                                .endVolumeMount()
                                .addNewVolumeMount()
                                .withName("podinfo")
                                .withMountPath("/etc/podinfo")
                                .endVolumeMount()
                                .endContainer()
                                .addNewVolume()
                                .withName("secrets")
                                .withNewSecret()
                                .withSecretName("creds")
                                .withDefaultMode(0400)
                                .addNewItem()
                                .withKey("token")
                                .withPath("api-token")
                                .endItem()
                                .endSecret()
                                .endVolume()
                                .addNewVolume()
                                .withName("data")
                                .withNewEmptyDir()
                                .endEmptyDir()
                                .endVolume()
                                .addNewVolume()
                                .withName("podinfo")
                                .withNewDownwardAPI()
                                .addNewItem()
                                .withPath("labels")
                                .withNewFieldRef()
                                .withFieldPath("metadata.labels")
                                .endFieldRef()
                                .endItem()
                                .endDownwardAPI()
                                .endVolume()
                                .endSpec()
                                .build())
                .create();

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> "Succeeded".equals(pod(ns, "worker").getStatus().getPhase()));

        Pod done = pod(ns, "worker");
        var status = done.getStatus().getContainerStatuses().get(0);
        assertThat(status.getRestartCount()).isEqualTo(1);
        assertThat(status.getLastState().getTerminated().getExitCode()).isEqualTo(1);
        assertThat(status.getState().getTerminated().getExitCode()).isZero();
        String log = cluster.node().logs(ns, "worker", "main");
        assertThat(log)
                .contains("env MODE=fast LEVEL=3 TOKEN=s3cr3t GREETING=mode-fast")
                .contains("secret s3cr3t mode 400")
                .contains("unused-present no")
                .contains("labels tier=\"backend\"")
                .contains("first run")
                .contains("second run");
    }

    @Test
    void failingLivenessProbeRestartsContainerUnderRestartPolicyAlways() {
        String ns = newNamespace("liveness");
        client.pods()
                .inNamespace(ns)
                .resource(
                        new PodBuilder()
                                .withNewMetadata()
                                .withName("flaky")
                                .endMetadata()
                                .withNewSpec()
                                .withTerminationGracePeriodSeconds(1L)
                                .addNewContainer()
                                .withName("main")
                                .withImage(SHELL_IMAGE)
                                .withCommand("sh", "-c", "echo run; while true; do sleep 0.1; done")
                                .withNewLivenessProbe()
                                .withNewExec()
                                .withCommand("false")
                                .endExec()
                                .withInitialDelaySeconds(1)
                                .withPeriodSeconds(1)
                                .withFailureThreshold(1)
                                .endLivenessProbe()
                                .endContainer()
                                .endSpec()
                                .build())
                .create();

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(
                        () -> {
                            var statuses = pod(ns, "flaky").getStatus().getContainerStatuses();
                            return statuses != null
                                    && !statuses.isEmpty()
                                    && statuses.get(0).getRestartCount() >= 2;
                        });
        Pod pod = pod(ns, "flaky");
        assertThat(pod.getStatus().getPhase()).isEqualTo("Running");
        var last = pod.getStatus().getContainerStatuses().get(0).getLastState().getTerminated();
        assertThat(last.getExitCode()).isIn(137, 143);
        assertThat(cluster.node().logs(ns, "flaky", "main").lines().filter("run"::equals).count())
                .isGreaterThanOrEqualTo(3);
        assertThat(client.v1().events().inNamespace(ns).list().getItems())
                .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Unhealthy"));
    }

    @Test
    void modelServerSimulatorImageServesOpenAiApiBehindAService() throws Exception {
        String ns = newNamespace("sim");
        SimulatorDeployment.named("sim")
                .model("tiny-model")
                .timeToFirstToken(10)
                .interTokenLatency(2)
                .maxNumSeqs(8)
                .create(client, ns);

        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> readyEndpointAddresses(ns, "sim").size() == 1);
        String base =
                "http://"
                        + client.services()
                                .inNamespace(ns)
                                .withName("sim")
                                .get()
                                .getSpec()
                                .getClusterIP()
                        + ":8000";
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> models =
                http.send(
                        HttpRequest.newBuilder(URI.create(base + "/v1/models")).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(models.statusCode()).isEqualTo(200);
        assertThat(models.body()).contains("tiny-model");
        HttpResponse<String> completion =
                http.send(
                        HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                                .header("Content-Type", "application/json")
                                .POST(
                                        HttpRequest.BodyPublishers.ofString(
                                                "{\"model\":\"tiny-model\",\"prompt\":\"hello there\",\"max_tokens\":5}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(completion.statusCode()).as(completion.body()).isEqualTo(200);
        assertThat(completion.body()).contains("\"choices\"").contains("\"completion_tokens\"");
        HttpResponse<String> metrics =
                http.send(
                        HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).contains("vllm:");
    }

    @Test
    void garbageCollectorDeletesOwnedObjects() {
        String ns = newNamespace("gc");
        var owner =
                client.configMaps()
                        .inNamespace(ns)
                        .resource(
                                new ConfigMapBuilder()
                                        .withNewMetadata()
                                        .withName("owner")
                                        .endMetadata()
                                        .build())
                        .create();
        client.configMaps()
                .inNamespace(ns)
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("dependent")
                                .addNewOwnerReference()
                                .withApiVersion("v1")
                                .withKind("ConfigMap")
                                .withName("owner")
                                .withUid(owner.getMetadata().getUid())
                                .endOwnerReference()
                                .endMetadata()
                                .build())
                .create();
        assertThat(client.configMaps().inNamespace(ns).withName("dependent").get()).isNotNull();

        client.configMaps().inNamespace(ns).withName("owner").delete();

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                client.configMaps().inNamespace(ns).withName("dependent").get()
                                        == null);
    }
}
