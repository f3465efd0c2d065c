package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.e2e.SimulatorDeployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Operator speed on the cluster (issue 4, item 4; issue 13): apply → runner Job latency, many
 * concurrent small BenchmarkRuns, and the operator's resident memory meanwhile — the operator as
 * users install it ({@link ChartCluster}: the chart's Deployment with its default resources and JVM
 * flags, the runner and simulator images in the node's containerd, Pod Security {@code restricted}
 * namespaces), on the cluster of the {@link TestCluster} switch (the real node by default).
 *
 * <p>Operator memory: on the real node, from {@code /proc/<pid>/status} of the operator container's
 * process on the host (its pid from {@code ctr tasks ls}; {@code VmRSS} sampled every 500 ms,
 * {@code VmHWM} the kernel's peak); on every cluster also the kubelet's view, {@code stats/summary}
 * through the API server's node proxy (the container's cgroup {@code rssBytes} and {@code
 * workingSetBytes}, refreshed by the kubelet every 10-15 s, sampled every 2 s).
 *
 * <p>A benchmark, not a test tier: the name matches neither {@code *IT} nor {@code *E2E}, so only
 * {@code -Dit.test=OperatorSpeedBench} runs it (docs/benchmarks.md, "Operator speed"). It asserts
 * correctness (every run Succeeded with the right counts) but no timing: the figures are printed
 * and written to {@code target/bench/operator-speed.txt}.
 *
 * <p>Knobs: {@code -Dbench.latencyRuns} (50), {@code -Dbench.concurrentRuns} (100), {@code
 * -Dbench.numPrompts} (3), {@code -Dbench.runnerCpuRequest} (10m).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorSpeedBench {

    static final String MODEL = "tiny-model";
    static final String NS_LATENCY = "bench-latency";
    static final String NS_MANY = "bench-many";

    static final int LATENCY_RUNS = Integer.getInteger("bench.latencyRuns", 50);
    static final int CONCURRENT_RUNS = Integer.getInteger("bench.concurrentRuns", 100);
    static final int NUM_PROMPTS = Integer.getInteger("bench.numPrompts", 3);

    /**
     * Runner pods' CPU request: with 10m the node's pod limit bounds how many start at once (58 on
     * the real node); a larger request makes the scheduler start them in smaller waves.
     */
    static final String RUNNER_CPU = System.getProperty("bench.runnerCpuRequest", "10m");

    /**
     * The chart's {@code maxActiveRuns} (the operator's queue): 0 installs the chart's default (no
     * cap); a 2-core node completes a burst of 100 runs only with a cap.
     */
    static final int MAX_ACTIVE_RUNS = Integer.getInteger("bench.maxActiveRuns", 0);

    /**
     * More chart values for the install, {@code key=value} pairs separated by {@code ;} (e.g.
     * {@code -Dbench.chartSet=jvmOptions=-XX:NativeMemoryTracking=summary} to read the operator's
     * native memory with {@code jcmd <pid> VM.native_memory summary} during the runs).
     */
    static final String CHART_SET = System.getProperty("bench.chartSet", "");

    private static List<String> chartValues() {
        List<String> values = new ArrayList<>();
        if (MAX_ACTIVE_RUNS > 0) {
            values.add("maxActiveRuns=" + MAX_ACTIVE_RUNS);
        }
        for (String pair : CHART_SET.split(";")) {
            if (!pair.isBlank()) {
                values.add(pair.strip());
            }
        }
        return values;
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static ChartCluster cluster;
    private static KubernetesClient client;
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

    /** The operator container whose process the /proc readings belong to (id → host pid). */
    private static final Map<String, Long> hostPids = new ConcurrentHashMap<>();

    @BeforeAll
    static void startCluster() {
        long start = System.nanoTime();
        cluster =
                ChartCluster.start(
                        List.of(NS_LATENCY, NS_MANY),
                        Path.of("target/operator-speed-logs").toAbsolutePath(),
                        chartValues());
        client = cluster.client;
        var node = client.nodes().list().getItems().get(0);
        report.add(
                "cluster %s up with the chart's operator in %.1f s; node %s: allocatable pods %s,"
                                .formatted(
                                        cluster.cluster.mode(),
                                        (System.nanoTime() - start) / 1e9,
                                        node.getMetadata().getName(),
                                        node.getStatus().getAllocatable().get("pods"))
                        + " cpu %s, memory %s; operator as the chart installs it (limits %s)"
                                .formatted(
                                        node.getStatus().getAllocatable().get("cpu"),
                                        node.getStatus().getAllocatable().get("memory"),
                                        operatorPod()
                                                .getSpec()
                                                .getContainers()
                                                .get(0)
                                                .getResources()
                                                .getLimits()));
    }

    @AfterAll
    static void stopClusterAndWriteReport() throws IOException {
        try {
            Path out = Path.of("target", "bench", "operator-speed.txt");
            Files.createDirectories(out.getParent());
            Files.write(out, report);
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    // ------------------------------------------------------------------ benchmarks

    /**
     * Apply → runner Job: one run at a time, the clock from just before the create request to the
     * Job's ADDED event on a watch. A ResourceQuota (pods: 1, the simulator's) keeps the Jobs from
     * starting runner pods, so every sample sees the same idle node.
     */
    @Test
    @Order(1)
    void applyToRunnerJobLatency() throws Exception {
        String ns = NS_LATENCY;
        deploySimulator(ns);
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
            // warm-up: the operator's first reconciles load classes and open connections
            for (int i = 0; i < 3; i++) {
                timeApplyToJob(ns, "warm-" + i, jobSeen);
            }
            long[] micros = new long[LATENCY_RUNS];
            for (int i = 0; i < LATENCY_RUNS; i++) {
                micros[i] = timeApplyToJob(ns, "lat-" + i, jobSeen);
            }
            long[] sorted = micros.clone();
            Arrays.sort(sorted);
            report.add(
                    "apply -> runner Job over %d runs: median %.1f ms, p90 %.1f ms, p95 %.1f ms,"
                                    .formatted(
                                            LATENCY_RUNS,
                                            percentile(sorted, 50) / 1000.0,
                                            percentile(sorted, 90) / 1000.0,
                                            percentile(sorted, 95) / 1000.0)
                            + " p99 %.1f ms, min %.1f ms, max %.1f ms; load average %s"
                                    .formatted(
                                            percentile(sorted, 99) / 1000.0,
                                            sorted[0] / 1000.0,
                                            sorted[sorted.length - 1] / 1000.0,
                                            loadAverage()));
            report.add("operator after the latency runs: " + operatorMemory());
            assertThat(sorted).hasSize(LATENCY_RUNS);
            assertThat(sorted[0]).isPositive();
        } finally {
            watch.close();
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
     * Succeeded with one profile whose counts equal {@code numPrompts}. The operator's memory is
     * sampled meanwhile (see the class comment).
     */
    @Test
    @Order(2)
    void concurrentRunsAllSucceed() throws Exception {
        String ns = NS_MANY;
        deploySimulator(ns);
        AtomicLong peakRssKb = new AtomicLong();
        AtomicLong peakHwmKb = new AtomicLong();
        AtomicLong peakCgroupRss = new AtomicLong();
        AtomicLong peakWorkingSet = new AtomicLong();
        ScheduledExecutorService sampler = Executors.newScheduledThreadPool(2);
        sampler.scheduleAtFixedRate(
                () -> {
                    long[] proc = procMemoryKb();
                    peakRssKb.accumulateAndGet(proc[0], Math::max);
                    peakHwmKb.accumulateAndGet(proc[1], Math::max);
                },
                0,
                500,
                TimeUnit.MILLISECONDS);
        sampler.scheduleAtFixedRate(
                () -> {
                    long[] stats = kubeletMemoryBytes();
                    peakCgroupRss.accumulateAndGet(stats[0], Math::max);
                    peakWorkingSet.accumulateAndGet(stats[1], Math::max);
                },
                0,
                2,
                TimeUnit.SECONDS);
        int restartsBefore = operatorRestarts();
        long peakRunning = 0;
        long peakPending = 0;
        long peakActive = 0;
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
                                                                && Runs.ended(
                                                                        r.getStatus().getPhase()))
                                        .count();
                List<Pod> runners =
                        client.pods().inNamespace(ns).withLabel("job-name").list().getItems();
                peakRunning =
                        Math.max(
                                peakRunning,
                                runners.stream()
                                        .filter(p -> "Running".equals(p.getStatus().getPhase()))
                                        .count());
                peakPending =
                        Math.max(
                                peakPending,
                                runners.stream()
                                        .filter(p -> "Pending".equals(p.getStatus().getPhase()))
                                        .count());
                peakLoad = Math.max(peakLoad, Double.parseDouble(loadAverage().split(" ")[0]));
                peakActive =
                        Math.max(
                                peakActive,
                                runs.stream()
                                        .filter(
                                                r ->
                                                        r.getStatus() != null
                                                                && (r.getStatus().getPhase()
                                                                                == Phase
                                                                                        .INITIALIZING
                                                                        || r.getStatus().getPhase()
                                                                                == Phase.RUNNING
                                                                        || r.getStatus().getPhase()
                                                                                == Phase
                                                                                        .AGGREGATING))
                                        .count());
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
            List<Long> applyToJobMillis = new ArrayList<>();
            List<Long> admittedToJobMillis = new ArrayList<>();
            for (BenchmarkRun run : runs) {
                String problem = checkRun(run);
                if (problem != null) {
                    wrong.add(run.getMetadata().getName() + ": " + problem);
                }
                Job job =
                        client.batch()
                                .v1()
                                .jobs()
                                .inNamespace(ns)
                                .withName(ResourceNames.runner(run.getMetadata().getName()))
                                .get();
                if (job != null && run.getStatus() != null) {
                    run.getStatus().getConditions().stream()
                            .filter(
                                    c ->
                                            ConditionTypes.QUEUED.equals(c.getType())
                                                    && "Admitted".equals(c.getReason()))
                            .findFirst()
                            .ifPresent(
                                    c ->
                                            admittedToJobMillis.add(
                                                    Duration.between(
                                                                    Instant.parse(
                                                                            c
                                                                                    .getLastTransitionTime()),
                                                                    Instant.parse(
                                                                            job.getMetadata()
                                                                                    .getCreationTimestamp()))
                                                            .toMillis()));
                }
                if (job != null) {
                    applyToJobMillis.add(
                            Duration.between(
                                            Instant.parse(run.getMetadata().getCreationTimestamp()),
                                            Instant.parse(job.getMetadata().getCreationTimestamp()))
                                    .toMillis());
                }
            }
            Collections.sort(applyToJobMillis);
            Collections.sort(admittedToJobMillis);
            report.add(
                    "operator queue: maxActiveRuns %s; peak runs past Pending at once %d"
                            .formatted(
                                    MAX_ACTIVE_RUNS > 0 ? MAX_ACTIVE_RUNS : "unset (no cap)",
                                    peakActive));
            if (!admittedToJobMillis.isEmpty()) {
                report.add(
                        ("admitted (Queued=False, Admitted) -> runner Job: median %d ms, p95 %d ms,"
                                        + " max %d ms over %d Jobs (1 s resolution)")
                                .formatted(
                                        percentileOf(admittedToJobMillis, 50),
                                        percentileOf(admittedToJobMillis, 95),
                                        admittedToJobMillis.get(admittedToJobMillis.size() - 1),
                                        admittedToJobMillis.size()));
            }
            int correct = runs.size() - wrong.size();
            report.add(
                    "%d concurrent runs (1 stage, %d prompts, parallelism 1, runner CPU request %s): %d created, %d"
                                    .formatted(
                                            CONCURRENT_RUNS,
                                            NUM_PROMPTS,
                                            RUNNER_CPU,
                                            runs.size(),
                                            terminal)
                            + " terminal, %d correct (Succeeded, 1 profile, counts = %d); total %.1f s"
                                    .formatted(correct, NUM_PROMPTS, wallSeconds)
                            + " from the first create to the last terminal run (creates took %.1f s);"
                                    .formatted((created - start) / 1e9)
                            + " peak runner pods Running at once %d, Pending at once %d; peak 1-min load %.2f"
                                    .formatted(peakRunning, peakPending, peakLoad));
            if (!applyToJobMillis.isEmpty()) {
                report.add(
                        ("apply -> runner Job under the burst (creationTimestamps, 1 s resolution):"
                                        + " median %d ms, p95 %d ms, max %d ms over %d Jobs")
                                .formatted(
                                        percentileOf(applyToJobMillis, 50),
                                        percentileOf(applyToJobMillis, 95),
                                        applyToJobMillis.get(applyToJobMillis.size() - 1),
                                        applyToJobMillis.size()));
            }
            long[] procNow = procMemoryKb();
            report.add(
                    ("operator memory during the concurrent runs: /proc of its container process:"
                                    + " sampled peak VmRSS %d MB, peak VmHWM %d MB; kubelet"
                                    + " stats/summary: peak cgroup rss %d MB, peak working set %d"
                                    + " MB; operator container restarts %d")
                            .formatted(
                                    peakRssKb.get() / 1024,
                                    Math.max(peakHwmKb.get(), procNow[1]) / 1024,
                                    peakCgroupRss.get() / (1024 * 1024),
                                    peakWorkingSet.get() / (1024 * 1024),
                                    operatorRestarts() - restartsBefore));
            if (!wrong.isEmpty()) {
                report.add("not correct: " + wrong.subList(0, Math.min(10, wrong.size())));
            }
            assertThat(runs).hasSize(CONCURRENT_RUNS);
            if (MAX_ACTIVE_RUNS > 0) {
                assertThat(peakActive)
                        .as("runs past Pending at once")
                        .isLessThanOrEqualTo(MAX_ACTIVE_RUNS);
            }
            assertThat(wrong).as("runs not Succeeded with the right counts").isEmpty();
            assertThat(simulatorSuccesses(ns))
                    .as("requests the simulator itself served")
                    .isEqualTo((double) CONCURRENT_RUNS * NUM_PROMPTS);
        } finally {
            sampler.shutdownNow();
            creators.shutdownNow();
        }
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
        StageSummary result = status.getResults().get(0);
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

    /** Nearest-rank percentile of sorted samples. */
    private static long percentile(long[] sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static long percentileOf(List<Long> sorted, int p) {
        return percentile(sorted.stream().mapToLong(Long::longValue).toArray(), p);
    }

    // ------------------------------------------------------------------ operator memory

    private static Pod operatorPod() {
        return cluster.operatorPods().stream()
                .filter(ChartCluster::ready)
                .findFirst()
                .orElseGet(() -> cluster.operatorPods().get(0));
    }

    private static ContainerStatus operatorContainer() {
        return operatorPod().getStatus().getContainerStatuses().stream()
                .filter(c -> c.getName().equals("operator"))
                .findFirst()
                .orElseThrow();
    }

    private static int operatorRestarts() {
        return cluster.operatorPods().stream()
                .flatMap(p -> p.getStatus().getContainerStatuses().stream())
                .mapToInt(ContainerStatus::getRestartCount)
                .sum();
    }

    /**
     * {@code VmRSS} and {@code VmHWM} (kB) of the operator container's process on the host; zeros
     * when the cluster is not the real node or the container is between restarts.
     */
    private static long[] procMemoryKb() {
        if (cluster.node == null) {
            return new long[] {0, 0};
        }
        try {
            String id = operatorContainer().getContainerID();
            if (id == null || !id.startsWith("containerd://")) {
                return new long[] {0, 0};
            }
            String containerId = id.substring("containerd://".length());
            Long pid = hostPids.computeIfAbsent(containerId, OperatorSpeedBench::hostPid);
            if (pid == null) {
                return new long[] {0, 0};
            }
            long rss = 0;
            long hwm = 0;
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
                } else if (line.startsWith("VmHWM:")) {
                    hwm = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            return new long[] {rss, hwm};
        } catch (IOException | RuntimeException e) {
            // the container may just have restarted; the caller keeps its last peak
            return new long[] {0, 0};
        }
    }

    /** The host pid of a container's task ({@code ctr tasks ls}), checked to be the JVM. */
    private static Long hostPid(String containerId) {
        var tasks =
                cluster.node.ctr(List.of("-n", "k8s.io", "tasks", "ls"), Duration.ofSeconds(10));
        for (String line : tasks.output().lines().toList()) {
            String[] cols = line.trim().split("\\s+");
            if (cols.length >= 2 && cols[0].equals(containerId)) {
                long pid = Long.parseLong(cols[1]);
                try {
                    String cmdline =
                            Files.readString(Path.of("/proc/" + pid + "/cmdline"))
                                    .replace('\0', ' ');
                    assertThat(cmdline).as("operator container's process").contains("java");
                } catch (IOException e) {
                    return null;
                }
                return pid;
            }
        }
        return null;
    }

    /**
     * The kubelet's view of the operator container (stats/summary through the API server's node
     * proxy): cgroup {@code rssBytes} and {@code workingSetBytes}; zeros when not available.
     */
    private static long[] kubeletMemoryBytes() {
        try {
            Pod pod = operatorPod();
            String summary =
                    client.raw(
                            "/api/v1/nodes/"
                                    + pod.getSpec().getNodeName()
                                    + "/proxy/stats/summary");
            for (JsonNode p : JSON.readTree(summary).path("pods")) {
                if (!p.path("podRef").path("name").asText().equals(pod.getMetadata().getName())) {
                    continue;
                }
                for (JsonNode c : p.path("containers")) {
                    if (c.path("name").asText().equals("operator")) {
                        return new long[] {
                            c.path("memory").path("rssBytes").asLong(),
                            c.path("memory").path("workingSetBytes").asLong()
                        };
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // a summary missed now and then only lowers the sample count
        }
        return new long[] {0, 0};
    }

    private static String operatorMemory() {
        long[] proc = procMemoryKb();
        long[] stats = kubeletMemoryBytes();
        return "/proc: VmRSS %d MB, VmHWM %d MB; stats/summary: rss %d MB, working set %d MB"
                .formatted(
                        proc[0] / 1024,
                        proc[1] / 1024,
                        stats[0] / (1024 * 1024),
                        stats[1] / (1024 * 1024));
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

    /**
     * One stage at 50 req/s, tiny requests; runner pods request {@link #RUNNER_CPU} CPU and 128Mi.
     */
    private static String runYaml(String name, int numPrompts) {
        return RunYaml.named(name)
                .target("sim", MODEL)
                .tokens(8, 4)
                .load("50", numPrompts, 0)
                .timeouts("2m", "60s", "20m")
                .runnerResources(RUNNER_CPU, "128Mi", "512Mi")
                .yaml();
    }

    private static void createRun(String ns, String yaml) {
        Runs.create(client, ns, yaml);
    }

    /** The simulator as Deployment and Service {@code sim:8000}, 5 ms TTFT, 1 ms ITL. */
    private static void deploySimulator(String ns) {
        cluster.deployScenarioSimulator(ns, "sim", MODEL, 5, 1, 1024);
    }

    /**
     * The simulator's own request counter, from its /metrics through the API server's service proxy
     * (no route from the test to the ClusterIP needed, so the same on Kind).
     */
    private static double simulatorSuccesses(String ns) {
        return SimulatorDeployment.requestSuccesses(
                client.raw("/api/v1/namespaces/" + ns + "/services/http:sim:8000/proxy/metrics"));
    }
}
