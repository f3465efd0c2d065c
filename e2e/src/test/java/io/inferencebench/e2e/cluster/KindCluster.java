package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.inferencebench.testkit.HostState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Kind cluster of {@code e2e/scripts/kind-cluster.sh}, mode {@code kind} of the {@link
 * TestCluster} switch ({@code -Dinferencebench.cluster=kind}): the kubeconfig comes from {@code
 * kind get kubeconfig}, images go in with {@code kind load image-archive}, and kubelet's container
 * logs are read from the host directory the script mounts over the node's {@code /var/log/pods}. A
 * cluster that is not running is created here and deleted by {@link #close()}; one that {@code make
 * e2e-kind} started is used and left to it.
 */
final class KindCluster implements TestCluster {

    private final Path script;
    private final Path stateDir;
    private final boolean startedHere;
    final String name;
    final Path kubeconfig;
    final Path podLogs;
    private final Path kind;
    private final Map<String, String> env = new HashMap<>();
    private final Map<String, List<String>> hostBefore;
    private KubernetesClient client;
    // dockerd's overlay mounts of the node container live under its data-root
    private static final Path DOCKER_DATA = Path.of("/var/lib/inferencebench/docker");

    private KindCluster(Path repo, Path workDir) {
        this.script = repo.resolve("e2e/scripts/kind-cluster.sh");
        this.stateDir =
                Path.of(System.getenv().getOrDefault("IB_KIND_DIR", "/tmp/inferencebench-kind"));
        boolean running = run(List.of("bash", script.toString(), "status"), Map.of(), false) == 0;
        this.hostBefore = running ? null : HostState.capture(DOCKER_DATA);
        if (!running) {
            long start = System.nanoTime();
            String out = exec(List.of("bash", script.toString(), "up"), Map.of());
            System.out.println(
                    "[KindCluster] kind-cluster.sh up in "
                            + (System.nanoTime() - start) / 1_000_000
                            + " ms: "
                            + out.strip());
        }
        this.startedHere = !running;
        Map<String, String> ready = keyValues(stateDir.resolve("ready"));
        Map<String, String> scriptEnv = keyValues(stateDir.resolve("env"));
        this.name = ready.get("name");
        this.podLogs = Path.of(ready.get("pod_logs"));
        this.kind = Path.of(scriptEnv.get("KIND"));
        env.put("PATH", scriptEnv.get("PATH").replace("\"", ""));
        if (!scriptEnv.getOrDefault("DOCKER_HOST", "").isEmpty()) {
            env.put("DOCKER_HOST", scriptEnv.get("DOCKER_HOST"));
        }
        try {
            Files.createDirectories(workDir);
            this.kubeconfig = workDir.resolve("kind-kubeconfig");
            Files.writeString(
                    kubeconfig, kind("get", "kubeconfig", "--name", name), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static KindCluster attach(Path repo, Path workDir) {
        return new KindCluster(repo, workDir);
    }

    /** Attaches to (or creates) the cluster for the repository this test runs in. */
    static KindCluster start() {
        Path repo = io.inferencebench.e2e.OperatorFixtures.findRepoRoot();
        return attach(repo, repo.resolve("e2e/target/chart-cluster"));
    }

    @Override
    public String mode() {
        return "kind";
    }

    @Override
    public String hostAddress() {
        String gateways =
                exec(
                        List.of(
                                "docker",
                                "network",
                                "inspect",
                                "kind",
                                "--format",
                                "{{range .IPAM.Config}}{{.Gateway}} {{end}}"),
                        env);
        return java.util.Arrays.stream(gateways.strip().split("\\s+"))
                .filter(g -> g.matches("\\d+\\.\\d+\\.\\d+\\.\\d+"))
                .findFirst()
                .orElseThrow(
                        () ->
                                new IllegalStateException(
                                        "docker network inspect kind: no IPv4 gateway in '"
                                                + gateways.strip()
                                                + "'"));
    }

    @Override
    public Path kubeconfig() {
        return kubeconfig;
    }

    @Override
    public synchronized KubernetesClient client() {
        if (client == null) {
            try {
                client =
                        new KubernetesClientBuilder()
                                .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
                                .build();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return client;
    }

    @Override
    public void importImages(List<Path> tarballs) {
        tarballs.forEach(this::loadImage);
    }

    @Override
    public Path podLogs() {
        return podLogs;
    }

    @Override
    public void copyLogs(Path dir) {
        exportLogs(dir);
    }

    /** {@code kind load image-archive TAR}: the image in the node's containerd (k8s.io). */
    void loadImage(Path tarball) {
        long start = System.nanoTime();
        kind("load", "image-archive", tarball.toString(), "--name", name);
        System.out.println(
                "[KindCluster] kind load image-archive "
                        + tarball.getFileName()
                        + " in "
                        + (System.nanoTime() - start) / 1_000_000
                        + " ms");
    }

    /** {@code kind export logs} into {@code dir}: node journal, kubelet, containerd, pods. */
    void exportLogs(Path dir) {
        run(List.of(kind.toString(), "export", "logs", dir.toString(), "--name", name), env, true);
    }

    String kind(String... args) {
        List<String> argv = new ArrayList<>();
        argv.add(kind.toString());
        argv.addAll(List.of(args));
        return exec(argv, env);
    }

    /** Deletes the cluster and restores the host when it was created here. */
    @Override
    public void close() {
        if (client != null) {
            client.close();
        }
        if (startedHere) {
            exec(List.of("bash", script.toString(), "down"), Map.of());
            assertThat(HostState.differences(hostBefore, HostState.capture(DOCKER_DATA)))
                    .as("host state before the Kind cluster started vs after it was deleted")
                    .isEmpty();
        }
    }

    private static Map<String, String> keyValues(Path file) {
        assertThat(file).as("state of e2e/scripts/kind-cluster.sh (is the cluster up?)").exists();
        Map<String, String> values = new HashMap<>();
        try {
            for (String line : Files.readAllLines(file)) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    values.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return values;
    }

    private static String exec(List<String> argv, Map<String, String> env) {
        StringBuilder out = new StringBuilder();
        int code = run(argv, env, true, out);
        assertThat(code).as("%s: %s", argv, out).isZero();
        return out.toString();
    }

    private static int run(List<String> argv, Map<String, String> env, boolean echo) {
        return run(argv, env, echo, new StringBuilder());
    }

    private static int run(
            List<String> argv, Map<String, String> env, boolean echo, StringBuilder out) {
        try {
            ProcessBuilder pb = new ProcessBuilder(argv);
            pb.environment().putAll(env);
            // the scripts' progress (stderr) goes to the test log, their result (stdout) here
            pb.redirectError(
                    echo ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.DISCARD);
            Process p = pb.start();
            out.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            assertThat(p.waitFor(15, TimeUnit.MINUTES)).as("%s finished", argv).isTrue();
            return p.exitValue();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
