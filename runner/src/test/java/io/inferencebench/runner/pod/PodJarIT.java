package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.ProgressReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.EnormousResponses;
import io.inferencebench.runner.stub.StubServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar's {@code pod} command as a separate process, given what a runner container gets:
 * the work order file (named by {@code INFERENCEBENCH_WORK_ORDER} here, as it is not at its pod
 * path on this host), a temp dir of its own for its /tmp emptyDir, identity from the Job's
 * environment variables.
 */
class PodJarIT {

    @BeforeAll
    static void start() throws Exception {
        PodModeIT.start();
    }

    @AfterAll
    static void stop() throws Exception {
        PodModeIT.stop();
    }

    /** Starts the jar's pod command with what a runner container gets. */
    private static Process startJar(PodModeIT.Run run, RunnerWorkOrder order, Path dir, Path log)
            throws Exception {
        return startJar(run, order, dir, log, List.of());
    }

    /** Starts the jar's pod command with what a runner container gets, and JVM options. */
    private static Process startJar(
            PodModeIT.Run run, RunnerWorkOrder order, Path dir, Path log, List<String> jvm)
            throws Exception {
        Path jar = Path.of("target/inferencebench-runner.jar");
        assertThat(jar).exists();
        Path root = dir.resolve("root");
        Path mounted = root.resolve("etc/inferencebench/workorder");
        Files.createDirectories(mounted);
        Files.writeString(
                mounted.resolve(RunnerWorkOrder.KEY),
                new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(order));
        Path tmp = Files.createDirectories(dir.resolve("pod-tmp"));
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, PodModeIT.fixture.kubeconfigYaml(), StandardCharsets.UTF_8);
        List<String> command = new java.util.ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Djava.io.tmpdir=" + tmp);
        command.addAll(jvm);
        command.addAll(List.of("-jar", jar.toString(), "pod", "--no-self-warmup"));
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> env = builder.environment();
        env.clear();
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", dir.toString());
        env.put("KUBECONFIG", kubeconfig.toString());
        env.put("RUN_NAME", run.name());
        env.put("POD_NAMESPACE", run.namespace());
        env.put("POD_NAME", run.name() + "-runner-0-abcde");
        env.put("JOB_COMPLETION_INDEX", "0");
        env.put("INFERENCEBENCH_WORK_ORDER", mounted.resolve(RunnerWorkOrder.KEY).toString());
        return builder.start();
    }

    @Test
    void theJarRunsAStageFromTheMountedWorkOrder(@TempDir Path dir) throws Exception {
        PodModeIT.Run run = PodModeIT.newRun("jar");
        LoadSpec load = PodModeIT.oneStage(8.0, 6);
        Path log = dir.resolve("pod.log");
        Process process = startJar(run, PodModeIT.workOrder(run, load, 1, false), dir, log);
        Path tmp = dir.resolve("pod-tmp");
        try {
            PodModeIT.awaitReady(run, 0);
            PodModeIT.openBarrier(run, 1, Instant.now().plusSeconds(1));
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String output = Files.readString(log);
            assertThat(process.exitValue()).as(output).isZero();
            assertThat(output).contains("stage 1/1 done: 6 ok, 0 failed");
            StageResult result = PodModeIT.stageResult(run, 0, 1);
            assertThat(result.completed).isEqualTo(6);
            assertThat(PodModeIT.data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_DONE);
            // Scratch files went to the pod's /tmp (its JVM temp dir), not the host's.
            assertThat(tmp.resolve("inferencebench")).isDirectory();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void theJarStopsPromptlyOnCancelAndExitsZero(@TempDir Path dir) throws Exception {
        PodModeIT.Run run = PodModeIT.newRun("jar-cancel");
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(10.0));
        load.setDuration("60s");
        Path log = dir.resolve("pod.log");
        Process process = startJar(run, PodModeIT.workOrder(run, load, 1, false), dir, log);
        try {
            PodModeIT.awaitReady(run, 0);
            PodModeIT.openBarrier(run, 1, Instant.now().plusMillis(500));
            await().atMost(Duration.ofSeconds(30))
                    .until(
                            () -> {
                                String p = PodModeIT.data(run, 0, PartReport.PROGRESS);
                                return p != null && ProgressReport.fromJson(p).completed() >= 5;
                            });
            long cancelAt = System.nanoTime();
            PodModeIT.control(run, Map.of(RunnerWorkOrder.CANCEL_KEY, "true"));
            assertThat(process.waitFor(15, TimeUnit.SECONDS)).isTrue();
            long stopMillis = (System.nanoTime() - cancelAt) / 1_000_000;
            String output = Files.readString(log);
            System.out.println("cancel to process exit: " + stopMillis + " ms");
            assertThat(process.exitValue()).as(output).isZero();
            assertThat(output).contains("stopping: the run was cancelled").doesNotContain("\tat ");
            assertThat(PodModeIT.data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_DONE);
            assertThat(PodModeIT.data(run, 0, PartReport.stageResultKey(1))).isNull();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void runningOutOfMemoryFailsThePartAndKeepsTheFinishedStage(@TempDir Path dir)
            throws Exception {
        PodModeIT.Run run = PodModeIT.newRun("jar-oom");
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(50.0, 50.0));
        load.setNumPrompts(4);
        EnormousResponses handler = new EnormousResponses(4);
        try (StubServer enormous = new StubServer(handler)) {
            RunnerWorkOrder base = PodModeIT.workOrder(run, load, 1, false);
            // Not streamed: the runner holds each response whole; stage 2's never end.
            base.workload().setStreaming(false);
            RunnerWorkOrder order =
                    new RunnerWorkOrder(
                            base.runName(),
                            base.namespace(),
                            base.runUid(),
                            base.parallelism(),
                            enormous.baseUrl(),
                            base.path(),
                            "openai",
                            base.api(),
                            base.model(),
                            base.headers(),
                            base.apiKeyFromEnv(),
                            base.workload(),
                            base.load(),
                            base.stages(),
                            base.slo(),
                            base.controlConfigMap(),
                            base.partConfigMapPrefix(),
                            base.reportIntervalSeconds(),
                            base.tls(),
                            null,
                            null);
            Path log = dir.resolve("pod.log");
            Process process = startJar(run, order, dir, log, List.of("-Xmx64m"));
            try {
                PodModeIT.awaitReady(run, 0);
                PodModeIT.openBarrier(run, 1, Instant.now().plusMillis(500));
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> "1".equals(PodModeIT.data(run, 0, PartReport.STAGES_DONE)));
                PodModeIT.openBarrier(run, 2, Instant.now().plusMillis(500));
                assertThat(process.waitFor(90, TimeUnit.SECONDS)).as("the pod ended").isTrue();
            } finally {
                process.destroyForcibly();
            }
            String output = Files.readString(log);
            System.out.println(output);
            assertThat(process.exitValue()).as(output).isEqualTo(PodRun.EXIT_FAILED);
            assertThat(handler.enormousBytes.get()).as("the server sent").isPositive();
            assertThat(PodModeIT.data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_FAILED);
            assertThat(PodModeIT.data(run, 0, PartReport.ERROR))
                    .isEqualTo(
                            "the runner ran out of memory (-Xmx 64 MiB): Java heap space; stage 2"
                                    + " stopped; finished stages kept (1 reported)");
            assertThat(output).doesNotContain("\tat ").doesNotContain("other: Java heap space");
            StageResult first = PodModeIT.stageResult(run, 0, 1);
            assertThat(first.completed).isEqualTo(4);
            assertThat(first.failed).isZero();
            assertThat(PodModeIT.data(run, 0, PartReport.stageResultKey(2))).isNull();
        }
    }
}
