package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;

/**
 * Empties a running real node before its parts stop: workloads deleted through the API (so that
 * kubelet stops their sandboxes and CNI DEL runs), then what containerd still holds.
 */
final class NodeDrain {

    private NodeDrain() {}

    /** Deletes controllers and pods on the node so that kubelet stops sandboxes (CNI DEL). */
    static void deleteWorkloads(KubernetesClient c, RealNode node) {
        c.apps().deployments().inAnyNamespace().delete();
        c.apps().replicaSets().inAnyNamespace().delete();
        c.apps().statefulSets().inAnyNamespace().delete();
        c.apps().daemonSets().inAnyNamespace().delete();
        c.batch().v1().jobs().inAnyNamespace().delete();
        long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
        while (System.nanoTime() < deadline) {
            List<Pod> pods =
                    c.pods()
                            .inAnyNamespace()
                            .withField("spec.nodeName", RealNode.NODE_NAME)
                            .list()
                            .getItems();
            if (pods.isEmpty()) {
                break;
            }
            for (Pod p : pods) {
                if (p.getMetadata().getDeletionTimestamp() == null) {
                    c.pods()
                            .inNamespace(p.getMetadata().getNamespace())
                            .withName(p.getMetadata().getName())
                            .withGracePeriod(2)
                            .delete();
                }
            }
            LocalControlPlane.sleep(300);
        }
        // kubelet stops the sandboxes (and CNI DEL runs) shortly after the pods are gone
        deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline
                && !node.ctr(List.of("-n", "k8s.io", "tasks", "ls", "-q"), Duration.ofSeconds(10))
                        .output()
                        .isBlank()) {
            LocalControlPlane.sleep(300);
        }
    }

    /** Kills and removes every CRI task and container left in containerd. */
    static void removeSandboxes(RealNode node) {
        String tasks =
                node.ctr(List.of("-n", "k8s.io", "tasks", "ls", "-q"), Duration.ofSeconds(10))
                        .output();
        for (String id : tasks.split("\n")) {
            if (!id.isBlank()) {
                node.ctr(
                        List.of("-n", "k8s.io", "tasks", "kill", "-s", "KILL", id.strip()),
                        Duration.ofSeconds(10));
                node.ctr(
                        List.of("-n", "k8s.io", "tasks", "rm", "-f", id.strip()),
                        Duration.ofSeconds(10));
            }
        }
        String containers =
                node.ctr(List.of("-n", "k8s.io", "containers", "ls", "-q"), Duration.ofSeconds(10))
                        .output();
        for (String id : containers.split("\n")) {
            if (!id.isBlank()) {
                node.ctr(
                        List.of("-n", "k8s.io", "containers", "rm", id.strip()),
                        Duration.ofSeconds(10));
            }
        }
    }
}
