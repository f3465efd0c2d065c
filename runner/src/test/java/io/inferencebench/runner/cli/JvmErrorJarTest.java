package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.EnormousResponses;
import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JVM running out of memory is not a failure of the target: the run ends with a message that
 * says so, a code of its own, and the profiles of the stages that finished.
 */
class JvmErrorJarTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void runningOutOfMemoryEndsTheRunAndKeepsTheFinishedStages(@TempDir Path dir) throws Exception {
        EnormousResponses handler = new EnormousResponses(5);
        try (StubServer server = new StubServer(handler)) {
            Path results = dir.resolve("results");
            Process p =
                    NoHangJarTest.start(
                            dir,
                            List.of("-Xmx64m"),
                            // stage 1 gets honest answers, stage 2 the enormous ones
                            argv(
                                    "run --base-url %s --backend openai --model m"
                                            + " --random-input-len 8 --random-output-len 4 --no-stream"
                                            + " --request-rate inf,inf --num-prompts 5 --cooldown 0"
                                            + " --no-self-warmup --progress none --result-dir %s",
                                    server.baseUrl(), results.toString()));
            try {
                assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("the run ended").isTrue();
            } finally {
                p.destroyForcibly();
            }
            String err = NoHangJarTest.stderr(dir);
            String out = NoHangJarTest.stdout(dir);
            System.out.println(err);
            System.out.println(out);
            assertThat(p.exitValue()).as(err).isEqualTo(Main.EXIT_JVM_ERROR);
            assertThat(err)
                    .contains(
                            "error: the runner ran out of memory (-Xmx 64 MiB): Java heap space;"
                                    + " stage 2 stopped; finished stages kept (1 profile"
                                    + " written)")
                    .doesNotContain("\tat ")
                    .doesNotContain("Exception in thread");
            // Not a failure of the target: no request was counted as failed for it.
            assertThat(out).doesNotContain("Java heap space");
            assertThat(handler.enormousBytes.get()).as("the server sent").isPositive();
            List<Path> files = NoHangJarTest.profiles(results);
            assertThat(files).as("stage 1's profile").singleElement();
            assertThat(files.get(0).toString()).doesNotEndWith("-partial.json");
            JsonNode metrics = JSON.readTree(files.get(0).toFile()).path("metrics");
            assertThat(metrics.path("completed").asInt()).isEqualTo(5);
            assertThat(metrics.path("failures").asInt()).isZero();
        }
    }
}
