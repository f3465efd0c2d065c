package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Numbers the CLI reports are measured or absent, never stand-ins (issue: "True numbers"). */
class TrueNumbersTest {

    record Outcome(int code, String out, String err) {}

    /** The CLI run in-process ({@link SimServer#cli}). */
    static Outcome run(String... args) {
        SimServer.Outcome o = SimServer.cli(args);
        return new Outcome(o.code(), o.out(), o.err());
    }

    static List<JsonNode> profiles(Path dir) throws IOException {
        List<JsonNode> result = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.sorted().toList()) {
                result.add(new ObjectMapper().readTree(p.toFile()));
            }
        }
        return result;
    }

    /** {@link #common} and the words of {@code more}, run in-process. */
    private static Outcome runCommon(String baseUrl, Path results, String more) {
        return run(common(baseUrl, results, argv(more)).toArray(String[]::new));
    }

    static List<String> common(String baseUrl, Path results, String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                // The stubs speak OpenAI's API only: with the default
                                // backend (vllm) the runner would first ask them for /tokenize.
                                argv(
                                        "run --base-url %s --backend openai --model m"
                                                + " --random-input-len 8 --cooldown 0 --no-self-warmup"
                                                + " --progress none --result-dir %s",
                                        baseUrl, results.toString())));
        args.addAll(List.of(more));
        return args;
    }

    /** {@link #common} for a quick run: {@code prompts} requests at once, each for 2 tokens. */
    static List<String> quick(String baseUrl, Path results, int prompts, String... more) {
        List<String> args =
                common(
                        baseUrl,
                        results,
                        argv("--random-output-len 2 --request-rate inf --num-prompts %s", prompts));
        args.addAll(List.of(more));
        return args;
    }

    /** {@code args} without {@code --model} and its value: the runner discovers the model. */
    static List<String> withoutModel(List<String> args) {
        int model = args.indexOf("--model");
        args.remove(model + 1);
        args.remove(model);
        return args;
    }

    @Test
    void aServerThatIgnoresStreamHasNoTtftItlOrTpotAndMissesTheirSlo(@TempDir Path dir)
            throws Exception {
        OpenAiStub stub = OpenAiStub.ignoringStream(5, 1);
        try (StubServer server = new StubServer(stub)) {
            Path results = dir.resolve("r");
            Outcome o =
                    runCommon(
                            server.baseUrl(),
                            results,
                            "--random-output-len 4 --request-rate inf,inf"
                                    + " --num-prompts 12 --goodput tpot:50");
            // Before: TTFT = latency, TPOT = 0, and the tpot SLO passed at 100 %.
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            assertThat(o.err()).contains("SLO missed");
            assertThat(o.err().split("were not streamed", -1)).hasSize(2); // warned once
            List<JsonNode> docs = profiles(results);
            assertThat(docs).hasSize(2);
            for (JsonNode doc : docs) {
                JsonNode m = doc.get("metrics");
                assertThat(m.get("completed").asInt()).isEqualTo(12);
                assertThat(m.get("non_streamed_requests").asInt()).isEqualTo(12);
                assertThat(m.get("count_ttft_ms").asInt()).isZero();
                assertThat(m.get("count_itl_ms").asInt()).isZero();
                assertThat(m.get("count_tpot_ms").asInt()).isZero();
                assertThat(m.get("count_e2el_ms").asInt()).isEqualTo(12);
                assertThat(m.get("slo_attainment").asDouble()).isZero();
                assertThat(m.get("goodput_requests").asInt()).isZero();
            }
            // The table shows "-" for what was not measured.
            String row = o.out().lines().filter(l -> l.trim().startsWith("1 ")).findFirst().get();
            assertThat(row).contains(" - ");
        }
    }

    @Test
    void noStreamSaysUpFrontThatTtftIsNotMeasured(@TempDir Path dir) throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(2, 1, true))) {
            Path results = dir.resolve("r");
            Outcome o =
                    runCommon(
                            server.baseUrl(),
                            results,
                            "--no-stream --random-output-len 4 --request-rate inf"
                                    + " --num-prompts 10 --goodput e2el:10000");
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.err()).contains("not streamed").contains("TTFT, ITL and TPOT");
            assertThat(o.err()).doesNotContain("warning:");
            JsonNode m = profiles(results).get(0).get("metrics");
            assertThat(m.get("non_streamed_requests").asInt()).isEqualTo(10);
            assertThat(m.get("count_ttft_ms").asInt()).isZero();
            // An SLO on a measured metric still counts.
            assertThat(m.get("slo_attainment").asDouble()).isEqualTo(1.0);
        }
    }

    @Test
    void waitingForAConnectionBeyondMaxConnectionsIsSlotWaitNotTtft(@TempDir Path dir)
            throws Exception {
        OpenAiStub stub = new OpenAiStub(150, 0, true);
        try (StubServer server = new StubServer(stub)) {
            Path results = dir.resolve("r");
            Outcome o =
                    runCommon(
                            server.baseUrl(),
                            results,
                            "--random-output-len 1 --event-loops 1 --max-connections 1"
                                    + " --request-rate inf --num-prompts 4");
            assertThat(o.code()).as(o.err()).isZero();
            JsonNode m = profiles(results).get(0).get("metrics");
            // What the server saw: each request read -> its first token written.
            double serverTtftMax =
                    stub.written.stream()
                            .mapToDouble(w -> (w.tokenWrites()[0] - w.requestRead()) / 1e6)
                            .max()
                            .orElseThrow();
            // One connection: requests 2..4 queued behind the earlier ones. Before, their TTFT
            // included the queue (about 150, 300, 450 ms); now it is the server's own time.
            assertThat(m.get("max_ttft_ms").asDouble()).isLessThan(serverTtftMax + 100);
            assertThat(m.get("count_slot_wait_ms").asInt()).isEqualTo(3);
            // The last request waited for the three before it.
            double span =
                    stub.written.stream().mapToLong(w -> w.requestRead()).max().getAsLong()
                            - stub.written.stream()
                                    .mapToLong(w -> w.requestRead())
                                    .min()
                                    .getAsLong();
            assertThat(m.get("max_slot_wait_ms").asDouble()).isGreaterThan(span / 1e6 * 0.9);
            assertThat(m.get("max_schedule_lag_ms").asDouble())
                    .isGreaterThanOrEqualTo(m.get("max_slot_wait_ms").asDouble());
        }
    }

    @Test
    void ratesOfATinyStageAreMarkedNotMeaningful(@TempDir Path dir) throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(1, 0, true))) {
            Path results = dir.resolve("r");
            Outcome o =
                    runCommon(
                            server.baseUrl(),
                            results,
                            "--random-output-len 4 --request-rate inf --num-prompts 5");
            assertThat(o.code()).as(o.err()).isZero();
            String row = o.out().lines().filter(l -> l.trim().startsWith("1 ")).findFirst().get();
            assertThat(row).contains("n/a");
            assertThat(o.out()).contains("fewer than 10 requests");
            JsonNode m = profiles(results).get(0).get("metrics");
            assertThat(m.get("rates_meaningful").asBoolean()).isFalse();
        }
    }
}
