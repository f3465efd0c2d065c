package io.inferencebench.e2e.cluster;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.e2e.ProjectImages;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.testkit.RealNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The product as a user installs it, on the cluster of the {@link TestCluster} switch (by default
 * the real node: {@link RealNode}'s control plane, kubelet, containerd, kube-proxy, CoreDNS), the
 * operator, runner and model-sim image tarballs of {@code make images} imported into the cluster's
 * container runtime, the Helm chart installed with {@code helm install} (the operator as a
 * Deployment with its own ServiceAccount and in-cluster config; runner RBAC in the given
 * namespaces, which are created first with Pod Security {@code restricted} enforced).
 *
 * <p>{@link #close()} uninstalls nothing: it copies the cluster's logs and closes the cluster (the
 * real node's teardown deletes the workloads, restores the host and compares the host state with
 * the one recorded before the start).
 */
final class ChartCluster implements AutoCloseable {

    static final String SYSTEM = "inferencebench-system";
    static final String RELEASE = "inferencebench";
    static final String OPERATOR = "inferencebench-operator";

    final Path repo;
    private final ProjectImages images;

    /** The cluster of the {@link TestCluster#PROPERTY} switch. */
    final TestCluster cluster;

    /** The real node when the cluster is one ({@code node} mode), else null. */
    final RealNode node;

    final KubernetesClient client;
    final Path helm;
    private final Path logCopies;

    private ChartCluster(List<String> namespaces, Path logCopies, List<String> chartValues) {
        this.repo = OperatorFixtures.findRepoRoot();
        this.images = ProjectImages.ofThisRepository();
        this.logCopies = logCopies;
        for (String image : List.of("operator", "runner", "model-sim")) {
            assertThat(tarball(image)).as("image tarball (built by `make images`)").exists();
        }
        this.helm = provisionHelm();
        long start = System.nanoTime();
        this.cluster = TestCluster.start();
        this.node = cluster instanceof RealNodeCluster real ? real.node() : null;
        try {
            this.client = cluster.client();
            cluster.importImages(
                    List.of(tarball("operator"), tarball("runner"), tarball("model-sim")));
            for (String ns : namespaces) {
                client.resource(
                                """
                                apiVersion: v1
                                kind: Namespace
                                metadata:
                                  name: %s
                                  labels:
                                    pod-security.kubernetes.io/enforce: restricted
                                    pod-security.kubernetes.io/enforce-version: latest
                                """
                                        .formatted(ns))
                        .serverSideApply();
            }
            List<String> install =
                    new ArrayList<>(
                            List.of(
                                    argv(
                                            "install %s %s -n %s --create-namespace"
                                                    + " --set image.pullPolicy=Never"
                                                    + " --set image.runnerPullPolicy=Never --set %s --wait"
                                                    + " --timeout 5m",
                                            RELEASE,
                                            repo.resolve("charts/inferencebench").toString(),
                                            SYSTEM,
                                            "runner.namespaces={"
                                                    + String.join(",", namespaces)
                                                    + "}")));
            for (String value : chartValues) {
                install.add("--set");
                install.add(value);
            }
            String out = helm(install);
            System.out.println(
                    "[ChartCluster] node up and chart installed in "
                            + (System.nanoTime() - start) / 1_000_000
                            + " ms on "
                            + cluster.mode()
                            + (node != null ? "; node phases " + node.startupPhases() : "")
                            + "\n"
                            + out.lines().limit(8).reduce("", (a, b) -> a + b + "\n"));
            awaitOperatorReady(Duration.ofMinutes(3));
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    static ChartCluster start(List<String> namespaces, Path logCopies) {
        return new ChartCluster(namespaces, logCopies, List.of());
    }

    /**
     * As {@link #start(List, Path)}, with more chart values ({@code key=value}, as {@code helm
     * install --set} takes them).
     */
    static ChartCluster start(List<String> namespaces, Path logCopies, List<String> chartValues) {
        return new ChartCluster(namespaces, logCopies, chartValues);
    }

    /** The one Ready operator pod of the chart's Deployment. */
    Pod awaitOperatorReady(Duration atMost) {
        await().atMost(atMost)
                .pollInterval(Duration.ofMillis(500))
                .until(
                        () -> {
                            Deployment d =
                                    client.apps()
                                            .deployments()
                                            .inNamespace(SYSTEM)
                                            .withName(OPERATOR)
                                            .get();
                            return d != null
                                    && d.getStatus() != null
                                    && Integer.valueOf(1).equals(d.getStatus().getReadyReplicas())
                                    && operatorPods().stream().filter(ChartCluster::ready).count()
                                            == 1;
                        });
        return operatorPods().stream().filter(ChartCluster::ready).findFirst().orElseThrow();
    }

    List<Pod> operatorPods() {
        return client
                .pods()
                .inNamespace(SYSTEM)
                .withLabel("app.kubernetes.io/component", "operator")
                .list()
                .getItems()
                .stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .toList();
    }

    static boolean ready(Pod p) {
        return p.getStatus() != null
                && p.getStatus().getConditions() != null
                && p.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** Every container log file kubelet wrote for pods of {@code namespace} (pod-logs dir). */
    Map<String, String> containerLogs(String namespace) {
        Map<String, String> logs = new HashMap<>();
        Path root = cluster.podLogs();
        if (!Files.isDirectory(root)) {
            return logs;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f :
                    files.filter(Files::isRegularFile)
                            .filter(
                                    f ->
                                            root.relativize(f)
                                                    .getName(0)
                                                    .toString()
                                                    .startsWith(namespace + "_"))
                            .toList()) {
                logs.put(root.relativize(f).toString(), Files.readString(f));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return logs;
    }

    String reference(String image) {
        return images.reference(image);
    }

    /**
     * The simulator from the cluster's model-sim image, admitted by Pod Security {@code
     * restricted}, requesting 50m CPU and 32Mi, limited to 256Mi.
     */
    SimulatorDeployment simulator(String name, String model) {
        return SimulatorDeployment.named(name)
                .model(model)
                .restricted(reference("model-sim"))
                .requests("50m", "32Mi")
                .limits(null, "256Mi");
    }

    /**
     * The simulator the operator scenarios load: {@link #simulator}, limited to one CPU (so its
     * latencies do not borrow the node's other cores), ready once it lists its model.
     */
    SimulatorDeployment scenarioSimulator(String name, String model) {
        return simulator(name, model).limits("1", null).readinessPath("/v1/models");
    }

    /**
     * Deploys {@link #scenarioSimulator} {@code name} in {@code ns} (Deployment and Service {@code
     * name:8000}) answering after {@code ttftMs}, then a token every {@code itlMs}, at most {@code
     * maxNumSeqs} requests at once; returns once it is ready (at most 2 minutes).
     */
    void deployScenarioSimulator(
            String ns, String name, String model, int ttftMs, int itlMs, int maxNumSeqs) {
        scenarioSimulator(name, model)
                .timeToFirstToken(ttftMs)
                .interTokenLatency(itlMs)
                .maxNumSeqs(maxNumSeqs)
                .deploy(client, ns, Duration.ofMinutes(2));
    }

    Path tarball(String image) {
        return images.tarball(image);
    }

    String kubectl(String... args) {
        List<String> argv = new ArrayList<>();
        argv.add(io.inferencebench.testkit.K8sBinaries.binary("kubectl").toString());
        argv.add("--kubeconfig");
        argv.add(cluster.kubeconfig().toString());
        argv.addAll(List.of(args));
        return exec(argv, Map.of());
    }

    String helm(List<String> args) {
        List<String> argv = new ArrayList<>();
        argv.add(helm.toString());
        argv.addAll(args);
        argv.add("--kubeconfig");
        argv.add(cluster.kubeconfig().toString());
        Path home = repo.resolve("e2e/target/chart-cluster/helm");
        return exec(
                argv,
                Map.of(
                        "HELM_CACHE_HOME", home.resolve("cache").toString(),
                        "HELM_CONFIG_HOME", home.resolve("config").toString(),
                        "HELM_DATA_HOME", home.resolve("data").toString()));
    }

    private static String exec(List<String> argv, Map<String, String> env) {
        try {
            ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
            pb.environment().putAll(env);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(6, TimeUnit.MINUTES)).as("%s finished", argv).isTrue();
            assertThat(p.exitValue()).as("%s: %s", argv, out).isZero();
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private Path provisionHelm() {
        String path =
                exec(
                                List.of(
                                        "bash",
                                        repo.resolve("e2e/scripts/provision-helm.sh").toString()),
                                Map.of())
                        .lines()
                        .filter(l -> l.startsWith("/"))
                        .reduce((a, b) -> b)
                        .orElseThrow(() -> new IllegalStateException("provision-helm.sh: no path"));
        return Path.of(path.strip());
    }

    @Override
    public void close() {
        if (cluster != null) {
            cluster.copyLogs(logCopies);
            cluster.close();
        }
    }
}
