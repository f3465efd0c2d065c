package io.inferencebench.testkit;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A {@link LocalControlPlane} plus one {@link LocalNode}: everything an {@code *E2E} test needs.
 * {@link #shared(Consumer)} starts one per JVM (the first caller's node configuration wins; later
 * callers' image mappings are added to the running node's image map).
 */
public final class LocalCluster implements AutoCloseable {

    private static LocalCluster shared;

    private final MachineLock lock;
    private final LocalControlPlane controlPlane;
    private final LocalNode node;
    private final Duration startupTime;

    private LocalCluster(
            MachineLock lock,
            LocalControlPlane controlPlane,
            LocalNode node,
            Duration startupTime) {
        this.lock = lock;
        this.controlPlane = controlPlane;
        this.node = node;
        this.startupTime = startupTime;
    }

    /** Starts a private cluster; {@code nodeConfig} may add image mappings, capacity, labels. */
    public static LocalCluster start(Consumer<LocalNode.Builder> nodeConfig) {
        long start = System.nanoTime();
        // its bridge, netns and pod addresses are host state too: one cluster per machine
        MachineLock lock =
                MachineLock.acquire(MachineLock.file(), MachineLock.DEFAULT_WAIT, "a local node");
        LocalControlPlane controlPlane;
        try {
            controlPlane = LocalControlPlane.start();
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
        try {
            LocalNode.Builder builder = LocalNode.builder(controlPlane);
            nodeConfig.accept(builder);
            LocalNode node = builder.start();
            return new LocalCluster(
                    lock, controlPlane, node, Duration.ofNanos(System.nanoTime() - start));
        } catch (RuntimeException e) {
            controlPlane.close();
            lock.close();
            throw e;
        }
    }

    /** The JVM-wide cluster (stopped at JVM exit). */
    public static synchronized LocalCluster shared(Consumer<LocalNode.Builder> nodeConfig) {
        if (shared == null) {
            shared = start(nodeConfig);
        } else {
            LocalNode.Builder extra = LocalNode.builder(shared.controlPlane);
            nodeConfig.accept(extra);
            extra.imagesInto(shared.node);
        }
        return shared;
    }

    static synchronized LocalCluster sharedIfStarted() {
        return shared;
    }

    public LocalControlPlane controlPlane() {
        return controlPlane;
    }

    public LocalNode node() {
        return node;
    }

    public KubernetesClient client() {
        return controlPlane.adminClient();
    }

    /** Control plane ready + node registered, measured from the call to start. */
    public Duration startupTime() {
        return startupTime;
    }

    @Override
    public void close() {
        node.close();
        controlPlane.close();
        lock.close();
    }
}
