package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.testkit.Command.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A real single-node Kubernetes cluster: the {@link LocalControlPlane} plus one node made of the
 * real parts — containerd (CRI) with runc, a CNI bridge, kubelet, kube-proxy (nftables mode) and
 * CoreDNS — as child processes, provisioned by {@code e2e/scripts/provision-node.sh}.
 *
 * <ul>
 *   <li><b>containerd</b> has its own root, state, socket and runc root under the node directory;
 *       {@code restrict_oom_score_adj} is set where the bounding set lacks CAP_SYS_RESOURCE
 *       (lowering oom_score_adj fails there and no pod would start), {@code
 *       netns_mounts_under_state_dir} keeps pod network namespaces out of {@code /run/netns}, the
 *       project's own pause image is the sandbox image.
 *   <li><b>Network</b>: pods join the control plane's bridge ({@link PodNetwork}) through the CNI
 *       {@code bridge} plugin with {@code isGateway: false} — the fixture owns the gateway address,
 *       and the plugin never turns on {@code net.ipv4.ip_forward} for the whole host. Forwarding is
 *       enabled on the bridge device alone ({@code net.ipv4.conf.<bridge>.forwarding}, gone with
 *       the bridge), which is what pod → ClusterIP → pod needs; kube-proxy masquerades Service
 *       traffic so that replies come back through the host, not straight across the bridge.
 *   <li><b>kubelet</b>: cgroup driver detected (systemd on a cgroup v2 host with systemd as PID 1,
 *       else cgroupfs under its own cgroup root), {@code failCgroupV1: false} only on cgroup v1,
 *       listens on the node IP only, read-only port off, webhook authentication and authorization,
 *       cluster DNS set.
 *   <li><b>DNS</b>: CoreDNS as a host process on the node IP, behind the {@code kube-dns} Service
 *       (ClusterIP {@code .10} of the Service range); its Corefile serves {@code cluster.local} and
 *       reverse zones only and never forwards outside the cluster.
 * </ul>
 *
 * <p>Host state: kubelet rewrites sysctls ({@link HostState#SYSCTLS}), adds iptables chains;
 * kube-proxy adds nft tables. What the host looked like before is recorded in the node directory
 * ({@code /var/tmp/inferencebench/node}, env {@code IB_NODE_DIR}); {@link #close()} tears down in
 * order (workloads through the API so CNI DEL runs, kube-proxy + its cleanup, kubelet, sandboxes,
 * containerd, CoreDNS, then the control plane) and restores it. A start after a crash (the recorded
 * owner process is dead) cleans up first. One node per machine (kube-proxy's nft table names are
 * fixed): a start takes the machine's E2E lock ({@link MachineLock}, the one the scripts take) and
 * the node directory's lock, and waits (at most {@link MachineLock#DEFAULT_WAIT}, saying once for
 * whom) while another node or script holds them.
 *
 * <p>Where the pieces are: {@link NodeParts} (provisioning), {@link NodeLocks}, {@link
 * NodeCgroups}; at teardown {@link NodeDrain} (workloads and sandboxes of the running node), {@link
 * NodeCleanup} (processes, mounts, cgroups and the directory, also after a crash) and {@link
 * HostRestore} (the host state recorded at start).
 */
public final class RealNode implements AutoCloseable {

    public static final String NODE_NAME = "ib-node";
    static final Path DEFAULT_DIR = Path.of("/var/tmp/inferencebench/node");

    private final Path dir;
    private LocalControlPlane controlPlane;
    private NodeParts parts;
    private final List<ChildProcess> processes = new ArrayList<>();
    private final Map<String, Duration> phases = new LinkedHashMap<>();
    private final long startNanos = System.nanoTime();
    private final Thread shutdownHook;
    private final NodeLocks locks;
    private final Path socket;
    private final String cgroupDriver;
    private ChildProcess containerd;
    private ChildProcess kubelet;
    private ChildProcess kubeProxy;
    private ChildProcess coredns;
    private ChildProcess watchdog;
    private boolean closed;

    private RealNode(Path dir, NodeLocks locks) {
        this.dir = dir;
        this.locks = locks;
        this.socket = dir.resolve("containerd/containerd.sock");
        this.cgroupDriver = NodeCgroups.detectCgroupDriver();
        this.shutdownHook = new Thread(this::close, "ib-real-node-shutdown");
        try {
            parts = NodeParts.provision();
            phase("provisioned");
            HostRestore.record(dir);
            Runtime.getRuntime().addShutdownHook(shutdownHook);
            controlPlane = LocalControlPlane.start();
            controlPlane.removeShutdownHook();
            phase("control plane ready");
            startContainerd();
            phase("containerd ready");
            startKubelet();
            startKubeProxy();
            startCoreDns();
            awaitNodeReady(Duration.ofSeconds(120));
            phase("node Ready");
            awaitHealthy(kubeProxy, "http://127.0.0.1:" + kubeProxyHealthPort + "/healthz");
            awaitHealthy(coredns, "http://127.0.0.1:" + corednsReadyPort + "/ready");
            phase("kube-proxy and CoreDNS ready");
            startWatchdog();
        } catch (IOException | RuntimeException | Error e) {
            String logs = ChildProcess.describe(processes, 25);
            closeQuietly();
            throw new IllegalStateException("real node failed to start\n" + logs, e);
        }
    }

    /**
     * Starts the control plane and one real node in the default node directory. Needs root, the
     * parts of provision-node.sh (run automatically when found) and nothing else on the machine
     * running a RealNode.
     */
    public static RealNode start() {
        String env = System.getenv("IB_NODE_DIR");
        return start(env == null || env.isBlank() ? DEFAULT_DIR : Path.of(env));
    }

    static RealNode start(Path dir) {
        if (!"root".equals(System.getProperty("user.name"))) {
            throw new IllegalStateException(
                    "a real node needs root (containerd, kubelet, network setup): run as root");
        }
        try {
            Files.createDirectories(dir.getParent());
            NodeLocks locks = NodeLocks.acquire(dir);
            NodeCleanup.cleanUpStale(dir);
            Files.createDirectories(dir);
            Files.writeString(
                    dir.resolve("owner.pid"), Long.toString(ProcessHandle.current().pid()));
            return new RealNode(dir, locks);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether this host can run a real node: root, Linux, provision script or parts present. */
    public static String unavailableReason() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "not root";
        }
        if (!Files.isDirectory(Path.of("/sys/fs/cgroup"))) {
            return "no /sys/fs/cgroup";
        }
        return null;
    }

    static Path findScript(String relative) {
        Path d = Path.of("").toAbsolutePath();
        while (d != null) {
            if (Files.isRegularFile(d.resolve(relative))) {
                return d.resolve(relative);
            }
            d = d.getParent();
        }
        return null;
    }

    // ---------------------------------------------------------------- host detection

    /** Whether CAP_SYS_RESOURCE (bit 24) is in this process's bounding set. */
    static boolean hasSysResource() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("CapBnd:")) {
                    long caps = Long.parseUnsignedLong(l.substring(7).strip(), 16);
                    return (caps & (1L << 24)) != 0;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // treat as missing
        }
        return false;
    }

    // ---------------------------------------------------------------- components

    private int kubeProxyHealthPort;
    private int corednsReadyPort;
    private int kubeletPort;

    private String nodeIp() {
        return controlPlane.apiServerHost();
    }

    /** The ClusterIP of the kube-dns Service. */
    public String dnsServiceIp() {
        return controlPlane.network().serviceIp(10);
    }

    private void startContainerd() throws IOException {
        Path home = dir.resolve("containerd");
        Path cni = dir.resolve("cni");
        Files.createDirectories(cni.resolve("net.d"));
        Files.createDirectories(home);
        PodNetwork net = controlPlane.network();
        String gw = net.gateway();
        String subnetPrefix = gw.substring(0, gw.lastIndexOf('.'));
        Files.writeString(
                cni.resolve("net.d/10-ib-node.conflist"),
                """
                {
                  "cniVersion": "0.4.0",
                  "name": "ib-node",
                  "plugins": [
                    {
                      "type": "bridge",
                      "bridge": "%s",
                      "isGateway": false,
                      "isDefaultGateway": false,
                      "ipMasq": false,
                      "hairpinMode": true,
                      "ipam": {
                        "type": "host-local",
                        "dataDir": "%s",
                        "ranges": [[{"subnet": "%s", "rangeStart": "%s.10", "rangeEnd": "%s.250", "gateway": "%s"}]],
                        "routes": [{"dst": "0.0.0.0/0", "gw": "%s"}]
                      }
                    }
                  ]
                }
                """
                        .formatted(
                                net.bridge(),
                                cni.resolve("ipam"),
                                net.cidr(),
                                subnetPrefix,
                                subnetPrefix,
                                gw,
                                gw));
        // Forwarding on the bridge only (pod -> ClusterIP -> pod), never the host-wide switch.
        Files.writeString(Path.of("/proc/sys/net/ipv4/conf", net.bridge(), "forwarding"), "1");
        boolean systemd = "systemd".equals(cgroupDriver);
        Files.writeString(
                home.resolve("config.toml"),
                String.join(
                        "\n",
                        "version = 2",
                        "root = \"" + home.resolve("root") + "\"",
                        "state = \"" + home.resolve("state") + "\"",
                        "oom_score = 0",
                        "disabled_plugins = [\"io.containerd.snapshotter.v1.btrfs\","
                                + " \"io.containerd.snapshotter.v1.zfs\","
                                + " \"io.containerd.snapshotter.v1.devmapper\","
                                + " \"io.containerd.snapshotter.v1.aufs\"]",
                        "[grpc]",
                        "  address = \"" + socket + "\"",
                        "[ttrpc]",
                        "  address = \"" + socket + ".ttrpc\"",
                        "[debug]",
                        "  level = \"info\"",
                        "[plugins.\"io.containerd.internal.v1.opt\"]",
                        "  path = \"" + home.resolve("opt") + "\"",
                        "[plugins.\"io.containerd.grpc.v1.cri\"]",
                        "  sandbox_image = \"" + parts.pauseRef() + "\"",
                        "  restrict_oom_score_adj = " + !hasSysResource(),
                        "  netns_mounts_under_state_dir = true",
                        "  disable_apparmor = true",
                        "  tolerate_missing_hugetlb_controller = true",
                        "  disable_hugetlb_controller = true",
                        "  enable_selinux = false",
                        "  stream_server_address = \"127.0.0.1\"",
                        "  stream_server_port = \"0\"",
                        "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]",
                        "    snapshotter = \"overlayfs\"",
                        "    default_runtime_name = \"runc\"",
                        "    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]",
                        "      runtime_type = \"io.containerd.runc.v2\"",
                        "      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]",
                        "        SystemdCgroup = " + systemd,
                        "        Root = \"" + home.resolve("runc") + "\"",
                        "  [plugins.\"io.containerd.grpc.v1.cri\".cni]",
                        "    bin_dir = \"/usr/lib/cni\"",
                        "    conf_dir = \"" + cni.resolve("net.d") + "\"",
                        "    max_conf_num = 1",
                        ""));
        containerd =
                spawn(
                        "containerd",
                        List.of("containerd", "--config", home.resolve("config.toml").toString()));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!ctr(List.of("version"), Duration.ofSeconds(5)).ok()) {
            if (!containerd.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("containerd did not start");
            }
            LocalControlPlane.sleep(100);
        }
        Result imported = importImage(parts.pauseTar());
        if (!imported.ok()) {
            throw new IllegalStateException("pause image import failed: " + imported.output());
        }
    }

    private void startKubelet() throws IOException {
        Path kdir = dir.resolve("kubelet");
        Files.createDirectories(kdir);
        Pki pki = controlPlane.pki();
        Path ca = kdir.resolve("ca.crt");
        Pki.writeString(ca, pki.ca().certificatePem());
        Path kubeconfig = kdir.resolve("kubelet.kubeconfig");
        Pki.writeString(
                kubeconfig,
                pki.kubeconfig(
                        controlPlane.apiServerUrl(),
                        "system:node:" + NODE_NAME,
                        pki.client("system:node:" + NODE_NAME, "system:nodes")));
        // Pods get only the cluster's resolver: no search domains or servers of the host.
        Path resolv = kdir.resolve("resolv.conf");
        Files.writeString(resolv, "");
        kubeletPort = LocalControlPlane.freePort(nodeIp());
        boolean v1 = !NodeCgroups.cgroupV2();
        StringBuilder config = new StringBuilder();
        config.append(
                """
                apiVersion: kubelet.config.k8s.io/v1beta1
                kind: KubeletConfiguration
                address: %s
                port: %d
                readOnlyPort: 0
                healthzBindAddress: 127.0.0.1
                healthzPort: 0
                cgroupDriver: %s
                failSwapOn: false
                authentication:
                  anonymous: {enabled: false}
                  webhook: {enabled: true}
                  x509: {clientCAFile: %s}
                authorization:
                  mode: Webhook
                clusterDNS: [%s]
                clusterDomain: cluster.local
                resolvConf: %s
                containerRuntimeEndpoint: unix://%s
                podLogsDir: %s
                staticPodPath: ""
                rotateCertificates: false
                serverTLSBootstrap: false
                imageGCHighThresholdPercent: 100
                imageGCLowThresholdPercent: 99
                evictionHard: {memory.available: 50Mi, nodefs.available: 1%%, imagefs.available: 1%%, nodefs.inodesFree: 1%%}
                maxPods: 60
                registerNode: true
                """
                        .formatted(
                                nodeIp(),
                                kubeletPort,
                                cgroupDriver,
                                ca,
                                dnsServiceIp(),
                                resolv,
                                socket,
                                dir.resolve("pod-logs")));
        if (v1) {
            // cgroup v1 is in maintenance mode; 1.34 still runs on it when told to (1.35 flips
            // the default to true).
            config.append("failCgroupV1: false\n");
        }
        if ("cgroupfs".equals(cgroupDriver)) {
            // pods' cgroups under a root of our own, so nothing collides with another kubelet
            NodeCgroups.createRoot();
            config.append("cgroupRoot: /" + NodeCgroups.ROOT + "\n");
        }
        if (!hasSysResource()) {
            // kubelet would lower its own oom_score_adj; that needs CAP_SYS_RESOURCE
            config.append("oomScoreAdj: 0\n");
        }
        Files.writeString(kdir.resolve("config.yaml"), config.toString());
        kubelet =
                spawn(
                        "kubelet",
                        List.of(
                                parts.k8sBin().resolve("kubelet").toString(),
                                "--config=" + kdir.resolve("config.yaml"),
                                "--kubeconfig=" + kubeconfig,
                                "--root-dir=" + kdir.resolve("root"),
                                "--cert-dir=" + kdir.resolve("pki"),
                                "--hostname-override=" + NODE_NAME,
                                "--node-ip=" + nodeIp(),
                                "--v=1"));
    }

    private void startKubeProxy() throws IOException {
        Path pdir = dir.resolve("kube-proxy");
        Files.createDirectories(pdir);
        Pki pki = controlPlane.pki();
        Path kubeconfig = pdir.resolve("kube-proxy.kubeconfig");
        Pki.writeString(
                kubeconfig,
                pki.kubeconfig(
                        controlPlane.apiServerUrl(),
                        "system:kube-proxy",
                        pki.client("system:kube-proxy")));
        kubeProxyHealthPort = LocalControlPlane.freePort("127.0.0.1");
        kubeProxy =
                spawn(
                        "kube-proxy",
                        List.of(
                                parts.k8sBin().resolve("kube-proxy").toString(),
                                "--kubeconfig=" + kubeconfig,
                                "--proxy-mode=nftables",
                                "--hostname-override=" + NODE_NAME,
                                "--cluster-cidr=" + controlPlane.network().cidr(),
                                "--nodeport-addresses=" + nodeIp() + "/32",
                                // the three below keep kube-proxy off the conntrack sysctls
                                "--conntrack-max-per-core=0",
                                "--conntrack-tcp-timeout-established=0",
                                "--conntrack-tcp-timeout-close-wait=0",
                                // replies of pod -> Service -> pod return through the host
                                "--masquerade-all=true",
                                "--healthz-bind-address=127.0.0.1:" + kubeProxyHealthPort,
                                "--metrics-bind-address=127.0.0.1:"
                                        + LocalControlPlane.freePort("127.0.0.1"),
                                "--v=1"));
    }

    private void startCoreDns() throws IOException {
        Path ddir = dir.resolve("coredns");
        Files.createDirectories(ddir);
        KubernetesClient client = controlPlane.adminClient();
        client.resource(
                        """
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRole
                        metadata: {name: "system:coredns"}
                        rules:
                        - apiGroups: [""]
                          resources: [endpoints, services, pods, namespaces]
                          verbs: [list, watch]
                        - apiGroups: [discovery.k8s.io]
                          resources: [endpointslices]
                          verbs: [list, watch]
                        """)
                .serverSideApply();
        client.resource(
                        """
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRoleBinding
                        metadata: {name: "system:coredns"}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
                        subjects:
                        - {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns"}
                        """)
                .serverSideApply();
        // kube-dns: a Service without selector whose one endpoint is CoreDNS on the node IP
        client.resource(
                        """
                        apiVersion: v1
                        kind: Service
                        metadata:
                          name: kube-dns
                          namespace: kube-system
                          labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
                        spec:
                          clusterIP: %s
                          ports:
                          - {name: dns, port: 53, protocol: UDP, targetPort: 53}
                          - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
                        """
                                .formatted(dnsServiceIp()))
                .serverSideApply();
        client.resource(
                        """
                        apiVersion: discovery.k8s.io/v1
                        kind: EndpointSlice
                        metadata:
                          name: kube-dns-coredns
                          namespace: kube-system
                          labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: inferencebench-real-node}
                        addressType: IPv4
                        endpoints:
                        - addresses: ["%s"]
                          conditions: {ready: true}
                          nodeName: %s
                        ports:
                        - {name: dns, port: 53, protocol: UDP}
                        - {name: dns-tcp, port: 53, protocol: TCP}
                        """
                                .formatted(nodeIp(), NODE_NAME))
                .serverSideApply();
        Path kubeconfig = ddir.resolve("coredns.kubeconfig");
        Pki pki = controlPlane.pki();
        Pki.writeString(
                kubeconfig,
                pki.kubeconfig(
                        controlPlane.apiServerUrl(),
                        "system:coredns",
                        pki.client("system:coredns")));
        corednsReadyPort = LocalControlPlane.freePort("127.0.0.1");
        // No forward plugin: names outside the cluster are not resolved (the machine's network
        // is closed; traffic stays on this host).
        Files.writeString(
                ddir.resolve("Corefile"),
                """
                cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
                    bind %s
                    errors
                    ready 127.0.0.1:%d
                    kubernetes cluster.local in-addr.arpa ip6.arpa {
                        kubeconfig %s local
                        pods insecure
                        fallthrough in-addr.arpa ip6.arpa
                        ttl 5
                    }
                    cache 5
                    loadbalance
                }
                """
                        .formatted(nodeIp(), corednsReadyPort, kubeconfig));
        coredns =
                spawn(
                        "coredns",
                        List.of(
                                parts.coredns().toString(),
                                "-conf",
                                ddir.resolve("Corefile").toString()));
    }

    private void awaitNodeReady(Duration timeout) {
        KubernetesClient client = controlPlane.adminClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "not registered";
        while (System.nanoTime() < deadline) {
            for (ChildProcess p : processes) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(
                            p.name() + " exited with " + p.process().exitValue());
                }
            }
            Node node = client.nodes().withName(NODE_NAME).get();
            if (node != null && node.getStatus() != null) {
                for (NodeCondition c : node.getStatus().getConditions()) {
                    if ("Ready".equals(c.getType())) {
                        if ("True".equals(c.getStatus())) {
                            return;
                        }
                        last = c.getReason() + ": " + c.getMessage();
                    }
                }
            }
            LocalControlPlane.sleep(200);
        }
        throw new IllegalStateException("node " + NODE_NAME + " not Ready: " + last);
    }

    private static void awaitHealthy(ChildProcess process, String url) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        process.name() + " exited with " + process.process().exitValue());
            }
            try {
                HttpResponse<String> r =
                        http.send(
                                HttpRequest.newBuilder(URI.create(url))
                                        .timeout(Duration.ofSeconds(2))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
                last = r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            LocalControlPlane.sleep(200);
        }
        throw new IllegalStateException(process.name() + " not healthy at " + url + ": " + last);
    }

    // ---------------------------------------------------------------- API

    public LocalControlPlane controlPlane() {
        return controlPlane;
    }

    public KubernetesClient adminClient() {
        return controlPlane.adminClient();
    }

    public Path directory() {
        return dir;
    }

    public String nodeName() {
        return NODE_NAME;
    }

    public String cgroupDriver() {
        return cgroupDriver;
    }

    /** Time from the call to start until each phase ended (provisioning, node Ready, ...). */
    public Map<String, Duration> startupPhases() {
        return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(phases));
    }

    /** Imports an image tarball into the CRI namespace ({@code ctr -n k8s.io images import}). */
    public Result importImage(Path tarball) {
        return ctr(
                List.of("-n", "k8s.io", "images", "import", tarball.toString()),
                Duration.ofMinutes(3));
    }

    public Result ctr(List<String> args, Duration timeout) {
        List<String> argv = new ArrayList<>(List.of("ctr", "--address", socket.toString()));
        argv.addAll(args);
        return run(argv, timeout);
    }

    public Map<String, Path> logFiles() {
        return ChildProcess.logFiles(processes);
    }

    private ChildProcess spawn(String name, List<String> command) {
        ChildProcess p =
                ChildProcess.start(
                        name, command, Map.of(), false, dir, dir.resolve("logs/" + name + ".log"));
        processes.add(p);
        try {
            Files.writeString(
                    dir.resolve("pids"),
                    p.pid() + " " + name + "\n",
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /**
     * If this JVM dies without its shutdown hooks (SIGKILL, a test-runner timeout), a detached
     * shell kills the node's process groups; the next start restores the rest of the host state.
     */
    private void startWatchdog() {
        StringBuilder groups = new StringBuilder();
        processes.forEach(p -> groups.append(" -").append(p.pid()));
        watchdog =
                ChildProcess.start(
                        "watchdog",
                        List.of(
                                "sh",
                                "-c",
                                "while kill -0 "
                                        + ProcessHandle.current().pid()
                                        + " 2>/dev/null; do sleep 1; done; env kill -KILL --"
                                        + groups
                                        + " 2>/dev/null"),
                        Map.of(),
                        false,
                        dir,
                        dir.resolve("logs/watchdog.log"));
    }

    private void phase(String name) {
        phases.put(name, Duration.ofNanos(System.nanoTime() - startNanos));
    }

    // ---------------------------------------------------------------- teardown

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (Thread.currentThread() != shutdownHook) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running
            }
        }
        try {
            if (controlPlane != null && kubelet != null && kubelet.isAlive()) {
                NodeDrain.deleteWorkloads(controlPlane.adminClient(), this);
            }
        } catch (RuntimeException e) {
            System.err.println("[real-node] deleting workloads: " + e);
        }
        stop(kubeProxy);
        if (kubeProxy != null) {
            run(
                    List.of(
                            parts.k8sBin().resolve("kube-proxy").toString(),
                            "--cleanup",
                            "--proxy-mode=nftables"),
                    Duration.ofSeconds(30));
        }
        stop(kubelet);
        if (containerd != null && containerd.isAlive()) {
            NodeDrain.removeSandboxes(this);
        }
        stop(containerd);
        stop(coredns);
        if (watchdog != null) {
            watchdog.kill();
        }
        if (controlPlane != null) {
            controlPlane.close();
        }
        NodeCleanup.cleanUp(dir);
        locks.release();
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            System.err.println("[real-node] cleanup after a failed start: " + e);
        }
    }

    private static void stop(ChildProcess p) {
        if (p != null) {
            p.stop(Duration.ofSeconds(10));
        }
    }

    // ---------------------------------------------------------------- commands

    static Result run(List<String> argv, Duration timeout) {
        return Command.run(argv, timeout);
    }
}
