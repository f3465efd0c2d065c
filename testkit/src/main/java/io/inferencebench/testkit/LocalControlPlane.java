package io.inferencebench.testkit;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A real, local Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler as child processes, with a generated PKI and kubeconfig.
 *
 * <ul>
 *   <li>Authorization {@code Node,RBAC}; admission defaults plus {@code NodeRestriction}; the
 *       ServiceAccount admission plugin and token signing are on (TokenRequest works), the
 *       controller manager runs each controller with its own ServiceAccount credentials and
 *       publishes the root CA ({@code kube-root-ca.crt}) into every namespace.
 *   <li>Identities: {@link #adminClient()} is {@code admin} in {@code system:masters}; {@link
 *       #clientConfig(String, String...)} issues a client certificate for any user and groups (e.g.
 *       a node: {@code system:node:<name>} in {@code system:nodes}).
 *   <li>The API server listens on the pod network's gateway address (see {@link PodNetwork}) so
 *       that pods in their network namespaces reach it as the {@code kubernetes} Service would be
 *       reached; ports are chosen free at start; data lives in a temporary directory.
 *   <li>{@link #close()} (also run by a JVM shutdown hook) kills every process tree and removes the
 *       network and data.
 * </ul>
 *
 * <p>Use {@link #shared()} for one instance per JVM, or {@link #start()} for a private one.
 */
public final class LocalControlPlane implements AutoCloseable {

    private static final String ISSUER = "https://kubernetes.default.svc.cluster.local";

    /**
     * Controllers that matter without a cloud, CSI or autoscaler; leaving out the rest makes the
     * controller manager start (and be ready for pods) seconds sooner on a small machine.
     */
    static final List<String> CONTROLLERS =
            List.of(
                    "serviceaccount-token-controller",
                    "serviceaccount-controller",
                    "root-ca-certificate-publisher-controller",
                    "namespace-controller",
                    "garbage-collector-controller",
                    "pod-garbage-collector-controller",
                    "deployment-controller",
                    "replicaset-controller",
                    "replicationcontroller-controller",
                    "statefulset-controller",
                    "daemonset-controller",
                    "job-controller",
                    "cronjob-controller",
                    "ttl-after-finished-controller",
                    "endpoints-controller",
                    "endpointslice-controller",
                    "endpointslice-mirroring-controller",
                    "node-lifecycle-controller",
                    "taint-eviction-controller",
                    "disruption-controller",
                    "resourcequota-controller",
                    "clusterrole-aggregation-controller",
                    "certificatesigningrequest-signing-controller",
                    "certificatesigningrequest-approving-controller",
                    "persistentvolume-binder-controller",
                    "persistentvolumeclaim-protection-controller",
                    "persistentvolume-protection-controller");

    private static LocalControlPlane shared;

    private final Path dir;
    private final boolean deleteDirOnClose;
    private final PodNetwork network;
    private final Pki pki;
    private final Pki.Credential admin;
    private final List<ChildProcess> processes = new ArrayList<>();
    private final int apiServerPort;
    private final Path adminKubeconfig;
    private final Thread shutdownHook;
    private final Duration startupTime;
    private final Map<String, Duration> startupPhases = new java.util.LinkedHashMap<>();
    private final long startNanos = System.nanoTime();
    private KubernetesClient adminClient;
    private CompletableFuture<KubernetesClient> adminClientFuture;
    private ChildProcess watchdog;
    private ChildProcess controllerManager;
    private List<String> controllerManagerCommand;
    private ChildProcess etcd;
    private ChildProcess apiServer;
    private List<String> apiServerCommand;
    private boolean closed;

    private LocalControlPlane(Path dir, boolean deleteDirOnClose) {
        long start = System.nanoTime();
        this.dir = dir;
        this.deleteDirOnClose = deleteDirOnClose;
        this.shutdownHook = new Thread(this::close, "ib-control-plane-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        Path bin = K8sBinaries.directory();
        try {
            CompletableFuture<KeyPair> saKeys = CompletableFuture.supplyAsync(Pki::keyPair);
            CompletableFuture<Pki> ca =
                    CompletableFuture.supplyAsync(() -> Pki.newCa("inferencebench-local-ca"));
            int etcdPort = freePort("127.0.0.1");
            int etcdPeerPort = freePort("127.0.0.1");

            etcd =
                    spawn(
                            "etcd",
                            List.of(
                                    bin.resolve("etcd").toString(),
                                    "--name=local",
                                    "--data-dir=" + dir.resolve("etcd"),
                                    "--listen-client-urls=http://127.0.0.1:" + etcdPort,
                                    "--advertise-client-urls=http://127.0.0.1:" + etcdPort,
                                    "--listen-peer-urls=http://127.0.0.1:" + etcdPeerPort,
                                    "--initial-advertise-peer-urls=http://127.0.0.1:"
                                            + etcdPeerPort,
                                    "--initial-cluster=local=http://127.0.0.1:" + etcdPeerPort,
                                    "--unsafe-no-fsync=true",
                                    "--log-level=warn"));
            network = PodNetwork.create();
            String host = network.gateway();
            apiServerPort = freePort(host);

            phase("network+etcd spawned");
            pki = ca.join();
            Path pkiDir = dir.resolve("pki");
            Files.createDirectories(pkiDir);
            Pki.writeString(pkiDir.resolve("ca.crt"), pki.ca().certificatePem());
            Pki.writeString(pkiDir.resolve("ca.key"), pki.ca().keyPem());
            pki.server(
                            "kube-apiserver",
                            List.of(
                                    "localhost",
                                    "kubernetes",
                                    "kubernetes.default",
                                    "kubernetes.default.svc",
                                    "kubernetes.default.svc.cluster.local"),
                            List.of("127.0.0.1", host, network.serviceIp(1)))
                    .write(pkiDir.resolve("apiserver.crt"), pkiDir.resolve("apiserver.key"));
            admin = pki.client("admin", "system:masters");
            // the API server's identity towards kubelets (logs, exec, port-forward)
            pki.client("kube-apiserver-kubelet-client", "system:masters")
                    .write(
                            pkiDir.resolve("apiserver-kubelet-client.crt"),
                            pkiDir.resolve("apiserver-kubelet-client.key"));
            KeyPair sa = saKeys.join();
            Pki.writeString(pkiDir.resolve("sa.key"), Pki.pem(sa.getPrivate()));
            Pki.writeString(pkiDir.resolve("sa.pub"), Pki.pem(sa.getPublic()));

            phase("apiserver certificates");
            awaitPort("127.0.0.1", etcdPort, etcd);
            phase("etcd listening");
            apiServerCommand =
                    List.of(
                            bin.resolve("kube-apiserver").toString(),
                            "--etcd-servers=http://127.0.0.1:" + etcdPort,
                            "--bind-address=" + host,
                            "--advertise-address=" + host,
                            "--secure-port=" + apiServerPort,
                            "--cert-dir=" + dir.resolve("apiserver-certs"),
                            "--tls-cert-file=" + pkiDir.resolve("apiserver.crt"),
                            "--tls-private-key-file=" + pkiDir.resolve("apiserver.key"),
                            "--client-ca-file=" + pkiDir.resolve("ca.crt"),
                            "--kubelet-client-certificate="
                                    + pkiDir.resolve("apiserver-kubelet-client.crt"),
                            "--kubelet-client-key="
                                    + pkiDir.resolve("apiserver-kubelet-client.key"),
                            "--service-account-issuer=" + ISSUER,
                            "--service-account-key-file=" + pkiDir.resolve("sa.pub"),
                            "--service-account-signing-key-file=" + pkiDir.resolve("sa.key"),
                            "--authorization-mode=Node,RBAC",
                            "--enable-admission-plugins=NodeRestriction",
                            "--service-cluster-ip-range=" + network.serviceCidr(),
                            "--allow-privileged=true",
                            "--enable-priority-and-fairness=false",
                            "--kubelet-preferred-address-types=InternalIP,Hostname",
                            "--profiling=false",
                            "--v=1");
            apiServer = spawn("kube-apiserver", apiServerCommand);
            String serverUrl = "https://" + host + ":" + apiServerPort;
            adminKubeconfig = dir.resolve("admin.kubeconfig");
            Pki.writeString(adminKubeconfig, pki.kubeconfig(serverUrl, "admin", admin));
            Path kcmKubeconfig = dir.resolve("controller-manager.kubeconfig");
            Pki.writeString(
                    kcmKubeconfig,
                    pki.kubeconfig(
                            serverUrl,
                            "system:kube-controller-manager",
                            pki.client("system:kube-controller-manager")));
            Path schedulerKubeconfig = dir.resolve("scheduler.kubeconfig");
            Pki.writeString(
                    schedulerKubeconfig,
                    pki.kubeconfig(
                            serverUrl,
                            "system:kube-scheduler",
                            pki.client("system:kube-scheduler")));

            phase("client certificates");
            controllerManagerCommand =
                    List.of(
                            bin.resolve("kube-controller-manager").toString(),
                            "--kubeconfig=" + kcmKubeconfig,
                            "--kube-api-qps=200",
                            "--kube-api-burst=400",
                            "--secure-port=0",
                            "--leader-elect=false",
                            "--use-service-account-credentials=true",
                            "--controllers=" + String.join(",", CONTROLLERS),
                            "--service-account-private-key-file=" + pkiDir.resolve("sa.key"),
                            "--root-ca-file=" + pkiDir.resolve("ca.crt"),
                            "--cluster-signing-cert-file=" + pkiDir.resolve("ca.crt"),
                            "--cluster-signing-key-file=" + pkiDir.resolve("ca.key"),
                            "--service-cluster-ip-range=" + network.serviceCidr(),
                            "--profiling=false",
                            "--v=1");
            controllerManager = spawn("kube-controller-manager", controllerManagerCommand);
            spawn(
                    "kube-scheduler",
                    List.of(
                            bin.resolve("kube-scheduler").toString(),
                            "--kubeconfig=" + schedulerKubeconfig,
                            "--kube-api-qps=200",
                            "--kube-api-burst=400",
                            "--authentication-kubeconfig=" + schedulerKubeconfig,
                            "--authorization-kubeconfig=" + schedulerKubeconfig,
                            "--secure-port=0",
                            "--leader-elect=false",
                            "--profiling=false",
                            "--v=1"));

            startWatchdog();
            awaitReady(etcd);
            startupTime = Duration.ofNanos(System.nanoTime() - start);
        } catch (IOException e) {
            close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException | Error e) {
            String logs = ChildProcess.describe(processes, 30);
            close();
            throw new IllegalStateException("local control plane failed to start\n" + logs, e);
        }
    }

    /** Starts a private control plane in a new temporary directory. */
    public static LocalControlPlane start() {
        try {
            return new LocalControlPlane(Files.createTempDirectory("ib-control-plane-"), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts a control plane whose state (kubeconfig, logs, data) lives in {@code dir}. */
    public static LocalControlPlane start(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new LocalControlPlane(dir, false);
    }

    /** The JVM-wide instance, started on first use and stopped at JVM exit. */
    public static synchronized LocalControlPlane shared() {
        if (shared == null || shared.closed) {
            shared = start();
        }
        return shared;
    }

    static synchronized LocalControlPlane sharedIfStarted() {
        return shared;
    }

    private void awaitReady(ChildProcess etcd) {
        HttpClient http =
                HttpClient.newBuilder()
                        .sslContext(pki.sslContext(admin))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build();
        URI readyz = URI.create(apiServerUrl() + "/readyz");
        // building the first fabric8 client costs a second or more on a busy machine: overlap it
        CompletableFuture<KubernetesClient> client =
                CompletableFuture.supplyAsync(this::newAdminClient);
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        String last = "";
        while (true) {
            for (ChildProcess p : processes) {
                // kube-controller-manager waits only 10 s for a healthy API server and exits: on a
                // busy machine the API server can take longer, so it is started again below
                if (!p.isAlive() && p != controllerManager) {
                    throw new IllegalStateException(
                            p.name() + " exited with " + p.process().exitValue());
                }
            }
            try {
                HttpResponse<String> response =
                        http.send(
                                HttpRequest.newBuilder(readyz)
                                        .timeout(Duration.ofSeconds(5))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    break;
                }
                last = response.body();
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("kube-apiserver not ready: " + last);
            }
            sleep(100);
        }
        phase("apiserver ready");
        if (!controllerManager.isAlive()) {
            processes.remove(controllerManager);
            controllerManager = spawn("kube-controller-manager", controllerManagerCommand);
            // the watchdog signals the process groups it knew at its start
            watchdog.kill();
            startWatchdog();
            phase("kube-controller-manager started again");
        }
        // The controllers are ready for pods once the ServiceAccount and root-CA publishers have
        // filled the default namespace (pods need both for their token volume).
        while (status(http, "/api/v1/namespaces/default/serviceaccounts/default") != 200
                || status(http, "/api/v1/namespaces/default/configmaps/kube-root-ca.crt") != 200) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "kube-controller-manager did not create the default ServiceAccount and"
                                + " kube-root-ca.crt");
            }
            for (ChildProcess p : processes) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(
                            p.name() + " exited with " + p.process().exitValue());
                }
            }
            sleep(50);
        }
        phase("controllers ready");
        adminClientFuture = client;
    }

    /**
     * Stops kube-apiserver (SIGTERM, SIGKILL after 5 s) and starts it again with the same flags:
     * the same address, port, certificates, service-account keys and etcd, so every client's
     * kubeconfig stays valid and nothing stored is lost. Returns once {@code /readyz} answers 200.
     * Clients see refused connections in between, as during an API-server upgrade or crash.
     *
     * @return how long the API server was not serving (stop until ready)
     */
    public synchronized Duration restartApiServer() {
        if (closed) {
            throw new IllegalStateException("the control plane is closed");
        }
        long start = System.nanoTime();
        apiServer.stop(Duration.ofSeconds(5));
        processes.remove(apiServer);
        apiServer = spawn("kube-apiserver", apiServerCommand);
        // the watchdog signals the process groups it knew at its start
        if (watchdog != null) {
            watchdog.kill();
        }
        startWatchdog();
        awaitApiServerReady(Duration.ofSeconds(120));
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /**
     * Freezes etcd (SIGSTOP): the API server's reads and writes hang until {@link #resumeEtcd()}
     * (or time out), as with a stalled disk or an overloaded etcd member.
     */
    public void pauseEtcd() {
        etcd.signal("STOP");
    }

    /** Lets a paused etcd run again (SIGCONT). */
    public void resumeEtcd() {
        etcd.signal("CONT");
    }

    private void awaitApiServerReady(Duration timeout) {
        HttpClient http =
                HttpClient.newBuilder()
                        .sslContext(pki.sslContext(admin))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (status(http, "/readyz") != 200) {
            if (!apiServer.isAlive()) {
                throw new IllegalStateException(
                        "kube-apiserver exited with "
                                + apiServer.process().exitValue()
                                + " after the restart:\n"
                                + apiServer.tail(30));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "kube-apiserver not ready " + timeout + " after the restart");
            }
            sleep(100);
        }
    }

    private int status(HttpClient http, String path) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create(apiServerUrl() + path))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void awaitPort(String host, int port, ChildProcess process) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline && process.isAlive()) {
            try (java.net.Socket socket = new java.net.Socket()) {
                socket.connect(new InetSocketAddress(host, port), 200);
                return;
            } catch (IOException e) {
                sleep(20);
            }
        }
        throw new IllegalStateException(
                process.name() + " is not listening on " + host + ":" + port);
    }

    /**
     * Cleans up if this JVM dies without running its shutdown hooks (SIGKILL, a test-runner
     * timeout): a detached shell waits for the JVM to vanish, then kills the component process
     * groups and everything in the pod network namespaces and removes the network.
     */
    private void startWatchdog() {
        StringBuilder groups = new StringBuilder();
        processes.forEach(p -> groups.append(" -").append(p.pid()));
        String script =
                "while kill -0 "
                        + ProcessHandle.current().pid()
                        + " 2>/dev/null; do sleep 1; done; env kill -KILL --"
                        + groups
                        + " 2>/dev/null; "
                        + network.cleanupScript()
                        + (deleteDirOnClose ? "; rm -rf '" + dir + "'" : "");
        watchdog =
                ChildProcess.start(
                        "watchdog",
                        List.of("sh", "-c", script),
                        Map.of(),
                        false,
                        dir,
                        dir.resolve("logs").resolve("watchdog.log"));
    }

    private void phase(String name) {
        startupPhases.put(name, Duration.ofNanos(System.nanoTime() - startNanos));
    }

    /** Cumulative time at the end of each startup phase (for reports). */
    public Map<String, Duration> startupPhases() {
        return java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(startupPhases));
    }

    private ChildProcess spawn(String name, List<String> command) {
        ChildProcess process =
                ChildProcess.start(
                        name,
                        command,
                        Map.of(),
                        false,
                        dir,
                        dir.resolve("logs").resolve(name + ".log"));
        processes.add(process);
        return process;
    }

    public Path directory() {
        return dir;
    }

    public PodNetwork network() {
        return network;
    }

    /** The address pods and the host use for the API server (the pod network's gateway). */
    public String apiServerHost() {
        return network.gateway();
    }

    public int apiServerPort() {
        return apiServerPort;
    }

    public String apiServerUrl() {
        return "https://" + network.gateway() + ":" + apiServerPort;
    }

    public Path adminKubeconfig() {
        return adminKubeconfig;
    }

    /**
     * For an owner that closes this control plane from its own shutdown hook after tearing down
     * what runs on it ({@link RealNode}): the two hooks would otherwise run at the same time.
     */
    void removeShutdownHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hooks are running
        }
    }

    /** The cluster CA (issues node, proxy and DNS client certificates for {@link RealNode}). */
    Pki pki() {
        return pki;
    }

    public String caCertificatePem() {
        return pki.ca().certificatePem();
    }

    /** Time from the call to start until the API server was ready and controllers were running. */
    public Duration startupTime() {
        return startupTime;
    }

    /** A client with cluster-admin rights shared by callers; do not close it. */
    public synchronized KubernetesClient adminClient() {
        if (adminClient == null && adminClientFuture != null) {
            adminClient = adminClientFuture.join();
        }
        return adminClient;
    }

    public KubernetesClient newAdminClient() {
        return new KubernetesClientBuilder()
                .withConfig(ecConfig(pki.kubeconfig(apiServerUrl(), "admin", admin)))
                .build();
    }

    /** fabric8 assumes RSA client keys unless told otherwise; ours are ECDSA. */
    private static Config ecConfig(String kubeconfig) {
        Config config = Config.fromKubeconfig(kubeconfig);
        config.setClientKeyAlgo("EC");
        return config;
    }

    /** A TLS server context for a node's kubelet endpoint (the API server does not verify it). */
    javax.net.ssl.SSLContext kubeletTls(String nodeName, String address) {
        Pki.Credential serving = pki.server(nodeName, List.of(nodeName), List.of(address));
        try {
            char[] password = "changeit".toCharArray();
            java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry(
                    "kubelet",
                    serving.key(),
                    password,
                    new java.security.cert.X509Certificate[] {
                        serving.certificate(), pki.ca().certificate()
                    });
            var kmf =
                    javax.net.ssl.KeyManagerFactory.getInstance(
                            javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, password);
            javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, null);
            return context;
        } catch (java.security.GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build the kubelet TLS context", e);
        }
    }

    /** A client configuration authenticating as {@code user} in {@code groups} (client cert). */
    public Config clientConfig(String user, String... groups) {
        return ecConfig(pki.kubeconfig(apiServerUrl(), user, pki.client(user, groups)));
    }

    public Map<String, Path> logFiles() {
        return ChildProcess.logFiles(processes);
    }

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
                // the hook is running or about to
            }
        }

        if (adminClient != null) {
            adminClient.close();
        } else if (adminClientFuture != null) {
            adminClientFuture.thenAccept(KubernetesClient::close);
        }
        List<ChildProcess> reversed = new ArrayList<>(processes);
        java.util.Collections.reverse(reversed);
        for (ChildProcess process : reversed) {
            process.stop(Duration.ofSeconds(5));
        }
        if (network != null) {
            network.close();
        }
        if (watchdog != null) {
            watchdog.kill();
        }
        if (deleteDirOnClose) {
            ChildProcess.deleteRecursively(dir);
        }
    }

    static int freePort(String host) {
        return FreePorts.claim(host);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
