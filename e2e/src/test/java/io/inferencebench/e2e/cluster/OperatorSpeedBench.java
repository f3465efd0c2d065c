package io.inferencebench.e2e.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageResult;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.testkit.ClusterDumpExtension;
import io.inferencebench.testkit.ImageMap;
import io.inferencebench.testkit.LocalCluster;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Operator speed on the local control plane (issue 4, item 4): apply → runner Job latency, many
 * concurrent small BenchmarkRuns, and the operator's resident memory meanwhile.
 *
 * <p>A benchmark, not a test tier: the name matches neither {@code *IT} nor {@code *E2E}, so only
 * {@code -Dit.test=OperatorSpeedBench} runs it (see docs/benchmarks.md, "Operator speed"). It
 * asserts correctness (every run Succeeded with the right counts) but no timing: the figures are
 * printed and written to {@code target/bench/operator-speed.txt}.
 *
 * <p>Knobs: {@code -Dbench.latencyRuns} (50), {@code -Dbench.concurrentRuns} (100), {@code
 * -Dbench.numPrompts} (3).
 */
@ExtendWith(ClusterDumpExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorSpeedBench {

    static final String RUNNER_IMAGE = "ghcr.io/inferencebench/runner:bench";
    static final String MODEL = "tiny-model";
    static final String OPERATOR_NAMESPACE = "inferencebench-system";

    static final int LATENCY_RUNS = Integer.getInteger("bench.latencyRuns", 50);
    static final int CONCURRENT_RUNS = Integer.getInteger("bench.concurrentRuns", 100);
    static final int NUM_PROMPTS = Integer.getInteger("bench.numPrompts", 3);

    private static Path repoRoot;
    private static LocalCluster cluster;
    private static KubernetesClient client;
    private static volatile Process operator;
    private static volatile Path operatorLog;
    private static List<String> operatorCommand;
    private static Path operatorKubeconfig;
    private static int operatorStarts;
    private static final List<String> report =
            Collections.synchronizedList(
                    new ArrayList<>() {
                        @Override
                        public boolean add(String line) {
                            // printed at once: a run stopped midway still leaves its figures
                            System.out.println("[operator-speed] " + line);
                            return super.add(line);
                        }
                    });

    @BeforeAll
    static void startClusterAndOperator() throws IOException {
        repoRoot = findRepoRoot();
        Path copies = Path.of("target", "operator-speed").toAbsolutePath();
        OperatorFixtures.PackagedJars jars = OperatorFixtures.privateJarCopies(repoRoot, copies);
        Path operatorCopy = jars.operatorJar();
        Path runnerCopy = jars.runnerJar();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Many runner JVMs share 2 cores: C1 only, one GC thread, small heap (the tiny runs need
        // little); the operator is unchanged and runs as packaged.
        cluster =
                LocalCluster.shared(
                        node ->
                                node.images(ImageMap.defaults())
                                        .image(
                                                "ghcr.io/inferencebench/runner*",
                                                ImageMap.Mapping.of(
                                                        java,
                                                        "-XX:TieredStopAtLevel=1",
                                                        "-XX:+UseSerialGC",
                                                        "-XX:ActiveProcessorCount=1",
                                                        "-Xshare:auto",
                                                        "-Xss512k",
                                                        "-Xmx96m",
                                                        "-jar",
                                                        runnerCopy.toString()))
                                        .capacity("pods", String.valueOf(CONCURRENT_RUNS + 20))
                                        .restartBackoff(Duration.ofSeconds(1)));
        client = cluster.client();
        installCrd();
        Path kubeconfig = installOperatorIdentity(copies.resolve("operator.kubeconfig"));
        operatorLog = copies.resolve("operator.log");
        operatorCommand =
                List.of(
                        java,
                        "-Xmx256m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-Dquarkus.http.port=0",
                        "-jar",
                        operatorCopy.toString());
        operatorKubeconfig = kubeconfig;
        startOperator();
        report.add(
                "operator JVM flags: -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 (as"
                        + " OperatorProcess)");
    }

    private static synchronized void startOperator() throws IOException {
        operatorStarts++;
        operatorLog = operatorLog.resolveSibling("operator-" + operatorStarts + ".log");
        ProcessBuilder builder = new ProcessBuilder(operatorCommand);
        builder.environment().put("KUBECONFIG", operatorKubeconfig.toString());
        builder.environment().put("RUNNER_IMAGE", RUNNER_IMAGE);
        builder.environment().remove("KUBERNETES_SERVICE_HOST");
        builder.redirectErrorStream(true).redirectOutput(operatorLog.toFile());
        operator = builder.start();
    }

    /**
     * What the operator's Deployment does in a cluster: a leader that cannot renew its lease in
     * time exits, and the kubelet starts it again. Returns whether it had to.
     */
    private static synchronized boolean restartOperatorIfExited() {
        if (operator.isAlive()) {
            return false;
        }
        try {
            startOperator();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return true;
    }

    @AfterAll
    static void stopOperatorAndWriteReport() throws IOException, InterruptedException {
        if (operator != null) {
            operator.destroy();
            if (!operator.waitFor(10, TimeUnit.SECONDS)) {
                operator.destroyForcibly();
            }
        }
        Path out = Path.of("target", "bench", "operator-speed.txt");
        Files.createDirectories(out.getParent());
        Files.write(out, report);
        System.out.println(String.join("\n", report));
    }

    // ------------------------------------------------------------------ benchmarks

    /**
     * Apply → runner Job: one run at a time, the clock from just before the create request to the
     * Job's ADDED event on a watch. A ResourceQuota (pods: 1, the simulator's) keeps the Jobs from
     * starting runner JVMs, so every sample sees the same idle machine.
     */
    @Test
    @Order(1)
    void applyToRunnerJobLatency() throws Exception {
        String ns = newNamespace("latency");
        deploySimulator(ns);
        awaitSimulatorReady(ns);
        client.resourceQuotas()
                .inNamespace(ns)
                .resource(
                        new ResourceQuotaBuilder()
                                .withNewMetadata()
                                .withName("no-runner-pods")
                                .endMetadata()
                                .withNewSpec()
                                .addToHard("pods", new Quantity("1"))
                                .endSpec()
                                .build())
                .create();
        Map<String, CompletableFuture<Long>> jobSeen = new ConcurrentHashMap<>();
        Watch watch =
                client.batch()
                        .v1()
                        .jobs()
                        .inNamespace(ns)
                        .watch(
                                new Watcher<Job>() {
                                    @Override
                                    public void eventReceived(Action action, Job job) {
                                        long now = System.nanoTime();
                                        if (action == Action.ADDED) {
                                            jobSeen.computeIfAbsent(
                                                            job.getMetadata().getName(),
                                                            k -> new CompletableFuture<>())
                                                    .complete(now);
                                        }
                                    }

                                    @Override
                                    public void onClose(WatcherException cause) {}
                                });
        try {
            // warm-up: the operator's first reconcile loads classes and opens connections
            for (int i = 0; i < 3; i++) {
                timeApplyToJob(ns, "warm-" + i, jobSeen);
            }
            long[] micros = new long[LATENCY_RUNS];
            for (int i = 0; i < LATENCY_RUNS; i++) {
                micros[i] = timeApplyToJob(ns, "lat-" + i, jobSeen);
            }
            long[] sorted = micros.clone();
            java.util.Arrays.sort(sorted);
            report.add(
                    "apply -> runner Job over %d runs: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, min"
                                    .formatted(
                                            LATENCY_RUNS,
                                            percentile(sorted, 50) / 1000.0,
                                            percentile(sorted, 90) / 1000.0,
                                            percentile(sorted, 99) / 1000.0)
                            + " %.1f ms, max %.1f ms; load average %s"
                                    .formatted(
                                            sorted[0] / 1000.0,
                                            sorted[sorted.length - 1] / 1000.0,
                                            loadAverage()));
            report.add("operator after latency: " + operatorMemory());
            assertThat(sorted).hasSize(LATENCY_RUNS);
        } finally {
            watch.close();
            client.namespaces().withName(ns).delete();
        }
    }

    private static long timeApplyToJob(
            String ns, String name, Map<String, CompletableFuture<Long>> jobSeen) throws Exception {
        CompletableFuture<Long> seen =
                jobSeen.computeIfAbsent(ResourceNames.runner(name), k -> new CompletableFuture<>());
        long start = System.nanoTime();
        createRun(ns, runYaml(name, 1));
        long end = seen.get(60, TimeUnit.SECONDS);
        // one run in flight at a time: the next sample does not queue behind this one
        client.resources(BenchmarkRun.class).inNamespace(ns).withName(name).delete();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(50))
                .until(
                        () ->
                                client.resources(BenchmarkRun.class)
                                                .inNamespace(ns)
                                                .withName(name)
                                                .get()
                                        == null);
        return (end - start) / 1000;
    }

    /**
     * {@value #CONCURRENT_RUNS} one-stage runs created at once against one simulator; each must end
     * Succeeded with one profile whose counts equal {@code numPrompts}. The operator's VmRSS is
     * sampled every 250 ms meanwhile; VmHWM is the kernel's peak.
     */
    @Test
    @Order(2)
    void concurrentRunsAllSucceed() throws Exception {
        String ns = newNamespace("many");
        deploySimulator(ns);
        awaitSimulatorReady(ns);
        AtomicLong peakRssKb = new AtomicLong();
        AtomicLong peakRunningPods = new AtomicLong();
        AtomicLong peakHwmKb = new AtomicLong();
        AtomicLong restarts = new AtomicLong();
        ExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        ((java.util.concurrent.ScheduledExecutorService) sampler)
                .scheduleAtFixedRate(
                        () -> {
                            peakRssKb.accumulateAndGet(rssKb("VmRSS"), Math::max);
                            peakHwmKb.accumulateAndGet(rssKb("VmHWM"), Math::max);
                            if (restartOperatorIfExited()) {
                                restarts.incrementAndGet();
                            }
                        },
                        0,
                        250,
                        TimeUnit.MILLISECONDS);
        double peakLoad = 0;
        long start = System.nanoTime();
        ExecutorService creators = Executors.newFixedThreadPool(8);
        try {
            List<CompletableFuture<Void>> creates = new ArrayList<>();
            for (int i = 0; i < CONCURRENT_RUNS; i++) {
                String name = "run-" + i;
                creates.add(
                        CompletableFuture.runAsync(
                                () -> createRun(ns, runYaml(name, NUM_PROMPTS)), creators));
            }
            CompletableFuture.allOf(creates.toArray(CompletableFuture[]::new))
                    .get(2, TimeUnit.MINUTES);
            long created = System.nanoTime();
            long deadline = created + TimeUnit.MINUTES.toNanos(25);
            int terminal = 0;
            String lastPhases = "";
            long lastProgress = System.nanoTime();
            while (System.nanoTime() < deadline) {
                List<BenchmarkRun> runs =
                        client.resources(BenchmarkRun.class).inNamespace(ns).list().getItems();
                terminal =
                        (int)
                                runs.stream()
                                        .filter(
                                                r ->
                                                        r.getStatus() != null
                                                                && isTerminal(
                                                                        r.getStatus().getPhase()))
                                        .count();
                long running =
                        client
                                .pods()
                                .inNamespace(ns)
                                .withLabel("job-name")
                                .list()
                                .getItems()
                                .stream()
                                .filter(p -> "Running".equals(p.getStatus().getPhase()))
                                .count();
                peakRunningPods.accumulateAndGet(running, Math::max);
                peakLoad = Math.max(peakLoad, Double.parseDouble(loadAverage().split(" ")[0]));
                if (terminal == CONCURRENT_RUNS) {
                    break;
                }
                // progress = any run changed phase; runs finish in a burst at the end
                String phases =
                        runs.stream()
                                .map(
                                        r ->
                                                r.getStatus() == null
                                                        ? ""
                                                        : "" + r.getStatus().getPhase())
                                .sorted()
                                .toList()
                                .toString();
                if (!phases.equals(lastPhases)) {
                    lastPhases = phases;
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > TimeUnit.MINUTES.toNanos(3)) {
                    report.add("no run changed phase for 3 min; stopped waiting");
                    break;
                }
                Thread.sleep(1000);
            }
            double wallSeconds = (System.nanoTime() - start) / 1e9;
            sampler.shutdownNow();
            List<BenchmarkRun> runs =
                    client.resources(BenchmarkRun.class).inNamespace(ns).list().getItems();
            List<String> wrong = new ArrayList<>();
            for (BenchmarkRun run : runs) {
                String problem = checkRun(run);
                if (problem != null) {
                    String pods =
                            client
                                    .pods()
                                    .inNamespace(ns)
                                    .withLabel(
                                            "job-name",
                                            ResourceNames.runner(run.getMetadata().getName()))
                                    .list()
                                    .getItems()
                                    .stream()
                                    .map(
                                            p ->
                                                    p.getMetadata().getName()
                                                            + " "
                                                            + p.getStatus().getPhase())
                                    .toList()
                                    .toString();
                    wrong.add(
                            run.getMetadata().getName() + ": " + problem + ", runner pods " + pods);
                }
            }
            int correct = runs.size() - wrong.size();
            report.add(
                    "%d concurrent runs (1 stage, %d prompts, parallelism 1): %d created, %d"
                                    .formatted(CONCURRENT_RUNS, NUM_PROMPTS, runs.size(), terminal)
                            + " terminal, %d correct (Succeeded, 1 profile, counts = %d); wall %.1f s"
                                    .formatted(correct, NUM_PROMPTS, wallSeconds)
                            + " (creates took %.1f s); peak runner pods Running at once %d; peak 1-min load %.2f"
                                    .formatted(
                                            (created - start) / 1e9,
                                            peakRunningPods.get(),
                                            peakLoad));
            report.add(
                    ("operator RSS during the concurrent runs: sampled peak VmRSS %d MB, peak VmHWM"
                                    + " %d MB; operator restarts after exiting (lost lease) %d")
                            .formatted(
                                    peakRssKb.get() / 1024,
                                    Math.max(peakHwmKb.get(), rssKb("VmHWM")) / 1024,
                                    restarts.get()));
            if (!wrong.isEmpty()) {
                report.add("not correct: " + wrong.subList(0, Math.min(10, wrong.size())));
            }
            assertThat(runs).hasSize(CONCURRENT_RUNS);
            assertThat(wrong).as("runs not Succeeded with the right counts").isEmpty();
        } finally {
            sampler.shutdownNow();
            creators.shutdownNow();
        }
        client.namespaces().withName(ns).delete();
    }

    /** Null when the run Succeeded with one profile whose counts equal numPrompts. */
    private static String checkRun(BenchmarkRun run) {
        var status = run.getStatus();
        if (status == null || status.getPhase() != Phase.SUCCEEDED) {
            return "phase "
                    + (status == null ? null : status.getPhase())
                    + " "
                    + (status == null ? "" : status.getMessage());
        }
        if (status.getProfiles() == null || status.getProfiles().size() != 1) {
            return "profiles " + (status.getProfiles() == null ? 0 : status.getProfiles().size());
        }
        if (status.getResults() == null || status.getResults().size() != 1) {
            return "results " + status.getResults();
        }
        JsonNode metrics = status.getProfiles().get(0).get("metrics");
        StageResult result = status.getResults().get(0);
        if (metrics == null
                || metrics.path("requests_sent").asLong() != NUM_PROMPTS
                || metrics.path("completed").asLong() != NUM_PROMPTS
                || metrics.path("failures").asLong() != 0
                || result.getSent() != NUM_PROMPTS
                || result.getCompleted() != NUM_PROMPTS) {
            return "counts: profile " + metrics + ", result sent " + result.getSent();
        }
        return null;
    }

    private static boolean isTerminal(Phase phase) {
        return phase == Phase.SUCCEEDED || phase == Phase.FAILED || phase == Phase.CANCELLED;
    }

    private static long percentile(long[] sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static long rssKb(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + operator.pid() + "/status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process may just have exited; the caller keeps its last peak
        }
        return 0;
    }

    private static String operatorMemory() {
        return "VmRSS %d MB, VmHWM %d MB".formatted(rssKb("VmRSS") / 1024, rssKb("VmHWM") / 1024);
    }

    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException e) {
            return "? ? ?";
        }
    }

    // ------------------------------------------------------------------ fixtures

    private static String runYaml(String name, int numPrompts) {
        return """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target:
                    service: {name: sim, port: 8000}
                    backend: vllm
                    api: completions
                    model: %s
                    readinessTimeout: 2m
                  workload:
                    dataset:
                      type: random
                      inputTokens: {type: fixed, mean: 8}
                      outputTokens: {type: fixed, mean: 4}
                      seed: 7
                    streaming: true
                    ignoreEos: true
                  load:
                    requestRates: [50]
                    numPrompts: %d
                    arrival: constant
                    warmupRequests: 0
                    cooldown: 1s
                    requestTimeout: 60s
                  runner:
                    parallelism: 1
                    startTimeout: 20m
                """
                .formatted(name, MODEL, numPrompts);
    }

    private static void createRun(String ns, String yaml) {
        client.resources(BenchmarkRun.class)
                .inNamespace(ns)
                .load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)))
                .create();
    }

    private static String newNamespace(String prefix) {
        String name = prefix + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .build())
                .create();
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.serviceAccounts().inNamespace(name).withName("default").get()
                                        != null);
        try (InputStream yaml =
                Files.newInputStream(repoRoot.resolve("config/rbac/runner/runner.yaml"))) {
            for (HasMetadata item : client.load(yaml).items()) {
                item.getMetadata().setNamespace(name);
                client.resource(item).inNamespace(name).create();
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return name;
    }

    /** The simulator as a Deployment + Service {@code sim:8000}, 5 ms TTFT, 1 ms ITL. */
    private static void deploySimulator(String ns) {
        SimulatorDeployment.named("sim")
                .model(MODEL)
                .timeToFirstToken(5)
                .interTokenLatency(1)
                .maxNumSeqs(1024)
                .create(client, ns);
    }

    private static void awaitSimulatorReady(String ns) {
        SimulatorDeployment.named("sim").awaitReady(client, ns, Duration.ofSeconds(120));
    }

    private static void installCrd() throws IOException {
        OperatorFixtures.installCrd(client);
    }

    private static Path installOperatorIdentity(Path kubeconfig) throws IOException {
        return OperatorFixtures.installOperatorIdentity(client, cluster, repoRoot, kubeconfig);
    }

    private static Path findRepoRoot() {
        return OperatorFixtures.findRepoRoot();
    }
}
