package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar, run as users run it, against a loopback stub. Runs in the {@code verify} phase
 * (after {@code package} built the jar).
 */
class RunnerJarTest {

    private static final Path JAR = Path.of("target/inferencebench-runner.jar");

    record Result(int code, String out, String err) {}

    static Result runJar(Path dir, String... args) throws Exception {
        return runJar(dir, List.of(), args);
    }

    /** Runs the jar behind {@code prefix} (e.g. {@code prlimit --nofile=N:N}). */
    static Result runJar(Path dir, List<String> prefix, String... args) throws Exception {
        return runJar(dir, prefix, List.of(), args);
    }

    /** Runs the jar behind {@code prefix}, with JVM options {@code jvm}. */
    static Result runJar(Path dir, List<String> prefix, List<String> jvm, String... args)
            throws Exception {
        assertThat(JAR).exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(prefix);
        command.add(java);
        command.addAll(jvm);
        command.addAll(List.of("-jar", JAR.toString()));
        command.addAll(List.of(args));
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        Process p =
                new ProcessBuilder(command)
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile())
                        .start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the runner jar did not finish in 120 s");
        }
        return new Result(
                p.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /** {@code java -jar} the runner jar with {@code args}. */
    private static List<String> jarCommand(String... args) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-jar", JAR.toString()));
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void jarRunsARateSweepAndWritesLpgProfiles(@TempDir Path dir) throws Exception {
        try (StubServer server =
                new StubServer(
                        (req, ex) -> {
                            if (req.method().equals("GET")) {
                                ex.respond(
                                        200,
                                        "application/json",
                                        "{\"data\":[{\"id\":\"acme/jar-model\"}]}");
                            } else {
                                new OpenAiStub(3, 1, true).handle(req, ex);
                            }
                        })) {
            Path results = dir.resolve("results");
            Result r =
                    runJar(
                            dir,
                            argv(
                                    "run --base-url %s --backend openai --random-input-len 32"
                                            + " --random-output-len 6 --request-rate 25,inf"
                                            + " --num-prompts 15 --cooldown 200ms --result-dir %s",
                                    server.baseUrl(), results.toString()));
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("achieved").contains("lag p99");
            List<Path> files;
            try (Stream<Path> s = Files.list(results)) {
                files = s.sorted().toList();
            }
            assertThat(files)
                    .extracting(f -> f.getFileName().toString())
                    .satisfiesExactly(
                            a ->
                                    assertThat(a)
                                            .matches(
                                                    "openai-25\\.0qps-jar-model-\\d{8}-\\d{6}\\.json"),
                            b ->
                                    assertThat(b)
                                            .matches(
                                                    "openai-infqps-jar-model-\\d{8}-\\d{6}\\.json"));
            JsonNode profile = new ObjectMapper().readTree(files.get(0).toFile());
            for (String key :
                    List.of(
                            "num_prompts",
                            "request_rate",
                            "benchmark_time",
                            "throughput",
                            "total_output_token",
                            "output_tokens_per_min",
                            "total_input_tokens",
                            "input_tokens_per_min",
                            "total_tokens",
                            "tokens_per_min",
                            "avg_per_token_latency",
                            "p99_latency",
                            "median_per_output_token_latency",
                            "sd_input_len",
                            "max_output_len",
                            "server_metrics")) {
                assertThat(profile.path("metrics").has(key)).as(key).isTrue();
            }
            assertThat(profile.at("/metrics/completed").asInt()).isEqualTo(15);
            assertThat(profile.at("/metrics/total_output_token").asInt()).isEqualTo(90);
            assertThat(profile.at("/summary_stats/stats/0/request_latency/mean").isNumber())
                    .isTrue();
            assertThat(profile.at("/dimensions/model_id").asText()).isEqualTo("acme/jar-model");
        }
    }

    @Test
    void runsStartedTogetherIntoOneResultDirectoryKeepEveryProfile(@TempDir Path dir)
            throws Exception {
        // As reported: four runs of six unbounded stages of one request each, same directory,
        // started together; before, 23 files for 24 profiles and two runs printed one path.
        int runs = 4;
        int stages = 6;
        try (StubServer server =
                new StubServer(
                        (req, ex) -> {
                            if (req.method().equals("GET")) {
                                ex.respond(200, "application/json", "{\"data\":[{\"id\":\"m\"}]}");
                            } else {
                                new OpenAiStub(1, 0, true).handle(req, ex);
                            }
                        })) {
            Path results = dir.resolve("same");
            List<java.util.concurrent.Future<Result>> started = new ArrayList<>();
            java.util.concurrent.ExecutorService pool =
                    java.util.concurrent.Executors.newFixedThreadPool(runs);
            for (int i = 0; i < runs; i++) {
                Path own = Files.createDirectory(dir.resolve("run-" + i));
                started.add(
                        pool.submit(
                                () ->
                                        runJar(
                                                own,
                                                argv(
                                                        "run --base-url %s --backend openai --random-input-len 8"
                                                                + " --random-output-len 2 --request-rate %s --num-prompts 1"
                                                                + " --cooldown 0 --progress none --result-dir %s",
                                                        server.baseUrl(),
                                                        String.join(
                                                                ",",
                                                                java.util.Collections.nCopies(
                                                                        stages, "inf")),
                                                        results.toString()))));
            }
            List<Path> printed = new ArrayList<>();
            for (java.util.concurrent.Future<Result> f : started) {
                Result r = f.get();
                assertThat(r.code()).as(r.out() + r.err()).isZero();
                r.out()
                        .lines()
                        .filter(l -> l.startsWith("profile: "))
                        .forEach(l -> printed.add(Path.of(l.substring("profile: ".length()))));
            }
            pool.shutdown();
            assertThat(printed).hasSize(runs * stages).doesNotHaveDuplicates();
            List<Path> onDisk;
            try (Stream<Path> s = Files.list(results)) {
                onDisk = s.toList();
            }
            assertThat(onDisk).containsExactlyInAnyOrderElementsOf(printed);
            for (Path p : onDisk) {
                assertThat(new ObjectMapper().readTree(p.toFile()).at("/metrics/completed").asInt())
                        .isEqualTo(1);
            }
        }
    }

    @Test
    void anInterruptStopsTheClientWarmUpAtOnceAndNothingIsSent(@TempDir Path dir) throws Exception {
        assumeSigintDeliverable();
        java.util.concurrent.CountDownLatch discovered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger posts =
                new java.util.concurrent.atomic.AtomicInteger();
        try (StubServer server =
                new StubServer(
                        (req, ex) -> {
                            if (req.method().equals("GET")) {
                                ex.respond(200, "application/json", "{\"data\":[{\"id\":\"m\"}]}");
                                discovered.countDown();
                            } else {
                                posts.incrementAndGet();
                                new OpenAiStub(1, 0, true).handle(req, ex);
                            }
                        })) {
            // an OpenAI stub: the vllm default would ask it for /tokenize
            Process p =
                    new ProcessBuilder(
                                    jarCommand(
                                            argv(
                                                    "run --base-url %s --backend openai --random-input-len 8"
                                                            + " --random-output-len 2 --num-prompts 5 --progress none"
                                                            + " --result-dir %s",
                                                    server.baseUrl(),
                                                    dir.resolve("results").toString())))
                            .redirectOutput(dir.resolve("stdout.txt").toFile())
                            .redirectError(dir.resolve("stderr.txt").toFile())
                            .start();
            // Discovery comes right before the warm-up, which would run for 1.5 s.
            assertThat(discovered.await(60, TimeUnit.SECONDS)).isTrue();
            new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
            assertThat(p.waitFor(20, TimeUnit.SECONDS)).as("exited after SIGINT").isTrue();
            String out = Files.readString(dir.resolve("stdout.txt"));
            String err = Files.readString(dir.resolve("stderr.txt"));
            assertThat(p.exitValue()).as(err).isEqualTo(130);
            assertThat(posts.get()).as("requests sent to the target").isZero();
            Matcher warm =
                    Pattern.compile("client warm-up: \\d+ local exchanges in ([0-9.]+) s")
                            .matcher(err);
            if (warm.find()) {
                // It stopped instead of running out its 1.5 s budget.
                assertThat(Double.parseDouble(warm.group(1))).isLessThan(1.2);
                assertThat(err).contains("stopped by the interrupt");
            }
            assertThat(err).contains("interrupted: 0 of 1 stage(s) finished");
            // No summary table without a finished stage, and no JDK warnings.
            assertThat(out).doesNotContain("stage  rate").doesNotContain("achieved");
            assertThat(err).doesNotContain("WARNING");
        }
    }

    @Test
    void theProgressBarFollowsWhetherStderrIsATerminal(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/script")), "needs script (util-linux)");
        // 20 requests of about 100 ms at 20/s: the stage lasts about 1 s, several bar redraws.
        try (StubServer server = new StubServer(new OpenAiStub(0, 50, true))) {
            String java = ProcessHandle.current().info().command().orElse("java");
            String run =
                    String.join(" ", java, "-jar", JAR.toAbsolutePath().toString())
                            + " "
                            + String.join(
                                    " ",
                                    argv(
                                            "run --base-url %s --model m --random-input-len 8"
                                                    + " --random-output-len 3 --request-rate 20 --num-prompts 20"
                                                    + " --no-self-warmup --result-dir %s",
                                            server.baseUrl(), dir.resolve("results").toString()));
            // stderr on a terminal (script's pty), stdout into a file: the bar is drawn.
            Path terminal = dir.resolve("terminal.txt");
            Path stdout = dir.resolve("stdout.txt");
            Process p =
                    new ProcessBuilder(
                                    "/usr/bin/script",
                                    "-q",
                                    "-e",
                                    "-c",
                                    run + " > " + stdout,
                                    terminal.toString())
                            .redirectInput(ProcessBuilder.Redirect.PIPE)
                            .redirectOutput(dir.resolve("script.out").toFile())
                            .redirectErrorStream(true)
                            .start();
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(Files.readString(terminal)).isZero();
            assertThat(Files.readString(terminal)).contains("\r").contains("stage 1/1 done");
            assertThat(Files.readString(stdout)).contains("ttft p50").doesNotContain("\r");
            // stdout on the terminal, stderr into a file: plain lines, no redraws in the log.
            Path stderr = dir.resolve("stderr.txt");
            Process q =
                    new ProcessBuilder(
                                    "/usr/bin/script",
                                    "-q",
                                    "-e",
                                    "-c",
                                    run + " 2> " + stderr,
                                    dir.resolve("terminal2.txt").toString())
                            .redirectInput(ProcessBuilder.Redirect.PIPE)
                            .redirectOutput(dir.resolve("script2.out").toFile())
                            .redirectErrorStream(true)
                            .start();
            assertThat(q.waitFor(90, TimeUnit.SECONDS)).isTrue();
            assertThat(q.exitValue()).as(Files.readString(stderr)).isZero();
            assertThat(Files.readString(stderr)).contains("stage 1/1 done").doesNotContain("\r");
        }
    }

    @Test
    void interruptKeepsFinishedStagesAndWritesThePartialOne(@TempDir Path dir) throws Exception {
        assumeSigintDeliverable();
        // 10 tokens 100 ms apart: about 1 s per request.
        try (StubServer server = new StubServer(new OpenAiStub(0, 100, true))) {
            Path results = dir.resolve("results");
            // stage 2 at a constant 2 req/s dispatches for 5 s: the interrupt lands inside it even
            // when this machine is busy (at 10 req/s poisson it finished first on a loaded run)
            Process p =
                    new ProcessBuilder(
                                    jarCommand(
                                            argv(
                                                    "run --base-url %s --backend openai --model m"
                                                            + " --random-input-len 8 --random-output-len 10"
                                                            + " --request-rate 50,2 --arrival constant --num-prompts 10"
                                                            + " --cooldown 0 --no-self-warmup --progress lines"
                                                            + " --result-dir %s",
                                                    server.baseUrl(), results.toString())))
                            .redirectOutput(dir.resolve("stdout.txt").toFile())
                            .redirectError(dir.resolve("stderr.txt").toFile())
                            .start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (countFiles(results) < 1 && System.nanoTime() < deadline && p.isAlive()) {
                Thread.sleep(50);
            }
            assertThat(countFiles(results)).as("stage 1 profile before the interrupt").isOne();
            Thread.sleep(400); // stage 2 is sending, its requests take 1 s each
            new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
            assertThat(p.waitFor(20, TimeUnit.SECONDS)).as("exited after SIGINT").isTrue();
            // No wall-clock bound on the exit (a loaded machine took 5.07 s): that the stage was
            // stopped rather than waited for is shown below by requests_sent < 10, cancelled > 0.
            String out = Files.readString(dir.resolve("stdout.txt"));
            String err = Files.readString(dir.resolve("stderr.txt"));
            assertThat(p.exitValue()).as(err).isEqualTo(130);
            assertThat(err).contains("interrupted");
            assertThat(out).contains("stage 2 is partial");
            List<Path> files;
            try (Stream<Path> s = Files.list(results)) {
                files = s.sorted().toList();
            }
            assertThat(files).hasSize(2);
            ObjectMapper json = new ObjectMapper();
            JsonNode complete = null;
            JsonNode partial = null;
            for (Path f : files) {
                if (f.getFileName().toString().endsWith("-partial.json")) {
                    partial = json.readTree(f.toFile());
                } else {
                    complete = json.readTree(f.toFile());
                }
            }
            assertThat(complete).as("the finished stage's profile").isNotNull();
            assertThat(complete.at("/metrics/completed").asInt()).isEqualTo(10);
            assertThat(complete.at("/metrics/partial").isMissingNode()).isTrue();
            assertThat(partial).as("the interrupted stage's profile").isNotNull();
            assertThat(partial.at("/metrics/partial").asBoolean()).isTrue();
            assertThat(partial.at("/metrics/cancelled_requests").asInt()).isPositive();
            assertThat(partial.at("/metrics/failures").asInt()).isZero();
            assertThat(partial.at("/metrics/requests_sent").asInt()).isBetween(1, 9);
        }
    }

    /**
     * A process started as a background job of a shell without job control inherits SIGINT as
     * ignored, and so do its children: the JVM then cannot install its handler, exactly as a
     * nohup'd program does not react to Ctrl-C. The interrupt tests need SIGINT deliverable.
     */
    private static void assumeSigintDeliverable() throws java.io.IOException {
        String ignored =
                Files.readAllLines(Path.of("/proc/self/status")).stream()
                        .filter(l -> l.startsWith("SigIgn:"))
                        .map(l -> l.substring("SigIgn:".length()).trim())
                        .findFirst()
                        .orElse("0");
        boolean sigintIgnored = (Long.parseUnsignedLong(ignored, 16) & (1L << (2 - 1))) != 0;
        org.junit.jupiter.api.Assumptions.assumeFalse(
                sigintIgnored,
                "SIGINT is ignored in this process (started as a background job without job"
                        + " control): the interrupt cannot be delivered");
    }

    private static long countFiles(Path dir) throws java.io.IOException {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.list(dir)) {
            // Profiles only: the start-up write check leaves a probe file there for a moment.
            return s.filter(p -> p.toString().endsWith(".json")).count();
        }
    }

    @Test
    void aLowFileDescriptorLimitGivesClassifiedFailuresAndTheProfileIsStillWritten(
            @TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/prlimit")), "needs prlimit (util-linux)");
        OpenAiStub stub = new OpenAiStub(300, 0, true);
        try (StubServer server = new StubServer(stub)) {
            Path results = dir.resolve("results");
            // 200 requests at once need 200 connections; the limit leaves room for far fewer.
            // After the stage the idle connections hold the remaining descriptors, so the
            // profile's first write fails; the retry frees them first.
            Result r =
                    runJar(
                            dir,
                            List.of("/usr/bin/prlimit", "--nofile=96:96"),
                            // an OpenAI stub: the vllm default would ask it for /tokenize
                            argv(
                                    "run --base-url %s --backend openai --model m"
                                            + " --random-input-len 8 --random-output-len 1"
                                            + " --request-rate inf --num-prompts 200 --no-self-warmup"
                                            + " --progress none --result-dir %s",
                                    server.baseUrl(), results.toString()));
            assertThat(r.code()).as(r.err()).isEqualTo(1);
            assertThat(r.err())
                    .contains("of requests failed (connect: ")
                    .contains("too many open files")
                    .contains("profile write failed (Too many open files); closing idle")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
            assertThat(r.out()).contains("ttft p50").contains("profile: ");
            List<Path> files;
            try (Stream<Path> s = Files.list(results)) {
                files = s.toList();
            }
            assertThat(files).hasSize(1);
            JsonNode m = new ObjectMapper().readTree(files.get(0).toFile()).get("metrics");
            assertThat(m.get("completed").asInt() + m.get("failures").asInt()).isEqualTo(200);
            assertThat(m.get("completed").asInt()).isEqualTo(stub.written.size());
            assertThat(m.at("/errors_by_class/connect").asInt())
                    .isEqualTo(m.get("failures").asInt());
        }
    }

    @Test
    void aDatasetTooLargeForTheHeapIsRefusedWithAMessage(@TempDir Path dir) throws Exception {
        // About 40 MB of ShareGPT conversations that pass the default filters, read with a
        // 32 MB heap: the prompts kept cannot fit.
        Path file = dir.resolve("big-sharegpt.json");
        String words = "lorem ipsum dolor sit amet ".repeat(120);
        try (var w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write("[");
            for (int i = 0; i < 12_000; i++) {
                if (i > 0) {
                    w.write(",");
                }
                w.write(
                        "{\"conversations\":[{\"from\":\"human\",\"value\":\""
                                + i
                                + " "
                                + words
                                + "\"},{\"from\":\"gpt\",\"value\":\"a reply of some words\"}]}");
            }
            w.write("]");
        }
        Result r =
                runJar(
                        dir,
                        List.of(),
                        List.of("-Xmx32m"),
                        argv(
                                "run --model m --dataset-name sharegpt --dataset-path %s"
                                        + " --num-prompts 10 --no-self-warmup --result-dir %s",
                                file.toString(), dir.resolve("results").toString()));
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err())
                .contains("--dataset-path: " + file + ": too large for the heap")
                .contains("-Xmx")
                .doesNotContain("OutOfMemoryError")
                .doesNotContain("\tat ");
    }

    @Test
    void jarRejectsBadFlagsWithExitCodeTwo(@TempDir Path dir) throws Exception {
        Result r = runJar(dir, "run", "--request-rate", "-3");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--request-rate");
    }

    @Test
    void helpListsTheFlags(@TempDir Path dir) throws Exception {
        Result r = runJar(dir, "run", "--help");
        assertThat(r.code()).isZero();
        assertThat(r.out())
                .contains("--base-url", "--endpoint", "--backend", "--model", "--tokenizer")
                .contains(
                        "--dataset-name",
                        "--dataset-path",
                        "--random-input-len",
                        "--random-output-len")
                .contains("--request-rate", "--num-prompts", "--duration", "--burstiness")
                .contains(
                        "--max-concurrency", "--num-warmups", "--goodput", "--seed", "--result-dir")
                .contains("--header", "--api-key-file", "--config", "--metrics-port");
    }
}
