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
 *   <li>{@link io.inferencebench.testkit.RealNode}: the control plane plus one real node
 *       (containerd, runc, CNI bridge, kubelet, kube-proxy, CoreDNS) for {@code *E2E}; it takes the
 *       machine's E2E lock ({@link io.inferencebench.testkit.MachineLock}) and restores the host
 *       when it stops.
 *   <li>{@link io.inferencebench.testkit.ClusterDumpExtension}: {@code @ExtendWith} it to get pod
 *       YAML, events, container logs and component logs when a test fails.
 * </ul>
 *
 * <p>Binaries come from {@code e2e/scripts/provision-k8s.sh} (or env {@code IB_K8S_BIN_DIR}); the
 * simulator from {@code e2e/scripts/provision-model-sim.sh} (or env {@code IB_MODEL_SIM}). The
 * local control plane and the real node need root (a bridge, containerd, kubelet).
 */
package io.inferencebench.testkit;
