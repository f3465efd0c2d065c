package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
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
                            argv(
                                    "run --base-url %s --backend openai --model m"
                                            + " --random-input-len 8 --random-output-len 4"
                                            + " --request-rate inf,inf --num-prompts 5 --cooldown 0"
                                            + " --no-self-warmup --progress none --prometheus-url %s"
                                            + " --result-dir %s",
                                    server.baseUrl(),
                                    prometheus.url().replace("/metrics", ""),
                                    results.toString()));
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

    /**
     * The jar in a closed loop of 2,147,483,647 concurrent requests against {@code server}: {@code
     * prompts} requests of 8 tokens asking for {@code outputLen}, profiles into {@code results}.
     */
    private static Process startHugeConcurrency(
            Path dir, StubServer server, int outputLen, int prompts, Path results)
            throws Exception {
        return start(
                dir,
                List.of(),
                argv(
                        "run --base-url %s --backend openai --model m --random-input-len 8"
                                + " --random-output-len %s --concurrency 2147483647"
                                + " --num-prompts %s --no-self-warmup --progress none --result-dir %s",
                        server.baseUrl(), outputLen, prompts, results));
    }

    @Test
    void aConcurrencyFarAboveThePromptsEndsWithTheLastRequest(@TempDir Path dir) throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(1, 0, true))) {
            Path results = dir.resolve("results");
            Process p = startHugeConcurrency(dir, server, 4, 5, results);
            try {
                // Five requests of a few ms; it took minutes at 100 % CPU.
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the run ended").isTrue();
            } finally {
                p.destroyForcibly();
            }
            assertThat(p.exitValue()).as(stderr(dir)).isZero();
            assertThat(server.requests()).as("requests the server saw").isEqualTo(5);
            List<Path> files = profiles(results);
            assertThat(files).singleElement();
            JsonNode metrics = JSON.readTree(files.get(0).toFile()).path("metrics");
            assertThat(metrics.path("completed").asInt()).isEqualTo(5);
            assertThat(metrics.path("in_flight_peak").asInt()).isBetween(1, 5);
        }
    }

    @Test
    void aSigtermInAClosedLoopOfHugeConcurrencyWritesThePartialProfile(@TempDir Path dir)
            throws Exception {
        // 20 tokens 200 ms apart: every request would take 4 s.
        try (StubServer server = new StubServer(new OpenAiStub(0, 200, true))) {
            Path results = dir.resolve("results");
            Process p = startHugeConcurrency(dir, server, 20, 50, results);
            try {
                await("the stage is sending", () -> server.requests() >= 5, p, 60);
                sigterm(p);
                assertThat(p.waitFor(15, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
            } finally {
                p.destroyForcibly();
            }
            String err = stderr(dir);
            assertThat(p.exitValue()).as(err).isEqualTo(130);
            assertThat(stdout(dir)).contains("stage 1 is partial");
            List<Path> files = profiles(results);
            assertThat(files).singleElement().asString().endsWith("-partial.json");
            JsonNode metrics = JSON.readTree(files.get(0).toFile()).path("metrics");
            assertThat(metrics.path("partial").asBoolean()).isTrue();
            assertThat(metrics.path("cancelled_requests").asInt()).isPositive();
            assertThat(metrics.path("failures").asInt()).isZero();
            assertThat(metrics.path("requests_sent").asInt())
                    .isBetween(5, 50)
                    .isEqualTo(server.requests());
        }
    }

    @Test
    void promptsThatDoNotFitTheHeapAreRefusedWithAMessage(@TempDir Path dir) throws Exception {
        // 100,000 prompts of about 4,000 tokens are gigabytes of text; the heap is 64 MiB.
        RunnerJarTest.Result r =
                RunnerJarTest.runJar(
                        dir,
                        List.of(),
                        List.of("-Xmx64m"),
                        argv(
                                "run --base-url http://127.0.0.1:9 --backend openai --model m"
                                        + " --random-input-len 4000 --random-output-len 4"
                                        + " --request-rate 10 --num-prompts 100000 --no-self-warmup"
                                        + " --result-dir %s",
                                dir.resolve("results").toString()));
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--num-prompts: the 100000 distinct prompts this run prepares before it"
                                + " starts do not fit in the heap (-Xmx 64 MiB)")
                .doesNotContain("OutOfMemoryError")
                .doesNotContain("\tat ");
    }
}
