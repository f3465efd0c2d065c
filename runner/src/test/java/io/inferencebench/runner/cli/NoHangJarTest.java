package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import io.inferencebench.testkit.HostileMetricsServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs that used to hang, as users run the jar: each ends promptly, and a SIGTERM in the middle
 * keeps what finished.
 */
class NoHangJarTest {

    private static final Path JAR = Path.of("target/inferencebench-runner.jar");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The jar started in the background, its output in files under {@code dir}. */
    static Process start(Path dir, List<String> jvm, String... args) throws Exception {
        assertThat(JAR).exists();
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(jvm);
        command.addAll(List.of("-jar", JAR.toString()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command)
                .redirectOutput(dir.resolve("stdout.txt").toFile())
                .redirectError(dir.resolve("stderr.txt").toFile())
                .start();
    }

    static String stdout(Path dir) throws Exception {
        return Files.readString(dir.resolve("stdout.txt"), StandardCharsets.UTF_8);
    }

    static String stderr(Path dir) throws Exception {
        return Files.readString(dir.resolve("stderr.txt"), StandardCharsets.UTF_8);
    }

    static void await(String what, BooleanSupplier condition, Process p, long seconds)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline && p.isAlive()) {
            Thread.sleep(20);
        }
        assertThat(condition.getAsBoolean()).as(what).isTrue();
    }

    static void sigterm(Process p) throws Exception {
        new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor();
    }

    /** The profiles written, sorted by name. */
    static List<Path> profiles(Path results) throws Exception {
        if (!Files.isDirectory(results)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(results)) {
            return s.filter(f -> f.toString().endsWith(".json")).sorted().toList();
        }
    }

    @Test
    void aSigtermWhilePrometheusIsQueriedAbortsTheQueryAndKeepsTheStage(@TempDir Path dir)
            throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(1, 0, true));
                HostileMetricsServer prometheus =
                        new HostileMetricsServer(new HostileMetricsServer.Stalled())) {
            Path results = dir.resolve("results");
            Process p =
                    start(
                            dir,
                            List.of(),
                            "run",
                            "--base-url",
                            server.baseUrl(),
                            "--backend",
                            "openai",
                            "--model",
                            "m",
                            "--random-input-len",
                            "8",
                            "--random-output-len",
                            "4",
                            "--request-rate",
                            "inf,inf",
                            "--num-prompts",
                            "5",
                            "--cooldown",
                            "0",
                            "--no-self-warmup",
                            "--progress",
                            "none",
                            "--prometheus-url",
                            prometheus.url().replace("/metrics", ""),
                            "--result-dir",
                            results.toString());
            try {
                // The runner asks Prometheus once stage 1 has ended; this one never answers.
                await("the runner queries Prometheus", () -> prometheus.requests() > 0, p, 60);
                sigterm(p);
                // Each query may take 30 s by default: an exit well before shows the query was
                // aborted by the signal, not timed out.
                assertThat(p.waitFor(15, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
            } finally {
                p.destroyForcibly();
            }
            String err = stderr(dir);
            assertThat(p.exitValue()).as(err).isEqualTo(130);
            assertThat(err)
                    .contains("interrupted while querying Prometheus at http://127.0.0.1:")
                    .doesNotContain("cannot connect")
                    .contains("interrupted: 1 of 2 stage(s) finished");
            assertThat(stdout(dir)).contains("profile: ");
            List<Path> files = profiles(results);
            assertThat(files).as("stage 1's profile, not partial").singleElement();
            assertThat(files.get(0).toString()).doesNotEndWith("-partial.json");
            JsonNode metrics = JSON.readTree(files.get(0).toFile()).path("metrics");
            assertThat(metrics.path("completed").asInt()).isEqualTo(5);
            assertThat(metrics.at("/server_metrics_coverage/errors/0").asText())
                    .startsWith("prometheus: interrupted while querying Prometheus at ");
            // stage 2 never started
            assertThat(server.requests()).isEqualTo(5);
        }
    }
}
