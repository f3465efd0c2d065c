package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code search} as users run it: the shaded jar, stopped by SIGTERM. */
class SearchJarTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path JAR = Path.of("target/inferencebench-runner.jar");

    /**
     * SIGTERM after some probes passed: the search stops, exit 130, and capacity.json says {@code
     * interrupted} with the bracket so far (not {@code in_progress} with a null passing rate).
     */
    @Test
    void anInterruptedSearchWritesTheBracketSoFar(@TempDir Path tmp) throws Exception {
        Path results = tmp.resolve("search");
        try (SimServer sim =
                new SimServer(
                        tmp.resolve("sim.log"),
                        argv(
                                "--time-to-first-token 0 --inter-token-latency 0 --max-num-seqs 100"))) {
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> command =
                    new ArrayList<>(
                            List.of(
                                    java,
                                    "-jar",
                                    JAR.toString(),
                                    "search",
                                    "--base-url",
                                    sim.baseUrl,
                                    "--model",
                                    "sim",
                                    "--backend",
                                    "openai",
                                    "--random-input-len",
                                    "8",
                                    "--random-output-len",
                                    "8",
                                    "--goodput",
                                    "ttft:1000",
                                    // 4 of 4 good (95 % interval 51-100 %) decide a minimum of
                                    // 50 %: every probe is judged at once
                                    "--slo-min-attainment",
                                    "0.5",
                                    "--arrival",
                                    "constant",
                                    "--duration",
                                    "2s",
                                    "--min-rate",
                                    "2",
                                    "--max-rate",
                                    "64",
                                    "--pause",
                                    "1s",
                                    "--result-dir",
                                    results.toString()));
            Path out = tmp.resolve("stdout.txt");
            Path err = tmp.resolve("stderr.txt");
            Process p =
                    new ProcessBuilder(command)
                            .redirectOutput(out.toFile())
                            .redirectError(err.toFile())
                            .start();
            Path capacityFile = results.resolve("capacity.json");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline && passes(capacityFile) < 2 && p.isAlive()) {
                Thread.sleep(100);
            }
            assertThat(passes(capacityFile)).as(Files.readString(out)).isGreaterThanOrEqualTo(2);
            new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String context =
                    Files.readString(out, StandardCharsets.UTF_8)
                            + Files.readString(err, StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(context).isEqualTo(130);
            JsonNode capacity = JSON.readTree(capacityFile.toFile());
            assertThat(capacity.get("outcome").asText()).as(context).isEqualTo("interrupted");
            assertThat(capacity.get("passing_rate").asDouble())
                    .as(context)
                    .isGreaterThanOrEqualTo(4);
            assertThat(capacity.get("max_request_rate").isNull()).isFalse();
            assertThat(capacity.get("message").asText()).contains("interrupted after");
            assertThat(context).contains("capacity.json");
        }
    }

    /** Probes judged pass in capacity.json so far (it is rewritten atomically after each). */
    private static int passes(Path capacity) {
        try {
            if (!Files.exists(capacity)) {
                return 0;
            }
            int n = 0;
            for (JsonNode probe : JSON.readTree(capacity.toFile()).get("probes")) {
                n += probe.path("passed").asBoolean(false) ? 1 : 0;
            }
            return n;
        } catch (Exception e) {
            return 0;
        }
    }
}
