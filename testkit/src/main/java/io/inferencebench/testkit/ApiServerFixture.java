package io.inferencebench.testkit;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * API-server-only fixture: etcd + kube-apiserver started through fabric8 kube-api-test (no
 * controllers, no scheduler, ServiceAccount admission off). Start it once per JVM with {@link
 * #shared()}, or let JUnit inject it: {@code @ExtendWith(ApiServerFixture.Extension.class)} then
 * take {@link KubernetesClient} or {@link ApiServerFixture} as a test/lifecycle parameter.
 *
 * <p>kube-api-test is configured only through its builder: its environment variables crash released
 * versions. Each fixture gets a private kube-api-test directory (certificates) whose {@code k8s/}
 * entry links to the shared binary cache, so concurrent JVMs do not interfere. It holds the API
 * server's private keys: {@link #close()} deletes it, keys first, and a JVM that died before it
 * could is cleaned up after by the next fixture ({@link TempDirs}).
 */
public final class ApiServerFixture implements AutoCloseable {

    /** Prefix of the private directories in {@code java.io.tmpdir}. */
    public static final String WORK_DIR_PREFIX = "ib-kubeapitest-";

    private static ApiServerFixture shared;

    private final KubeAPIServer server;
    private final Path workDir;
    private final String kubeconfigYaml;
    private final KubernetesClient client;
    private final Duration startupTime;

    private ApiServerFixture() {
        reapOrphans();
        Path binaries = K8sBinaries.directory();
        try {
            workDir = TempDirs.create(WORK_DIR_PREFIX);
            Path k8s = Files.createDirectories(workDir.resolve("k8s"));
            Files.createSymbolicLink(k8s.resolve(binaries.getFileName()), binaries);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        var config =
                KubeAPIServerConfigBuilder.anAPIServerConfig()
                        .withTestDir(workDir.toString())
                        .withApiServerVersion(K8sBinaries.version())
                        .withOfflineMode(true)
                        .withUpdateKubeConfig(false)
                        .withWaitForEtcdHealthCheckOnStartup(true)
                        .withStartupTimeout(120_000)
                        .build();
        long start = System.nanoTime();
        server = new KubeAPIServer(config);
        server.start();
        startupTime = Duration.ofNanos(System.nanoTime() - start);
        kubeconfigYaml = server.getKubeConfigYaml();
        client = newClient();
    }

    /**
     * Stops the kube-apiserver and etcd of fixtures whose JVM died without closing them (SIGKILL, a
     * CI timeout): they are recognised by their private work directory in the command line and by
     * having lost their parent (re-parented to init). A live fixture of another JVM still has its
     * parent, so concurrent test runs are left alone. The data and WAL directories of such an etcd
     * (kube-api-test makes them in {@code java.io.tmpdir}) go with it.
     */
    static void reapOrphans() {
        ProcessHandle.allProcesses()
                .filter(
                        p ->
                                p.info()
                                        .commandLine()
                                        .map(c -> c.contains("/" + WORK_DIR_PREFIX))
                                        .orElse(false))
                .filter(p -> p.parent().map(parent -> parent.pid() == 1).orElse(true))
                .forEach(
                        p -> {
                            List<Path> etcdDirs =
                                    etcdDirectories(p.info().arguments().orElse(new String[0]));
                            p.destroyForcibly();
                            p.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> p).join();
                            etcdDirs.forEach(TempDirs::delete);
                        });
    }

    /** The {@code -data-dir} and {@code -wal-dir} of an etcd command line. */
    static List<Path> etcdDirectories(String[] arguments) {
        List<Path> dirs = new ArrayList<>();
        for (int i = 0; i + 1 < arguments.length; i++) {
            if (arguments[i].equals("-data-dir") || arguments[i].equals("-wal-dir")) {
                dirs.add(Path.of(arguments[i + 1]));
            }
        }
        return dirs;
    }

    /** Starts a new, private API server. Close it when done. */
    public static ApiServerFixture start() {
        return new ApiServerFixture();
    }

    /** The JVM-wide instance, started on first use and stopped at JVM exit. */
    public static synchronized ApiServerFixture shared() {
        if (shared == null) {
            ApiServerFixture fixture = new ApiServerFixture();
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(fixture::close, "ib-apiserver-shutdown"));
            shared = fixture;
        }
        return shared;
    }

    /** A client shared by callers of this fixture; do not close it. */
    public KubernetesClient client() {
        return client;
    }

    /** A new client (caller closes it). */
    public KubernetesClient newClient() {
        return new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(kubeconfigYaml))
                .build();
    }

    public String kubeconfigYaml() {
        return kubeconfigYaml;
    }

    public Duration startupTime() {
        return startupTime;
    }

    /** The private directory (certificates, keys, the binaries' link); gone after close. */
    Path workDir() {
        return workDir;
    }

    @Override
    public synchronized void close() {
        try {
            client.close();
        } finally {
            server.stop();
            TempDirs.delete(workDir);
        }
    }

    /** Injects the shared fixture or its client into JUnit 5 tests. */
    public static final class Extension implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            Class<?> type = parameter.getParameter().getType();
            return type == KubernetesClient.class || type == ApiServerFixture.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            ApiServerFixture fixture = shared();
            return parameter.getParameter().getType() == ApiServerFixture.class
                    ? fixture
                    : fixture.client();
        }
    }
}
