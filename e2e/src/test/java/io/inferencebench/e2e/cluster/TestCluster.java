package io.inferencebench.e2e.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.List;

/**
 * The cluster an E2E class runs on, whatever provides it. {@link #start()} is the switch: the
 * system property {@value #PROPERTY} ({@code node}, the default: {@link RealNodeCluster}; {@code
 * kind}: {@link KindCluster}) is read there and nowhere else.
 */
public interface TestCluster extends AutoCloseable {

    String PROPERTY = "inferencebench.cluster";

    /** The cluster selected by {@value #PROPERTY}, started (or attached to) and ready for pods. */
    static TestCluster start() {
        String mode = System.getProperty(PROPERTY, "node").strip();
        return switch (mode) {
            case "node" -> RealNodeCluster.start();
            case "kind" -> KindCluster.start();
            default ->
                    throw new IllegalArgumentException(
                            "system property "
                                    + PROPERTY
                                    + "="
                                    + mode
                                    + ": unknown cluster (known: node, kind)");
        };
    }

    /** The mode's name, as in {@value #PROPERTY}. */
    String mode();

    /** An admin kubeconfig file (for kubectl and helm). */
    Path kubeconfig();

    /**
     * An address of this host that the cluster's pods reach directly (the real node's bridge
     * gateway, Kind's Docker network gateway): a server on the host bound to it can stand behind a
     * Service without a selector, as a model server outside the cluster would.
     */
    String hostAddress();

    /** An admin client; closed by {@link #close()}. */
    KubernetesClient client();

    /**
     * Makes image tarballs (OCI/docker archives of {@code make images}) available to the cluster's
     * container runtime under the references they carry, so pods with {@code imagePullPolicy:
     * Never} start from them; fails naming the tarball that did not import.
     */
    void importImages(List<Path> tarballs);

    /**
     * kubelet's pod log directory as seen from this host, laid out like {@code /var/log/pods}
     * ({@code <namespace>_<pod>_<uid>/<container>/<n>.log}); may not exist before the first pod.
     */
    Path podLogs();

    /** Copies the cluster's component logs (and the pod logs) into {@code dir}, for a failure. */
    void copyLogs(Path dir);

    /** Tears the cluster down (or detaches) and checks that the host is as it was. */
    @Override
    void close();
}
