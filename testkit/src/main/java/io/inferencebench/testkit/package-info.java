/**
 * Real-Kubernetes fixtures for InferenceBench's {@code *IT} and {@code *E2E} tests.
 *
 * <ul>
 *   <li>{@link io.inferencebench.testkit.ApiServerFixture}: etcd + kube-apiserver only (fabric8
 *       kube-api-test), for {@code *IT}: {@code @ExtendWith(ApiServerFixture.Extension.class)} and
 *       take a {@code KubernetesClient} parameter, or {@code ApiServerFixture.shared().client()}.
 *   <li>{@link io.inferencebench.testkit.LocalControlPlane}: etcd, kube-apiserver,
 *       kube-controller-manager, kube-scheduler with ServiceAccount tokens, Node+RBAC authorization
 *       and a pod network.
 *   <li>{@link io.inferencebench.testkit.LocalNode}: a kubelet stand-in running pods as local
 *       processes (see its Javadoc for what a container process sees: volumes under {@code
 *       IB_VOLUME_ROOT}/{@code IB_MOUNT_*}, {@code POD_IP}, the ServiceAccount token).
 *   <li>{@link io.inferencebench.testkit.LocalCluster}: both, once per JVM, for {@code *E2E}:
 *       <pre>{@code
 * LocalCluster cluster = LocalCluster.shared(node -> node
 *         .images(ImageMap.defaults())                      // busybox/alpine, simulator, runner
 *         .image("ghcr.io/inferencebench/runner:dev",
 *                ImageMap.Mapping.of(java, "-jar", runnerJar))
 *         .restartBackoff(Duration.ofSeconds(1)));
 * KubernetesClient admin = cluster.client();
 * String log = cluster.node().logs(namespace, podName, containerName);
 * }</pre>
 *   <li>{@link io.inferencebench.testkit.ClusterDumpExtension}: {@code @ExtendWith} it to get pod
 *       YAML, events, container logs and component logs when a test fails.
 * </ul>
 *
 * <p>Binaries come from {@code e2e/scripts/provision-k8s.sh} (or env {@code IB_K8S_BIN_DIR}); the
 * simulator from {@code e2e/scripts/provision-model-sim.sh} (or env {@code IB_MODEL_SIM}). The
 * local control plane needs root (network namespaces, a bridge). Services are reachable by
 * ClusterIP from pods and from the test JVM, and by name from pods through {@code /etc/hosts}.
 */
package io.inferencebench.testkit;
