package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.testkit.Command.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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
 */
public final class RealNode implements AutoCloseable {

    public static final String NODE_NAME = "ib-node";
    static final Path DEFAULT_DIR = Path.of("/var/tmp/inferencebench/node");
    private static final Path RUN_CONTAINERD = Path.of("/run/containerd");
    private static final Path CONTAINER_LOGS = Path.of("/var/log/containers");

    /**
     * Fixed host paths the parts use whatever their configured roots: kubelet's device-plugin
     * socket ({@code /var/lib/kubelet/device-plugins}), libcni's result cache ({@code
     * /var/lib/cni}). Removed at teardown when the node created them (recorded at start).
     */
    static final List<Path> FIXED_PATHS =
            List.of(Path.of("/var/lib/kubelet"), Path.of("/var/lib/cni"));

    private static final String CGROUP_ROOT = "inferencebench-node";
    private static final String CNI_NETWORK = "ib-node";

    /**
     * What kubelet's setupKernelTunables writes: restored at teardown. The other sysctls of {@link
     * HostState#SYSCTLS} are only compared by tests (nothing of the node writes them; restoring
     * them could undo another program's change).
     */
    static final List<String> KUBELET_SYSCTLS =
            List.of(
                    "vm.overcommit_memory",
                    "vm.panic_on_oom",
                    "kernel.panic",
                    "kernel.panic_on_oops",
                    "kernel.keys.root_maxkeys",
                    "kernel.keys.root_maxbytes");

    private final Path dir;
    private LocalControlPlane controlPlane;
    private Provisioned parts;
    private final List<ChildProcess> processes = new ArrayList<>();
    private final Map<String, Duration> phases = new LinkedHashMap<>();
    private final long startNanos = System.nanoTime();
    private final Thread shutdownHook;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final MachineLock machineLock;
    private final Path socket;
    private final String cgroupDriver;
    private ChildProcess containerd;
    private ChildProcess kubelet;
    private ChildProcess kubeProxy;
    private ChildProcess coredns;
    private ChildProcess watchdog;
    private boolean closed;

    /** Paths of the parts provision-node.sh provides. */
    record Provisioned(Path k8sBin, Path coredns, Path pauseTar, String pauseRef) {}

