package io.inferencebench.e2e.images;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.e2e.HttpGet;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.e2e.ProjectImages;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.testkit.ApiServerFixture;
import io.inferencebench.testkit.Containerd;
import io.inferencebench.testkit.Containerd.ContainerOptions;
import io.inferencebench.testkit.TempDirCheck;
import io.inferencebench.testkit.TempDirs;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The image tarballs of {@code make images} (under {@code target/images/}): what their configs say,
 * and that they run as users run them — imported into a real containerd and started by runc with a
 * read-only root filesystem, /tmp as the only writable path, as the images' own non-root user. The
 * runner image benchmarks the simulator image; the operator image reconciles a BenchmarkRun against
 * a real kube-apiserver and creates the runner Job with its default image.
 */
@TempDirCheck({ImagesIT.SCRATCH + "{pid}-*"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ImagesIT {

    /** Prefix of the directories bound into containers (TempDirs: named after this JVM). */
    static final String SCRATCH = "ib-images-";

    /** The user every project image runs as. */
    private static final int IMAGE_USER = 65532;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path CONTAINERD_PARENT = Path.of("/var/tmp/inferencebench/containerd");

    private final Path repo = OperatorFixtures.findRepoRoot();
    private final ProjectImages images = ProjectImages.ofThisRepository();
    private final String tag = images.property("project.version");
    private final HttpClient http = HttpClient.newHttpClient();

    private Containerd containerd;
    private int simPort;

    @BeforeAll
    void startContainerdWithTheImages() throws Exception {
        for (String image : List.of("operator", "runner", "model-sim")) {
            assertThat(images.tarball(image)).as("image tarball (built by `make images`)").exists();
        }
        assertThat(Containerd.available())
                .as("containerd, ctr and runc on PATH (Debian packages containerd, runc)")
                .isTrue();
        containerd = Containerd.start(CONTAINERD_PARENT);
        for (String image : List.of("operator", "runner", "model-sim")) {
            var result = containerd.importImage(tarball(image));
            assertThat(result.ok()).as("ctr images import: " + result.output()).isTrue();
        }
        simPort = freePort();
        var sim =
                containerd.runDetached(
                        "model-sim",
                        reference("model-sim"),
                        ContainerOptions.hostNetwork(Duration.ofMinutes(1)),
                        withEntrypoint(
                                "model-sim",
                                List.of(
                                        "--model", "tiny",
                                        "--port", Integer.toString(simPort),
                                        "--time-to-first-token", "5",
                                        "--inter-token-latency", "1",
                                        "--max-num-seqs", "64")));
        assertThat(sim.ok()).as("model-sim container: " + sim.output()).isTrue();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(
                        () ->
                                HttpGet.get(http, "http://127.0.0.1:" + simPort + "/v1/models")
                                                .statusCode()
                                        == 200);
    }

    @AfterAll
    void stopContainerd() {
        if (containerd != null) {
            containerd.close();
            assertThat(containerd.home()).as("fixture directory removed").doesNotExist();
            assertThat(Path.of("/sys/fs/cgroup/memory", containerd.namespace()))
                    .as("cgroups of the fixture's namespace removed")
                    .doesNotExist();
        }
    }

    @Test
    void tarballsDescribeNonRootImagesWithEntrypointsAndLabels() throws Exception {
        String revision = git("rev-parse", "HEAD");
        for (String image : List.of("operator", "runner", "model-sim")) {
            JsonNode manifest = JSON.readTree(tarEntry(tarball(image), "manifest.json"));
            assertThat(manifest).hasSize(1);
            assertThat(manifest.get(0).get("RepoTags").get(0).asText()).isEqualTo(reference(image));
            JsonNode config =
                    JSON.readTree(tarEntry(tarball(image), manifest.get(0).get("Config").asText()))
                            .get("config");
            assertThat(config.get("User").asText()).as(image + " user").isEqualTo("65532:65532");
            assertThat(config.get("Entrypoint")).as(image + " entrypoint").isNotEmpty();
            JsonNode labels = config.get("Labels");
            assertThat(labels.get("org.opencontainers.image.version").asText()).isEqualTo(tag);
            assertThat(labels.get("org.opencontainers.image.source").asText())
                    .isEqualTo(images.property("image.source"));
            assertThat(labels.get("org.opencontainers.image.revision").asText())
                    .as(image + " revision label names a commit of this repository")
                    .matches("[0-9a-f]{40}(-dirty)?");
            assertThat(
                            git(
                                    "cat-file",
                                    "-t",
                                    labels.get("org.opencontainers.image.revision")
                                            .asText()
                                            .replace("-dirty", "")))
                    .isEqualTo("commit");
            assertThat(config.get("Env").toString()).contains("HOME=/tmp");
            if (image.equals("operator")) {
                assertThat(config.get("Env").toString()).contains("MALLOC_ARENA_MAX=2");
            }
        }
        assertThat(revision).isNotBlank();
        assertThat(entrypoint("runner"))
                .startsWith("java")
                .contains("-XX:TieredStopAtLevel=1", "-XX:MaxRAMPercentage=75", "-jar")
                .noneMatch(a -> a.startsWith("-Xmx") || a.startsWith("-Xms"));
        assertThat(entrypoint("operator"))
                .startsWith("java")
                .contains("-XX:MaxRAMPercentage=50", "/deployments/quarkus-run.jar")
                .noneMatch(a -> a.startsWith("-Xmx") || a.startsWith("-Xms"));
        assertThat(entrypoint("model-sim")).containsExactly("/usr/local/bin/model-sim");
    }

    @Test
    void imagesRunAsTheirNonRootUserOnAReadOnlyRoot() {
        var id =
                containerd.run(
                        "runner-id",
                        reference("runner"),
                        ContainerOptions.hostNetwork(Duration.ofMinutes(1)),
                        List.of(
                                "sh",
                                "-c",
                                "id -u; id -g; touch /probe 2>&1; touch /tmp/probe && echo tmp-ok"));
        assertThat(id.output())
                .contains("65532\n65532\n")
                .contains("Read-only file system", "tmp-ok");
        var version =
                containerd.run(
                        "runner-version",
                        reference("runner"),
                        ContainerOptions.hostNetwork(Duration.ofMinutes(1)),
                        withEntrypoint("runner", List.of("--version")));
        assertThat(version.ok()).as(version.output()).isTrue();
        assertThat(version.output()).contains("inferencebench-runner " + tag);
    }

    @Test
    void runnerImageBenchmarksTheSimulatorImage() throws Exception {
        Path results = forTheImageUser();
        try {
            benchmarksTheSimulatorInto(results);
        } finally {
            TempDirs.delete(results);
        }
    }

    private void benchmarksTheSimulatorInto(Path results) throws Exception {
        double before = successCount();
        var run =
                containerd.run(
                        "runner-run",
                        reference("runner"),
                        ContainerOptions.hostNetwork(Duration.ofMinutes(3))
                                .withBind(results.toString(), "/results"),
                        withEntrypoint(
                                "runner",
                                List.of(
                                        argv(
                                                "run --base-url %s --backend vllm --random-input-len 16"
                                                        + " --random-output-len 8 --request-rate 20 --num-prompts 30"
                                                        + " --result-dir /results",
                                                "http://127.0.0.1:" + simPort))));
        assertThat(run.ok()).as("runner container:\n" + run.output()).isTrue();
        // The image's JVM compiles with C1 only, and the runner says so.
        assertThat(run.output()).contains("JIT: C1 only (-XX:TieredStopAtLevel=1)");
        List<Path> profiles;
        try (Stream<Path> files = Files.list(results)) {
            profiles = files.filter(p -> p.toString().endsWith(".json")).toList();
        }
        assertThat(profiles).hasSize(1);
        JsonNode metrics = JSON.readTree(profiles.get(0).toFile()).get("metrics");
        assertThat(metrics.get("num_prompts").asInt()).isEqualTo(30);
        assertThat(metrics.get("total_output_token").asInt()).isEqualTo(30 * 8);
        // What the server itself counted, not what the client says it sent.
        assertThat(successCount() - before).isEqualTo(30.0);
    }

    @Test
    void runnerImageLoadsAHuggingFaceTokenizerOnAReadOnlyRoot() throws Exception {
        // The tokenizer library extracts its native library at first use: under /tmp, the only
        // writable path of the container.
        Path data = forTheImageUser();
        try {
            loadsTheTokenizerFrom(data);
        } finally {
            TempDirs.delete(data);
        }
    }

    private void loadsTheTokenizerFrom(Path data) throws Exception {
        Files.copy(
                repo.resolve("runner/src/test/resources/tokenizer/tokenizer.json"),
                data.resolve("tokenizer.json"));
        double before = successCount();
        var run =
                containerd.run(
                        "runner-tokenizer",
                        reference("runner"),
                        ContainerOptions.hostNetwork(Duration.ofMinutes(3))
                                .withBind(data.toString(), "/data"),
                        withEntrypoint(
                                "runner",
                                List.of(
                                        argv(
                                                "run --base-url %s --backend vllm"
                                                        + " --tokenizer /data/tokenizer.json --random-input-len 12"
                                                        + " --random-output-len 4 --request-rate 20 --num-prompts 10"
                                                        + " --result-dir /data/results",
                                                "http://127.0.0.1:" + simPort))));
        assertThat(run.ok()).as("runner container:\n" + run.output()).isTrue();
        assertThat(successCount() - before).isEqualTo(10.0);
        JsonNode profile;
        try (Stream<Path> files = Files.list(data.resolve("results"))) {
            profile =
                    JSON.readTree(
                            files.filter(p -> p.toString().endsWith(".json"))
                                    .findFirst()
                                    .orElseThrow()
                                    .toFile());
        }
        assertThat(profile.get("dimensions").get("tokenizer_id").asText())
                .contains("tokenizer.json");
    }

    @Test
    void operatorImageReconcilesABenchmarkRunAgainstARealApiServer() throws Exception {
        try (ApiServerFixture api = ApiServerFixture.start()) {
            KubernetesClient client = api.client();
            OperatorFixtures.installCrd(client);
            // The kubeconfig carries the client's private key: readable by the image's user only.
            Path kube = forTheImageUser();
            Path kubeconfig = kube.resolve("config");
            Files.writeString(kubeconfig, inlineFiles(api.kubeconfigYaml()));
            Files.setPosixFilePermissions(kubeconfig, PosixFilePermissions.fromString("rw-------"));
            Files.setAttribute(kubeconfig, "unix:uid", IMAGE_USER);
            Files.setAttribute(kubeconfig, "unix:gid", IMAGE_USER);
            int httpPort = freePort();
            var started =
                    containerd.runDetached(
                            "operator",
                            reference("operator"),
                            ContainerOptions.hostNetwork(Duration.ofMinutes(1))
                                    .withBind(kube.toString(), "/kube")
                                    .withEnv("KUBECONFIG", "/kube/config")
                                    .withEnv("QUARKUS_HTTP_PORT", Integer.toString(httpPort)),
                            withEntrypoint("operator", List.of()));
            try {
                assertThat(started.ok()).as(started.output()).isTrue();
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(500))
                        .ignoreExceptions()
                        .until(
                                () ->
                                        HttpGet.get(
                                                                http,
                                                                "http://127.0.0.1:"
                                                                        + httpPort
                                                                        + "/q/health/ready")
                                                        .statusCode()
                                                == 200);
                String ns = "images-it";
                client.namespaces()
                        .resource(
                                new NamespaceBuilder()
                                        .withNewMetadata()
                                        .withName(ns)
                                        .endMetadata()
                                        .build())
                        .create();
                client.serviceAccounts()
                        .inNamespace(ns)
                        .resource(
                                new ServiceAccountBuilder()
                                        .withNewMetadata()
                                        .withName("inferencebench-runner")
                                        .endMetadata()
                                        .build())
                        .create();
                String yaml =
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkRun
                        metadata: {name: from-image}
                        spec:
                          target: {url: "http://127.0.0.1:%d", backend: vllm, model: tiny}
                          load: {requestRates: [5], numPrompts: 10}
                          metrics: {enabled: false}
                        """
                                .formatted(simPort);
                BenchmarkRun run =
                        client.resources(BenchmarkRun.class)
                                .inNamespace(ns)
                                .load(
                                        new ByteArrayInputStream(
                                                yaml.getBytes(StandardCharsets.UTF_8)))
                                .item();
                client.resource(run).inNamespace(ns).create();
                Job job =
                        await().atMost(Duration.ofMinutes(1))
                                .pollInterval(Duration.ofMillis(250))
                                .until(
                                        () ->
                                                client.batch()
                                                        .v1()
                                                        .jobs()
                                                        .inNamespace(ns)
                                                        .withName("from-image-runner")
                                                        .get(),
                                        j -> j != null);
                var container = job.getSpec().getTemplate().getSpec().getContainers().get(0);
                assertThat(container.getImage())
                        .as("the operator image's default runner image")
                        .isEqualTo(reference("runner"));
                assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
                assertThat(HttpGet.get(http, "http://127.0.0.1:" + httpPort + "/q/metrics").body())
                        .contains("jvm_memory_used_bytes");
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(
                        "operator container log:\n" + containerd.containerLog("operator"), e);
            } finally {
                containerd.remove("operator");
                TempDirs.delete(kube);
            }
        }
    }

    /**
     * A directory to bind into a container, owned by the images' user and private to it ({@code
     * rwx------}): the container writes there as that user, nobody else can.
     */
    private static Path forTheImageUser() throws IOException {
        Path dir = TempDirs.create(SCRATCH);
        Files.setAttribute(dir, "unix:uid", IMAGE_USER);
        Files.setAttribute(dir, "unix:gid", IMAGE_USER);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                .as("never world-writable")
                .isEqualTo("rwx------");
        return dir;
    }

    /** The fixture's kubeconfig names certificate files on the host: carry their contents. */
    private static String inlineFiles(String kubeconfig) {
        Matcher m =
                Pattern.compile(
                                "(?m)^(\\s*)(certificate-authority|client-certificate|client-key): (\\S+)$")
                        .matcher(kubeconfig);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            try {
                String data =
                        java.util.Base64.getEncoder()
                                .encodeToString(Files.readAllBytes(Path.of(m.group(3))));
                m.appendReplacement(out, m.group(1) + m.group(2) + "-data: " + data);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        m.appendTail(out);
        return out.toString();
    }

    private double successCount() throws Exception {
        return SimulatorDeployment.requestSuccesses(
                http, "http://127.0.0.1:" + simPort + "/metrics");
    }

    private Path tarball(String image) {
        return images.tarball(image);
    }

    private String reference(String image) {
        return images.reference(image);
    }

    private List<String> entrypoint(String image) throws IOException {
        JsonNode manifest = JSON.readTree(tarEntry(tarball(image), "manifest.json"));
        JsonNode config =
                JSON.readTree(tarEntry(tarball(image), manifest.get(0).get("Config").asText()));
        List<String> argv = new ArrayList<>();
        config.get("config").get("Entrypoint").forEach(a -> argv.add(a.asText()));
        return argv;
    }

    /** ctr runs the given command instead of the image's entrypoint: prepend it. */
    private List<String> withEntrypoint(String image, List<String> args) {
        try {
            List<String> argv = new ArrayList<>(entrypoint(image));
            argv.addAll(args);
            return argv;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String tarEntry(Path tarball, String entry) throws IOException {
        Process p = new ProcessBuilder("tar", "-xOf", tarball.toString(), entry).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (p.waitFor() != 0) {
                throw new IOException("tar -xOf " + tarball + " " + entry + " failed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        return out;
    }

    private String git(String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("git", "-C", repo.toString()));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor();
        return out;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
