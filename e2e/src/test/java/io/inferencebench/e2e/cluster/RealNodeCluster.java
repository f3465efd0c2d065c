package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.testkit.HostState;
import io.inferencebench.testkit.MachineLock;
import io.inferencebench.testkit.RealNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@link TestCluster} mode {@code node}: the project's {@link RealNode} (control plane, kubelet,
 * containerd, kube-proxy, CoreDNS). The machine's E2E lock is taken before the host state is
 * recorded, so another cluster's state never counts as ours; {@link #close()} stops the node and
 * compares the host with that record.
 */
public final class RealNodeCluster implements TestCluster {

    private final MachineLock lock;
    private final Map<String, List<String>> hostBefore;
    private final Path nodeDir;
    private final RealNode node;
    private boolean closed;

    private RealNodeCluster() {
        assertThat(System.getProperty("user.name"))
                .as("the real node runs containerd and kubelet: run the test as root")
                .isEqualTo("root");
        this.lock =
                MachineLock.acquire(
                        MachineLock.file(), MachineLock.DEFAULT_WAIT, "an E2E class's real node");
        try {
            String env = System.getenv("IB_NODE_DIR");
            this.nodeDir =
                    Path.of(env == null || env.isBlank() ? "/var/tmp/inferencebench/node" : env);
            this.hostBefore = HostState.capture(nodeDir);
            this.node = RealNode.start();
        } catch (RuntimeException | Error e) {
            lock.close();
            throw e;
        }
    }

    public static RealNodeCluster start() {
        return new RealNodeCluster();
    }

    /** The node itself, for what only the real node has (ctr, its directory, the control plane). */
    public RealNode node() {
        return node;
    }

    @Override
    public String mode() {
        return "node";
    }

    @Override
    public Path kubeconfig() {
        return node.controlPlane().adminKubeconfig();
    }

    @Override
    public String hostAddress() {
        return node.controlPlane().apiServerHost();
    }

    @Override
    public KubernetesClient client() {
        return node.adminClient();
    }

    @Override
    public void importImages(List<Path> tarballs) {
        for (Path tar : tarballs) {
            var imported = node.importImage(tar);
            assertThat(imported.ok())
                    .as("ctr images import " + tar + ": " + imported.output())
                    .isTrue();
        }
    }

    @Override
    public Path podLogs() {
        return node.directory().resolve("pod-logs");
    }

    @Override
    public void copyLogs(Path dir) {
        try {
            Files.createDirectories(dir);
            for (var log : node.logFiles().entrySet()) {
                Files.copy(
                        log.getValue(),
                        dir.resolve(log.getKey() + ".log"),
                        StandardCopyOption.REPLACE_EXISTING);
            }
            for (var log : node.controlPlane().logFiles().entrySet()) {
                Files.copy(
                        log.getValue(),
                        dir.resolve(log.getKey() + ".log"),
                        StandardCopyOption.REPLACE_EXISTING);
            }
            Path podLogs = podLogs();
            if (Files.isDirectory(podLogs)) {
                try (Stream<Path> files = Files.walk(podLogs)) {
                    for (Path f : files.filter(Files::isRegularFile).toList()) {
                        Path to =
                                dir.resolve(
                                        "pods/"
                                                + podLogs.relativize(f)
                                                        .toString()
                                                        .replace('/', '_'));
                        Files.createDirectories(to.getParent());
                        Files.copy(f, to, StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("[RealNodeCluster] copying logs: " + e);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            node.close();
            // The kernel removes a pod's veth peer asynchronously once its network namespace is
            // gone, so a link can outlive the teardown by a moment: wait for the host to be as it
            // was (bounded), then hold it to that.
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(15);
            var differences = HostState.differences(hostBefore, HostState.capture(nodeDir));
            while (!differences.isEmpty() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(250);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                differences = HostState.differences(hostBefore, HostState.capture(nodeDir));
            }
            assertThat(differences)
                    .as("host state before the node started vs 15 s after it stopped")
                    .isEmpty();
            assertThat(nodeDir).as("node directory removed").doesNotExist();
        } finally {
            lock.close();
        }
    }
}