    private RealNode(Path dir, FileChannel lockChannel, FileLock lock, MachineLock machineLock) {
        this.dir = dir;
        this.machineLock = machineLock;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.socket = dir.resolve("containerd/containerd.sock");
        this.cgroupDriver = detectCgroupDriver();
        this.shutdownHook = new Thread(this::close, "ib-real-node-shutdown");
        try {
            parts = provision();
            phase("provisioned");
            recordHostState();
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
            String logs = describeProcesses();
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
            long deadline = System.nanoTime() + MachineLock.DEFAULT_WAIT.toNanos();
            MachineLock machineLock =
                    MachineLock.acquire(
                            MachineLock.file(), MachineLock.DEFAULT_WAIT, "a real node in " + dir);
            Path lockFile = dir.getParent().resolve(dir.getFileName() + ".lock");
            FileChannel channel =
                    FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = awaitNodeLock(channel, lockFile, dir, deadline);
            } catch (RuntimeException e) {
                channel.close();
                machineLock.close();
                throw e;
            }
            cleanUpStale(dir);
            Files.createDirectories(dir);
            Files.writeString(
                    dir.resolve("owner.pid"), Long.toString(ProcessHandle.current().pid()));
            return new RealNode(dir, channel, lock, machineLock);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The node directory's own lock (a Java file lock: a node started without the machine lock,
     * e.g. by a demo whose shell has let go of it, still excludes a second one), waited for until
     * {@code deadline}; prints once whom it waits for.
     */
    private static FileLock awaitNodeLock(
            FileChannel channel, Path lockFile, Path dir, long deadline) throws IOException {
        boolean told = false;
        while (true) {
            FileLock lock = channel.tryLock();
            if (lock != null) {
                return lock;
            }
            String owner = "unknown";
            try {
                owner =
                        MachineLock.describe(
                                Long.parseLong(Files.readString(dir.resolve("owner.pid")).strip()));
            } catch (IOException | NumberFormatException e) {
                // starting or gone
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "another real node runs on this machine (lock "
                                + lockFile
                                + " still held after "
                                + MachineLock.DEFAULT_WAIT
                                + ", owner "
                                + owner
                                + " per "
                                + dir.resolve("owner.pid")
                                + ")");
            }
            if (!told) {
                System.err.println(
                        "[real-node] waiting for "
                                + lockFile
                                + " (another real node runs: owner "
                                + owner
                                + ")");
                told = true;
            }
            LocalControlPlane.sleep(1000);
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

    // ---------------------------------------------------------------- provisioning

    private static Provisioned provision() {
        Map<String, String> kv = new LinkedHashMap<>();
        String envBin = System.getenv("IB_NODE_PARTS");
        Path script = findScript("e2e/scripts/provision-node.sh");
        if (envBin != null && !envBin.isBlank()) {
            // KEY=VALUE lines as provision-node.sh prints them
            try {
                for (String l : Files.readAllLines(Path.of(envBin))) {
                    int eq = l.indexOf('=');
                    if (eq > 0) {
                        kv.put(l.substring(0, eq), l.substring(eq + 1).strip());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        } else if (script != null) {
            try {
                Process p =
                        new ProcessBuilder("bash", script.toString())
                                .redirectError(ProcessBuilder.Redirect.INHERIT)
                                .start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(60, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    throw new IllegalStateException(
                            script + " failed (exit " + p.exitValue() + "); its output is above");
                }
                for (String l : out.split("\n")) {
                    int eq = l.indexOf('=');
                    if (eq > 0) {
                        kv.put(l.substring(0, eq), l.substring(eq + 1).strip());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run " + script, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        } else {
            throw new IllegalStateException(
                    "e2e/scripts/provision-node.sh not found above "
                            + Path.of("").toAbsolutePath()
                            + " and IB_NODE_PARTS not set");
        }
        for (String key : List.of("K8S_BIN", "COREDNS", "PAUSE_TAR", "PAUSE_REF")) {
            if (!kv.containsKey(key)) {
                throw new IllegalStateException("provision-node.sh did not report " + key);
            }
        }
        Provisioned parts =
                new Provisioned(
                        Path.of(kv.get("K8S_BIN")),
                        Path.of(kv.get("COREDNS")),
                        Path.of(kv.get("PAUSE_TAR")),
                        kv.get("PAUSE_REF"));
        for (Path p :
                List.of(
                        parts.k8sBin().resolve("kubelet"),
                        parts.k8sBin().resolve("kube-proxy"),
                        parts.coredns(),
                        parts.pauseTar())) {
            if (!Files.exists(p)) {
                throw new IllegalStateException(
                        "missing " + p + ": run e2e/scripts/provision-node.sh");
            }
        }
        for (String tool : List.of("containerd", "ctr", "runc", "nft", "iptables", "ip")) {
            if (!run(List.of("sh", "-c", "command -v " + tool), Duration.ofSeconds(5)).ok()) {
                throw new IllegalStateException(
                        "missing " + tool + " on PATH: run e2e/scripts/provision-node.sh");
            }
        }
        return parts;
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

    static boolean cgroupV2() {
        return Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"));
    }

    static boolean systemdIsInit() {
        try {
            return "systemd".equals(readPseudoFile(Path.of("/proc/1/comm")).strip());
        } catch (IOException e) {
            return false;
        }
    }

    /** systemd where systemd manages cgroup v2 (a usual developer host), else cgroupfs. */
    static String detectCgroupDriver() {
        return cgroupV2() && systemdIsInit() ? "systemd" : "cgroupfs";
    }

    /** Reads a procfs/cgroupfs file to its end (Files.readString trusts a size they misreport). */
    static String readPseudoFile(Path file) throws IOException {
        try (var in = Files.newInputStream(file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

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

    // ---------------------------------------------------------------- host state record

    private void recordHostState() {
        try {
            Properties sysctls = new Properties();
            for (String name : KUBELET_SYSCTLS) {
                String v = HostState.sysctl(name);
                if (v != null) {
                    sysctls.setProperty(name, v);
                }
            }
            try (var out = Files.newOutputStream(dir.resolve("sysctls.before"))) {
                sysctls.store(out, "sysctls before the node started; restored at teardown");
            }
            Files.write(dir.resolve("nft-tables.before"), HostState.lines("nft", "list", "tables"));
            for (String cmd : List.of("iptables", "ip6tables")) {
                for (String table : HostState.IPTABLES_TABLES) {
                    Files.write(
                            dir.resolve(cmd + "-" + table + ".before"),
                            HostState.lines(cmd, "-t", table, "-S"));
                }
            }
            if (!Files.exists(RUN_CONTAINERD)) {
                Files.createDirectories(RUN_CONTAINERD);
                Files.writeString(dir.resolve("created-run-containerd"), "");
            }
            if (!Files.exists(CONTAINER_LOGS)) {
                Files.writeString(dir.resolve("created-var-log-containers"), "");
            }
            List<String> absent = new ArrayList<>();
            for (Path p : FIXED_PATHS) {
                if (!Files.exists(p)) {
                    absent.add(p.toString());
                }
            }
            Files.write(dir.resolve("absent-paths.before"), absent);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        boolean v1 = !cgroupV2();
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
            createCgroupRoot();
            config.append("cgroupRoot: /" + CGROUP_ROOT + "\n");
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

    /** kubelet wants its cgroup root to exist in every hierarchy (cpuset: with cpus and mems). */
    private static void createCgroupRoot() throws IOException {
        Path fs = Path.of("/sys/fs/cgroup");
        if (cgroupV2()) {
            Path root = Files.createDirectories(fs.resolve(CGROUP_ROOT));
            String controllers = readPseudoFile(fs.resolve("cgroup.subtree_control")).strip();
            for (String c : controllers.split("\\s+")) {
                if (!c.isBlank()) {
                    try {
                        Files.writeString(root.resolve("cgroup.subtree_control"), "+" + c);
                    } catch (IOException e) {
                        // a controller that cannot be delegated here; kubelet reports what it needs
                    }
                }
            }
            return;
        }
        try (Stream<Path> hierarchies = Files.list(fs)) {
            for (Path h : hierarchies.toList()) {
                String name = h.getFileName().toString();
                // every hierarchy, named ones (systemd) included: kubelet checks them all
                if (Files.isSymbolicLink(h) || !Files.isDirectory(h)) {
                    continue;
                }
                Path root = h.resolve(CGROUP_ROOT);
                Files.createDirectories(root);
                if (name.equals("cpuset")) {
                    for (String f : List.of("cpuset.cpus", "cpuset.mems")) {
                        if (readPseudoFile(root.resolve(f)).isBlank()) {
                            Files.writeString(
                                    root.resolve(f), readPseudoFile(h.resolve(f)).strip());
                        }
                    }
                }
            }
        }
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
        Map<String, Path> logs = new LinkedHashMap<>();
        processes.forEach(p -> logs.put(p.name(), p.logFile()));
        return logs;
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

    private String describeProcesses() {
        StringBuilder out = new StringBuilder();
        for (ChildProcess p : processes) {
            out.append("---- ")
                    .append(p.name())
                    .append(
                            p.isAlive()
                                    ? " (running)"
                                    : " (exited " + p.process().exitValue() + ")")
                    .append(" log tail:\n")
                    .append(p.tail(25))
                    .append('\n');
        }
        return out.toString();
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
            deleteWorkloads();
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
            removeSandboxes();
        }
        stop(containerd);
        stop(coredns);
        if (watchdog != null) {
            watchdog.kill();
        }
        if (controlPlane != null) {
            controlPlane.close();
        }
        cleanUp(dir);
        releaseLock();
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            System.err.println("[real-node] cleanup after a failed start: " + e);
        }
    }

    private void releaseLock() {
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            // the lock goes with the process anyway
        }
        machineLock.close();
    }

    private static void stop(ChildProcess p) {
        if (p != null) {
            p.stop(Duration.ofSeconds(10));
        }
    }

    /** Deletes controllers and pods on the node so that kubelet stops sandboxes (CNI DEL). */
    private void deleteWorkloads() {
        if (controlPlane == null || kubelet == null || !kubelet.isAlive()) {
            return;
        }
        KubernetesClient c = controlPlane.adminClient();
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
                            .withField("spec.nodeName", NODE_NAME)
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
                && !ctr(List.of("-n", "k8s.io", "tasks", "ls", "-q"), Duration.ofSeconds(10))
                        .output()
                        .isBlank()) {
            LocalControlPlane.sleep(300);
        }
    }

    private void removeSandboxes() {
        String tasks =
                ctr(List.of("-n", "k8s.io", "tasks", "ls", "-q"), Duration.ofSeconds(10)).output();
        for (String id : tasks.split("\n")) {
            if (!id.isBlank()) {
                ctr(
                        List.of("-n", "k8s.io", "tasks", "kill", "-s", "KILL", id.strip()),
                        Duration.ofSeconds(10));
                ctr(
                        List.of("-n", "k8s.io", "tasks", "rm", "-f", id.strip()),
                        Duration.ofSeconds(10));
            }
        }
        String containers =
                ctr(List.of("-n", "k8s.io", "containers", "ls", "-q"), Duration.ofSeconds(10))
                        .output();
        for (String id : containers.split("\n")) {
            if (!id.isBlank()) {
                ctr(
                        List.of("-n", "k8s.io", "containers", "rm", id.strip()),
                        Duration.ofSeconds(10));
            }
        }
    }

    /** A crashed earlier run (dead owner) is cleaned up; the caller holds the lock. */
    static void cleanUpStale(Path dir) {
        if (Files.exists(dir)) {
            System.err.println("[real-node] cleaning up what an earlier run left in " + dir);
            cleanUp(dir);
        }
    }

    /**
     * Removes every trace a node under {@code dir} may have left, running or crashed, and restores
     * the host state recorded when it started.
     */
    static void cleanUp(Path dir) {
        killRecordedProcesses(dir);
        killByCommandLine(dir.resolve("containerd/containerd.sock").toString());
        killCgroup();
        unmountUnder(dir);
        removeCgroups();
        removeContainerLogLinks(dir);
        restoreSysctls(dir);
        removeIptablesRules(dir);
        removeNftTables(dir);
        if (Files.exists(dir.resolve("created-run-containerd"))) {
            // only what is empty: another containerd may have its shim sockets here
            run(
                    List.of(
                            "sh",
                            "-c",
                            "rmdir "
                                    + RUN_CONTAINERD
                                    + "/s "
                                    + RUN_CONTAINERD
                                    + " 2>/dev/null; true"),
                    Duration.ofSeconds(5));
        }
        removeCreatedPaths(dir);
        if (Files.exists(dir.resolve("created-var-log-containers"))) {
            run(
                    List.of("sh", "-c", "rmdir " + CONTAINER_LOGS + " 2>/dev/null; true"),
                    Duration.ofSeconds(5));
        }
        deleteTree(dir);
    }

    /**
     * Removes the fixed paths that did not exist before the node started. Where they did exist
     * (e.g. the host runs a kubelet of its own), only this node's CNI result cache entries go.
     */
    private static void removeCreatedPaths(Path dir) {
        Path file = dir.resolve("absent-paths.before");
        try {
            List<String> absent = Files.exists(file) ? Files.readAllLines(file) : List.of();
            for (Path p : FIXED_PATHS) {
                if (absent.contains(p.toString())) {
                    if (HostState.mounts().stream().noneMatch(m -> m.startsWith(p.toString()))) {
                        run(
                                List.of("rm", "-rf", "--one-file-system", p.toString()),
                                Duration.ofSeconds(30));
                    }
                }
            }
            Path results = Path.of("/var/lib/cni/results");
            if (Files.isDirectory(results)) {
                try (Stream<Path> entries = Files.list(results)) {
                    for (Path r : entries.toList()) {
                        if (r.getFileName().toString().startsWith(CNI_NETWORK + "-")) {
                            Files.deleteIfExists(r);
                        }
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("[real-node] removing fixed paths: " + e);
        }
    }

    private static void killRecordedProcesses(Path dir) {
        Path pids = dir.resolve("pids");
        if (!Files.exists(pids)) {
            return;
        }
        try {
            for (String l : Files.readAllLines(pids)) {
                String[] f = l.strip().split(" ");
                if (f.length < 1 || f[0].isEmpty()) {
                    continue;
                }
                long pid = Long.parseLong(f[0]);
                // only if it is still ours: every component's command line names the node dir
                String cmdline = cmdline(pid);
                if (cmdline.contains(dir.toString())) {
                    run(List.of("kill", "-KILL", "--", "-" + pid), Duration.ofSeconds(5));
                    run(List.of("kill", "-KILL", Long.toString(pid)), Duration.ofSeconds(5));
                }
            }
        } catch (IOException | NumberFormatException e) {
            System.err.println("[real-node] reading " + pids + ": " + e);
        }
    }

    private static String cmdline(long pid) {
        try {
            return new String(
                            Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                            StandardCharsets.UTF_8)
                    .replace('\0', ' ');
        } catch (IOException e) {
            return "";
        }
    }

    /** Kills, by PID, the processes whose command line contains {@code marker} (our shims). */
    private static void killByCommandLine(String marker) {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.map(p -> p.getFileName().toString())
                    .filter(n -> n.chars().allMatch(Character::isDigit))
                    .map(Long::parseLong)
                    .filter(pid -> pid != ProcessHandle.current().pid())
                    .filter(pid -> cmdline(pid).contains(marker))
                    .forEach(
                            pid ->
                                    run(
                                            List.of("kill", "-KILL", Long.toString(pid)),
                                            Duration.ofSeconds(5)));
        } catch (IOException e) {
            System.err.println("[real-node] listing /proc: " + e);
        }
    }

    private static List<Path> cgroupDirs() {
        List<Path> dirs = new ArrayList<>();
        Path v2 = Path.of("/sys/fs/cgroup", CGROUP_ROOT);
        if (Files.isDirectory(v2)) {
            dirs.add(v2);
        }
        try (Stream<Path> controllers = Files.list(Path.of("/sys/fs/cgroup"))) {
            controllers
                    .map(c -> c.resolve(CGROUP_ROOT))
                    .filter(Files::isDirectory)
                    .filter(d -> !d.equals(v2))
                    .forEach(dirs::add);
        } catch (IOException e) {
            // no cgroup fs
        }
        return dirs;
    }

    /** Kills what still runs in the pods' cgroups (a crashed run's containers). */
    private static void killCgroup() {
        for (Path root : cgroupDirs()) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path procs :
                        files.filter(f -> f.getFileName().toString().equals("cgroup.procs"))
                                .toList()) {
                    for (String pid : Files.readAllLines(procs)) {
                        if (!pid.isBlank()) {
                            run(List.of("kill", "-KILL", pid.strip()), Duration.ofSeconds(5));
                        }
                    }
                }
            } catch (IOException | UncheckedIOException e) {
                // raced with removal
            }
        }
    }

    private static void removeCgroups() {
        for (Path root : cgroupDirs()) {
            for (int attempt = 0; attempt < 20 && Files.exists(root); attempt++) {
                run(
                        List.of(
                                "find",
                                root.toString(),
                                "-depth",
                                "-type",
                                "d",
                                "-exec",
                                "rmdir",
                                "{}",
                                ";"),
                        Duration.ofSeconds(10));
                if (Files.exists(root)) {
                    LocalControlPlane.sleep(250);
                }
            }
        }
    }

    private static void unmountUnder(Path dir) {
        for (int pass = 0; pass < 3; pass++) {
            List<String> mounts =
                    HostState.mounts().stream()
                            .filter(m -> m.startsWith(dir + "/"))
                            .sorted(Comparator.reverseOrder())
                            .toList();
            if (mounts.isEmpty()) {
                return;
            }
            for (String m : mounts) {
                run(List.of("umount", "-l", m), Duration.ofSeconds(10));
            }
        }
    }

    private static void removeContainerLogLinks(Path dir) {
        if (!Files.isDirectory(CONTAINER_LOGS)) {
            return;
        }
        try (Stream<Path> links = Files.list(CONTAINER_LOGS)) {
            for (Path link : links.filter(Files::isSymbolicLink).toList()) {
                if (Files.readSymbolicLink(link).toString().startsWith(dir.toString())) {
                    Files.deleteIfExists(link);
                }
            }
        } catch (IOException e) {
            System.err.println("[real-node] cleaning " + CONTAINER_LOGS + ": " + e);
        }
    }

    private static void restoreSysctls(Path dir) {
        Path file = dir.resolve("sysctls.before");
        if (!Files.exists(file)) {
            return;
        }
        Properties before = new Properties();
        try (var in = Files.newInputStream(file)) {
            before.load(in);
        } catch (IOException e) {
            System.err.println("[real-node] reading " + file + ": " + e);
            return;
        }
        for (String name : before.stringPropertyNames()) {
            String want = before.getProperty(name);
            if (!want.equals(HostState.sysctl(name))) {
                try {
                    Files.writeString(HostState.sysctlPath(name), want);
                } catch (IOException e) {
                    System.err.println(
                            "[real-node] cannot restore " + name + "=" + want + ": " + e);
                }
            }
        }
    }

    private static void removeNftTables(Path dir) {
        Path file = dir.resolve("nft-tables.before");
        if (!Files.exists(file)) {
            return;
        }
        try {
            List<String> before = Files.readAllLines(file);
            for (String table : HostState.lines("nft", "list", "tables")) {
                // only new tables: kube-proxy's, and the iptables-nft tables (ip/ip6 filter, nat,
                // mangle) that kubelet's iptables calls created, once no rule is left in them
                if (table.isBlank() || before.contains(table)) {
                    continue;
                }
                List<String> words = List.of(table.strip().split("\\s+"));
                boolean iptablesTable =
                        words.size() == 3
                                && List.of("ip", "ip6").contains(words.get(1))
                                && List.of("filter", "nat", "mangle").contains(words.get(2));
                if (table.contains("kube-proxy")
                        || (iptablesTable && noRules(words.get(1), words.get(2)))) {
                    List<String> argv = new ArrayList<>(List.of("nft", "delete"));
                    argv.addAll(words);
                    run(argv, Duration.ofSeconds(10));
                }
            }
        } catch (IOException e) {
            System.err.println("[real-node] nft cleanup: " + e);
        }
    }

    /** Whether an nft table holds nothing but (base) chains without rules. */
    static boolean noRules(String family, String table) {
        return HostState.lines("nft", "list", "table", family, table).stream()
                .map(String::strip)
                .allMatch(
                        l ->
                                l.isEmpty()
                                        || l.startsWith("table ")
                                        || l.startsWith("chain ")
                                        || l.equals("}")
                                        || (l.startsWith("type ") && l.endsWith("policy accept;")));
    }

    /**
     * Removes the KUBE-* iptables rules and chains that appeared since the node started (kubelet's
     * KUBE-FIREWALL and KUBE-KUBELET-CANARY, and the jumps to them): rules first, then the chains.
     */
    private static void removeIptablesRules(Path dir) {
        for (String cmd : List.of("iptables", "ip6tables")) {
            for (String table : HostState.IPTABLES_TABLES) {
                Path file = dir.resolve(cmd + "-" + table + ".before");
                if (!Files.exists(file)) {
                    continue;
                }
                try {
                    List<String> before = Files.readAllLines(file);
                    List<String> now = HostState.lines(cmd, "-t", table, "-S");
                    List<String> newChains = new ArrayList<>();
                    for (String rule : now) {
                        // only kubelet's (KUBE-*): rules other programs add meanwhile stay
                        if (rule.isBlank() || before.contains(rule) || !rule.contains("KUBE-")) {
                            continue;
                        }
                        if (rule.startsWith("-A ")) {
                            List<String> argv = new ArrayList<>(List.of(cmd, "-t", table, "-D"));
                            argv.addAll(splitRule(rule.substring(3)));
                            run(argv, Duration.ofSeconds(10));
                        } else if (rule.startsWith("-N ")) {
                            newChains.add(rule.substring(3).strip());
                        }
                    }
                    for (String chain : newChains) {
                        run(List.of(cmd, "-t", table, "-F", chain), Duration.ofSeconds(10));
                        run(List.of(cmd, "-t", table, "-X", chain), Duration.ofSeconds(10));
                    }
                } catch (IOException e) {
                    System.err.println("[real-node] iptables cleanup: " + e);
                }
            }
        }
    }

    /** Splits an {@code iptables -S} rule into arguments, keeping double-quoted words whole. */
    static List<String> splitRule(String rule) {
        List<String> out = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        for (char ch : rule.toCharArray()) {
            if (ch == '"') {
                quoted = !quoted;
            } else if (ch == ' ' && !quoted) {
                if (!word.isEmpty()) {
                    out.add(word.toString());
                    word.setLength(0);
                }
            } else {
                word.append(ch);
            }
        }
        if (!word.isEmpty()) {
            out.add(word.toString());
        }
        return out;
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        // never follow into a mount that is still there
        if (HostState.mounts().stream().anyMatch(m -> m.startsWith(dir + "/"))) {
            System.err.println("[real-node] mounts left under " + dir + "; not deleting it");
            return;
        }
        run(List.of("rm", "-rf", "--one-file-system", dir.toString()), Duration.ofSeconds(60));
    }

    // ---------------------------------------------------------------- commands

    static Result run(List<String> argv, Duration timeout) {
        return Command.run(argv, timeout);
    }
}
