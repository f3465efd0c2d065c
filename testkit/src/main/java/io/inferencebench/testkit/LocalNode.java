package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddressBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A kubelet stand-in: registers a Ready {@link Node}, renews its Lease in {@code kube-node-lease}
 * and runs the containers of the pods bound to it as local processes, writing pod status through
 * the status subresource as a kubelet does. It authenticates as {@code system:node:<name>} (group
 * {@code system:nodes}), so the Node authorizer and NodeRestriction admission apply to it.
 *
 * <h2>What a container process sees</h2>
 *
 * <ul>
 *   <li><b>argv</b>: the container's {@code command} (else the {@link ImageMap} entrypoint) plus
 *       its {@code args} (else the mapping's default args), with {@code $(VAR)} expanded.
 *   <li><b>network</b>: each pod runs in its own network namespace with its own IP (see {@link
 *       PodNetwork}); env {@code POD_IP} carries it (plus any {@code fieldRef: status.podIP}).
 *       Processes that serve must bind to it (or to 0.0.0.0, which inside the namespace means the
 *       pod's addresses only). {@code hostNetwork} pods run in the host namespace with the node IP.
 *   <li><b>API server</b>: {@code KUBERNETES_SERVICE_HOST}/{@code KUBERNETES_SERVICE_PORT} point at
 *       the real API server address (there is no kube-proxy).
 *   <li><b>volumes</b>: every volume is materialized under the pod directory and every volume mount
 *       appears at its mount path re-rooted under a per-container root directory: a mount at {@code
 *       /etc/config} is {@code $IB_VOLUME_ROOT/etc/config}. Env {@code IB_VOLUME_ROOT} is that
 *       root; per mount, {@code IB_MOUNT_<PATH>} holds the real path, where {@code <PATH>} is the
 *       mount path upper-cased with every non-alphanumeric run replaced by {@code _} (e.g. {@code
 *       IB_MOUNT_ETC_CONFIG}). The working directory is {@code workingDir} re-rooted (else the
 *       root). ConfigMap, Secret (items, defaultMode), emptyDir, downwardAPI, hostPath and
 *       projected volumes (serviceAccountToken, configMap, secret, downwardAPI) are supported.
 *   <li><b>ServiceAccount token</b>: the projected token comes from the TokenRequest API for the
 *       pod's own ServiceAccount (audience, expiry, bound to the pod) and is refreshed at 80% of
 *       its lifetime. When it is mounted at {@code /var/run/secrets/kubernetes.io/serviceaccount},
 *       {@code KUBERNETES_AUTH_SERVICEACCOUNT_TOKEN}, {@code KUBERNETES_CERTS_CA_FILE} and {@code
 *       KUBENAMESPACE} point at the re-rooted files so an in-cluster fabric8 client works unchanged
 *       with exactly that ServiceAccount's RBAC; {@code HOME} is the container root so no host
 *       kubeconfig is picked up.
 *   <li><b>environment</b>: only {@code PATH}, {@code JAVA_HOME}, {@code LANG} are inherited from
 *       the node; then image-map env, {@code HOSTNAME}, the above, {@code envFrom}, {@code env}.
 *   <li><b>logs</b>: stdout and stderr of each container go to {@link #logFile}; the node also
 *       serves them to the API server, so {@code kubectl logs} (tail, limit, follow) works.
 * </ul>
 *
 * <p>Status: phase, container states (waiting/running/terminated with exit code, reason,
 * start/finish times), restart counts, conditions (PodReadyToStartContainers, Initialized,
 * ContainersReady, Ready), podIP(s), hostIP(s), startTime; readiness, liveness and startup probes
 * (httpGet, tcpSocket, exec); restartPolicy Never/OnFailure/Always with back-off; on deletion
 * SIGTERM to the process group, SIGKILL after the grace period, then the pod object is removed
 * (grace period 0).
 */
public final class LocalNode implements AutoCloseable {

    private static final List<LocalNode> RUNNING = new CopyOnWriteArrayList<>();

    private final LocalControlPlane controlPlane;
    private final String name;
    private final ImageMap images;
    private final Path root;
    private final Map<String, String> capacity;
    private final Map<String, String> labels;
    private final Duration restartBackoff;
    private final KubernetesClient client;
    private final ScheduledExecutorService scheduler;
    private final Map<String, PodWorker> workers = new ConcurrentHashMap<>();
    private SharedIndexInformer<Pod> informer;
    private KubeletServer kubeletServer;
    private volatile boolean closed;

    private LocalNode(Builder builder) {
        this.controlPlane = builder.controlPlane;
        this.name = builder.name;
        this.images = builder.images;
        this.capacity = builder.capacity;
        this.labels = builder.labels;
        this.restartBackoff = builder.restartBackoff;
        try {
            this.root =
                    builder.root != null
                            ? Files.createDirectories(builder.root)
                            : Files.createDirectories(
                                    controlPlane.directory().resolve("nodes").resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.client =
                new KubernetesClientBuilder()
                        .withConfig(
                                controlPlane.clientConfig("system:node:" + name, "system:nodes"))
                        .build();
        this.scheduler =
                Executors.newScheduledThreadPool(
                        2, Thread.ofPlatform().daemon().name("ib-node-" + name + "-", 0).factory());
    }

    public static Builder builder(LocalControlPlane controlPlane) {
        return new Builder(controlPlane);
    }

    /** Builder; defaults: name {@code local-node}, 16 CPUs, 64Gi memory, 110 pods. */
    public static final class Builder {
        private final LocalControlPlane controlPlane;
        private String name = "local-node";
        private final ImageMap images = new ImageMap();
        private Path root;
        private final Map<String, String> capacity = new LinkedHashMap<>();
        private final Map<String, String> labels = new LinkedHashMap<>();
        private Duration restartBackoff = Duration.ofSeconds(10);

        private Builder(LocalControlPlane controlPlane) {
            this.controlPlane = controlPlane;
            capacity.put("cpu", "16");
            capacity.put("memory", "64Gi");
            capacity.put("pods", "110");
            capacity.put("ephemeral-storage", "100Gi");
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder images(ImageMap map) {
            images.putAll(map);
            return this;
        }

        public Builder image(String imageOrPrefix, ImageMap.Mapping mapping) {
            images.put(imageOrPrefix, mapping);
            return this;
        }

        public Builder root(Path root) {
            this.root = root;
            return this;
        }

        public Builder capacity(String resource, String quantity) {
            capacity.put(resource, quantity);
            return this;
        }

        public Builder label(String key, String value) {
            labels.put(key, value);
            return this;
        }

        /** First crash-loop back-off (doubles up to 5 minutes); a kubelet uses 10 seconds. */
        public Builder restartBackoff(Duration backoff) {
            this.restartBackoff = backoff;
            return this;
        }

        void imagesInto(LocalNode node) {
            node.images.putAll(images);
        }

        public LocalNode start() {
            LocalNode node = new LocalNode(this);
            node.startAgent();
            return node;
        }
    }

    private void startAgent() {
        RUNNING.add(this);
        controlPlane.serviceProxy();
        kubeletServer = new KubeletServer(this, nodeIp(), controlPlane.kubeletTls(name, nodeIp()));
        registerNode();
        renewLease();
        scheduler.scheduleWithFixedDelay(this::renewLease, 10, 10, TimeUnit.SECONDS);
        scheduler.scheduleWithFixedDelay(this::heartbeat, 60, 60, TimeUnit.SECONDS);
        informer =
                client.pods()
                        .inAnyNamespace()
                        .withField("spec.nodeName", name)
                        .inform(
                                new ResourceEventHandler<>() {
                                    @Override
                                    public void onAdd(Pod pod) {
                                        dispatch(pod);
                                    }

                                    @Override
                                    public void onUpdate(Pod oldPod, Pod newPod) {
                                        dispatch(newPod);
                                    }

                                    @Override
                                    public void onDelete(Pod pod, boolean unknownFinalState) {
                                        PodWorker worker = workers.get(pod.getMetadata().getUid());
                                        if (worker != null) {
                                            worker.podRemoved();
                                        }
                                    }
                                },
                                0);
    }

    private void dispatch(Pod pod) {
        if (closed) {
            return;
        }
        String uid = pod.getMetadata().getUid();
        PodWorker worker = workers.get(uid);
        if (worker == null) {
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            boolean terminal = "Succeeded".equals(phase) || "Failed".equals(phase);
            if (terminal) {
                // Finished before this agent saw it (e.g. an earlier node run): only honour
                // deletion.
                if (pod.getMetadata().getDeletionTimestamp() != null) {
                    PodWorker.finalizeDeletion(client, pod);
                }
                return;
            }
            worker = new PodWorker(this, pod);
            workers.put(uid, worker);
            worker.start();
        } else {
            worker.update(pod);
        }
    }

    void workerDone(PodWorker worker) {
        workers.remove(worker.uid(), worker);
    }

    private Node nodeObject() {
        Map<String, String> nodeLabels = new LinkedHashMap<>();
        nodeLabels.put("kubernetes.io/hostname", name);
        nodeLabels.put("kubernetes.io/os", "linux");
        nodeLabels.put("kubernetes.io/arch", "amd64");
        nodeLabels.put("node.kubernetes.io/instance-type", "local-process");
        nodeLabels.putAll(labels);
        Map<String, Quantity> resources = new LinkedHashMap<>();
        capacity.forEach((k, v) -> resources.put(k, new Quantity(v)));
        return new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(nodeLabels)
                .endMetadata()
                .withNewSpec()
                .withPodCIDR(controlPlane.network().cidr())
                .withPodCIDRs(controlPlane.network().cidr())
                .endSpec()
                .withNewStatus()
                .withCapacity(resources)
                .withAllocatable(resources)
                .withAddresses(
                        new NodeAddressBuilder()
                                .withType("InternalIP")
                                .withAddress(nodeIp())
                                .build(),
                        new NodeAddressBuilder().withType("Hostname").withAddress(name).build())
                .withConditions(conditions(Instant.now()))
                .withNewNodeInfo()
                .withArchitecture("amd64")
                .withOperatingSystem("linux")
                .withOsImage("local processes")
                .withKernelVersion(System.getProperty("os.version"))
                .withContainerRuntimeVersion("local-process://1.0")
                .withKubeletVersion("v" + K8sBinaries.version())
                .withKubeProxyVersion("")
                .withMachineID("")
                .withSystemUUID("")
                .withBootID(String.valueOf(ProcessHandle.current().pid()))
                .endNodeInfo()
                .withNewDaemonEndpoints()
                .withNewKubeletEndpoint(kubeletServer.port())
                .endDaemonEndpoints()
                .endStatus()
                .build();
    }

    private static List<NodeCondition> conditions(Instant now) {
        String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
        List<NodeCondition> list = new ArrayList<>();
        for (String[] c :
                new String[][] {
                    {"MemoryPressure", "False", "KubeletHasSufficientMemory"},
                    {"DiskPressure", "False", "KubeletHasNoDiskPressure"},
                    {"PIDPressure", "False", "KubeletHasSufficientPID"},
                    {"Ready", "True", "KubeletReady"}
                }) {
            list.add(
                    new NodeConditionBuilder()
                            .withType(c[0])
                            .withStatus(c[1])
                            .withReason(c[2])
                            .withMessage(
                                    c[0].equals("Ready")
                                            ? "local node agent is posting ready status"
                                            : "local node agent has no pressure")
                            .withLastHeartbeatTime(time)
                            .withLastTransitionTime(time)
                            .build());
        }
        return list;
    }

    private void registerNode() {
        Node desired = nodeObject();
        if (client.nodes().withName(name).get() == null) {
            try {
                client.nodes().resource(desired).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }
        // Patch only the status: a whole-object write could carry a stale spec, and
        // NodeRestriction forbids a node to touch the taints the node controller manages.
        client.nodes()
                .withName(name)
                .editStatus(
                        node -> {
                            node.setStatus(desired.getStatus());
                            return node;
                        });
    }

    private void heartbeat() {
        try {
            String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            client.nodes()
                    .withName(name)
                    .editStatus(
                            node -> {
                                node.getStatus()
                                        .getConditions()
                                        .forEach(c -> c.setLastHeartbeatTime(now));
                                return node;
                            });
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                registerNode();
            }
            // otherwise the next heartbeat retries; the lease keeps the node healthy meanwhile
        }
    }

    private void renewLease() {
        try {
            var leases = client.leases().inNamespace("kube-node-lease");
            Lease lease = leases.withName(name).get();
            java.time.ZonedDateTime now = java.time.ZonedDateTime.now(ZoneOffset.UTC);
            if (lease == null) {
                Node node = client.nodes().withName(name).get();
                var builder =
                        new LeaseBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .withNamespace("kube-node-lease")
                                .endMetadata()
                                .withNewSpec()
                                .withHolderIdentity(name)
                                .withLeaseDurationSeconds(40)
                                .withRenewTime(now)
                                .endSpec();
                if (node != null) {
                    builder.editMetadata()
                            .addNewOwnerReference()
                            .withApiVersion("v1")
                            .withKind("Node")
                            .withName(name)
                            .withUid(node.getMetadata().getUid())
                            .endOwnerReference()
                            .endMetadata();
                }
                leases.resource(builder.build()).create();
            } else {
                lease.getSpec().setRenewTime(now);
                leases.resource(lease).update();
            }
        } catch (KubernetesClientException e) {
            // retried on the next tick
        }
    }

    /** Records a core/v1 Event about a pod, as the kubelet does; failures are ignored. */
    void event(Pod pod, String type, String reason, String message) {
        try {
            String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            var event =
                    new io.fabric8.kubernetes.api.model.EventBuilder()
                            .withNewMetadata()
                            .withGenerateName(pod.getMetadata().getName() + ".")
                            .withNamespace(pod.getMetadata().getNamespace())
                            .endMetadata()
                            .withInvolvedObject(
                                    new ObjectReferenceBuilder()
                                            .withApiVersion("v1")
                                            .withKind("Pod")
                                            .withName(pod.getMetadata().getName())
                                            .withNamespace(pod.getMetadata().getNamespace())
                                            .withUid(pod.getMetadata().getUid())
                                            .build())
                            .withType(type)
                            .withReason(reason)
                            .withMessage(message)
                            .withNewSource()
                            .withComponent("kubelet")
                            .withHost(name)
                            .endSource()
                            .withReportingComponent("kubelet")
                            .withReportingInstance(name)
                            .withFirstTimestamp(now)
                            .withLastTimestamp(now)
                            .withCount(1)
                            .build();
            client.v1()
                    .events()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .resource(event)
                    .create();
        } catch (RuntimeException e) {
            // events are best effort, as in a kubelet
        }
    }

    public String name() {
        return name;
    }

    /** The node's InternalIP: the pod network gateway. */
    public String nodeIp() {
        return controlPlane.network().gateway();
    }

    public Path root() {
        return root;
    }

    /** The client this node acts with ({@code system:node:<name>}). */
    public KubernetesClient client() {
        return client;
    }

    LocalControlPlane controlPlane() {
        return controlPlane;
    }

    ImageMap images() {
        return images;
    }

    Duration restartBackoff() {
        return restartBackoff;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /** The directory of a pod this node runs or ran (its volumes, container roots and logs). */
    public Optional<Path> podDirectory(String namespace, String podName) {
        try (var dirs = Files.list(root.resolve("pods"))) {
            String prefix = namespace + "_" + podName + "_";
            return dirs.filter(d -> d.getFileName().toString().startsWith(prefix))
                    .max(
                            (a, b) ->
                                    Long.compare(
                                            a.toFile().lastModified(), b.toFile().lastModified()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The combined stdout/stderr file of a container (all restarts appended). */
    public Path logFile(String namespace, String podName, String container) {
        return podDirectory(namespace, podName)
                .map(d -> d.resolve("logs").resolve(container + ".log"))
                .orElse(root.resolve("pods").resolve("missing").resolve(container + ".log"));
    }

    /** The container's log so far, or empty when there is none. */
    public String logs(String namespace, String podName, String container) {
        Path file = logFile(namespace, podName, container);
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** The process id of a container's current process, if it is running. */
    public Optional<Long> containerPid(String namespace, String podName, String container) {
        return workers.values().stream()
                .filter(w -> w.is(namespace, podName))
                .findFirst()
                .flatMap(w -> w.pid(container));
    }

    /** Every container log under this node for pods of {@code namespace} (null = all). */
    public Map<String, Path> logFiles(String namespace) {
        Map<String, Path> logs = new LinkedHashMap<>();
        try (var dirs = Files.list(root.resolve("pods"))) {
            for (Path dir : dirs.sorted().toList()) {
                String dirName = dir.getFileName().toString();
                if (namespace != null && !dirName.startsWith(namespace + "_")) {
                    continue;
                }
                Path logDir = dir.resolve("logs");
                if (Files.isDirectory(logDir)) {
                    try (var files = Files.list(logDir)) {
                        files.sorted().forEach(f -> logs.put(dirName + "/" + f.getFileName(), f));
                    }
                }
            }
        } catch (IOException e) {
            // no pods yet
        }
        return logs;
    }

    static List<LocalNode> running() {
        return List.copyOf(RUNNING);
    }

    static void closeAllOf(LocalControlPlane controlPlane) {
        for (LocalNode node : RUNNING) {
            if (node.controlPlane == controlPlane) {
                node.close();
            }
        }
    }

    /** Stops watching, kills every pod's processes and releases their network namespaces. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RUNNING.remove(this);
        if (informer != null) {
            informer.close();
        }
        scheduler.shutdownNow();
        if (kubeletServer != null) {
            kubeletServer.close();
        }
        List<Thread> stoppers = new ArrayList<>();
        for (PodWorker worker : workers.values()) {
            stoppers.add(Thread.ofVirtual().start(worker::shutdown));
        }
        for (Thread t : stoppers) {
            try {
                t.join(15_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        client.close();
    }

    boolean isClosed() {
        return closed;
    }
}
