package io.inferencebench.runner.transformers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.Main;
import io.inferencebench.testkit.TransformersServe;
import io.inferencebench.testkit.TransformersServe.AccessLine;
import io.inferencebench.testkit.UsageTap;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner CLI against Hugging Face {@code transformers serve} (5.17 on the CPU, the project's
 * tiny random-weight Llama, continuous batching; {@code make test-transformers}): a server nobody
 * here wrote, with a strict OpenAI request schema, streams that end without {@code data: [DONE]},
 * no model listed by {@code /v1/models} and no {@code /metrics}.
 *
 * <p>With no counters to scrape, the server's own record is what it answered: a {@link UsageTap} in
 * front of it keeps every exchange's status and the {@code usage} the server reported, and
 * uvicorn's access log says what the server itself answered. Every request must be answered 2xx
 * (the {@code openai} backend sends only OpenAI's fields), and the runner's token totals must be
 * the sums of the server's {@code usage}. The model has no end-of-sequence token, so every answer
 * is exactly {@code max_tokens} long (the server refuses {@code ignore_eos}).
 */
@ExtendWith(TransformersServe.class)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class RunnerCliTransformersIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static UsageTap tap;
    private static TransformersServe.Server server;

    record Outcome(int code, String out, String err, JsonNode profile) {}

    @BeforeAll
    static void startTap() throws Exception {
        server = TransformersServe.server();
        tap = UsageTap.start("127.0.0.1", URI.create(server.baseUrl()));
    }

    @AfterAll
    static void stopTap() {
        if (tap != null) {
            tap.close();
        }
    }

    @BeforeEach
    void forgetEarlierExchanges() {
        tap.clear();
    }

    static Outcome run(Path results, List<String> args) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of("--result-dir", results.toString(), "--progress", "none"));
        int code =
                Main.execute(
                        new PrintWriter(out, true),
                        new PrintWriter(err, true),
                        all.toArray(String[]::new));
        JsonNode profile = null;
        if (Files.isDirectory(results)) {
            try (Stream<Path> s = Files.list(results)) {
                List<Path> files = s.filter(f -> f.toString().endsWith(".json")).sorted().toList();
                if (!files.isEmpty()) {
                    profile = JSON.readTree(files.get(0).toFile());
                }
            }
        }
        return new Outcome(code, out.toString(), err.toString(), profile);
    }

    /** The generic OpenAI backend through the tap, prompts sized by the model's own tokenizer. */
    static List<String> common(String api, int prompts, int in, int outLen) {
        return new ArrayList<>(
                List.of(
                        "run",
                        "--base-url",
                        tap.baseUrl().toString(),
                        "--backend",
                        "openai",
                        "--api",
                        api,
                        "--model",
                        server.modelName(),
                        "--tokenizer",
                        server.tokenizerJson().toString(),
                        "--dataset-name",
                        "random",
                        "--random-input-len",
                        "" + in,
                        "--random-output-len",
                        "" + outLen,
                        "--request-rate",
                        "2",
                        "--num-prompts",
                        "" + prompts,
                        "--seed",
                        "7"));
    }

    /**
     * The runner's counts against the server's answers: every request sent was answered 2xx (tap
     * and the server's access log), its streamed {@code usage} sums are the profile's token totals,
     * and each answer has exactly the requested output length.
     */
    private static void assertAgreesWithTheServersUsage(
            String label, JsonNode metrics, String path, int requests, int outLen, int logFrom) {
        UsageTap.Totals server = tap.totals(UsageTap.post(path));
        List<UsageTap.Exchange> exchanges = tap.exchanges(UsageTap.post(path));
        List<AccessLine> logged =
                TransformersServe.accessLines(
                        RunnerCliTransformersIT.server.logText().substring(logFrom));
        System.out.printf(
                Locale.ROOT,
                "[transformers-it] %s: %d sent, %d ok; server answered %d x 2xx of %d (log: %d"
                        + " lines, statuses %s); output tokens client %d, server usage %d;"
                        + " prompt tokens client %d, server usage %d; achieved %.2f req/s,"
                        + " output %.1f tok/s; TTFT p50 %.0f p99 %.0f ms; ITL p50 %.0f ms; TPOT"
                        + " p50 %.0f ms; E2E p50 %.0f ms; content events/token %.3f%n",
                label,
                metrics.path("requests_sent").asInt(),
                metrics.path("completed").asInt(),
                server.ok(),
                server.exchanges(),
                logged.size(),
                logged.stream().map(AccessLine::status).distinct().toList(),
                metrics.path("total_output_token").asLong(),
                server.completionTokens(),
                metrics.path("total_input_tokens").asLong(),
                server.promptTokens(),
                metrics.path("achieved_rate").asDouble(),
                metrics.path("total_output_token").asDouble()
                        / metrics.path("benchmark_time").asDouble(),
                metrics.path("median_ttft_ms").asDouble(),
                metrics.path("p99_ttft_ms").asDouble(),
                metrics.path("median_itl_ms").asDouble(),
                metrics.path("median_tpot_ms").asDouble(),
                metrics.path("median_e2el_ms").asDouble(),
                (metrics.path("count_itl_ms").asDouble() + requests)
                        / metrics.path("total_output_token").asDouble());
        // No request refused: everything sent reached the server and was answered 2xx.
        assertThat(metrics.path("requests_sent").asInt()).isEqualTo(requests);
        assertThat(metrics.path("completed").asInt()).isEqualTo(requests);
        assertThat(metrics.path("failures").asInt()).isZero();
        assertThat(server.exchanges()).as("POST %s through the tap", path).isEqualTo(requests);
        assertThat(exchanges)
                .allSatisfy(e -> assertThat(e.status()).as(e.bodyStart()).isEqualTo(200));
        assertThat(logged)
                .as("the server's access log during the run")
                .filteredOn(l -> l.method().equals("POST"))
                .hasSize(requests)
                .allSatisfy(l -> assertThat(l.status()).isEqualTo(200));
        assertThat(logged).allSatisfy(l -> assertThat(l.status()).isBetween(200, 299));
        // The server's streams: usage in the last event, no [DONE] line (the runner coped).
        assertThat(exchanges)
                .allSatisfy(
                        e -> {
                            assertThat(e.streamed()).isTrue();
                            assertThat(e.endedWithDone()).isFalse();
                            assertThat(e.completionTokens()).isEqualTo(outLen);
                        });
        assertThat(metrics.path("count_ttft_ms").asInt()).isEqualTo(requests);
        assertThat(metrics.path("non_streamed_requests").asInt()).isZero();
        // Token counts: the runner's totals are the sums of the server's usage.
        assertThat(metrics.path("output_token_source").asText()).isEqualTo("usage");
        assertThat(metrics.path("input_token_source").asText()).isEqualTo("usage");
        assertThat(server.withUsage()).isEqualTo(requests);
        assertThat(metrics.path("total_output_token").asLong())
                .isEqualTo(server.completionTokens())
                .isEqualTo((long) requests * outLen);
        assertThat(metrics.path("min_output_len").asInt()).isEqualTo(outLen);
        assertThat(metrics.path("max_output_len").asInt()).isEqualTo(outLen);
        assertThat(metrics.path("total_input_tokens").asLong()).isEqualTo(server.promptTokens());
        // At most one inter-event gap per token after the first: the server sends some tokens in
        // events with empty text, so the client sees fewer content events than tokens.
        assertThat(metrics.path("count_itl_ms").asLong())
                .isLessThanOrEqualTo((long) requests * (outLen - 1));
    }

    private static int logLength() {
        return server.logText().length();
    }

    @Test
    void streamingCompletionsAreAllAnsweredAndCountedAsTheServerCounted(@TempDir Path dir)
            throws Exception {
        int from = logLength();
        Outcome o = run(dir.resolve("r"), common("completions", 16, 64, 16));
        assertThat(o.code()).as(o.err()).isZero();
        JsonNode metrics = o.profile().path("metrics");
        assertThat(o.profile().at("/dimensions/backend").asText()).isEqualTo("openai");
        assertThat(o.profile().at("/dimensions/prompt_format").asText()).isEqualTo("text");
        assertAgreesWithTheServersUsage(
                "completions 64/16 x16", metrics, "/v1/completions", 16, 16, from);
        // The prompts were sized with the model's own tokenizer, and the server counts them alike
        // (a byte-level vocabulary can leave a prompt 1-3 tokens longer, see runner/README.md).
        assertThat(metrics.path("min_input_len").asInt()).isEqualTo(64);
        assertThat(metrics.path("max_input_len").asInt()).isLessThanOrEqualTo(64 + 3);
    }

    @Test
    void streamingChatIsAllAnsweredAndCountedAsTheServerCounted(@TempDir Path dir)
            throws Exception {
        int from = logLength();
        Outcome o = run(dir.resolve("r"), common("chat", 12, 48, 24));
        assertThat(o.code()).as(o.err()).isZero();
        JsonNode metrics = o.profile().path("metrics");
        assertAgreesWithTheServersUsage(
                "chat 48/24 x12", metrics, "/v1/chat/completions", 12, 24, from);
        // The text has 48 tokens by the model's tokenizer; the chat template adds its own (the
        // server's count of an empty message), give or take a merge at each seam.
        int template = promptTokensOfAnEmptyChatMessage();
        assertThat(template).isPositive();
        assertThat(metrics.path("min_input_len").asInt()).isGreaterThanOrEqualTo(48 + template - 3);
        assertThat(metrics.path("max_input_len").asInt()).isLessThanOrEqualTo(48 + template + 3);
    }

    private static int promptTokensOfAnEmptyChatMessage() throws Exception {
        String body =
                JSON.writeValueAsString(
                        java.util.Map.of(
                                "model",
                                server.modelName(),
                                "messages",
                                List.of(java.util.Map.of("role", "user", "content", "")),
                                "max_tokens",
                                1));
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r =
                    http.send(
                            HttpRequest.newBuilder(
                                            URI.create(server.baseUrl() + "/v1/chat/completions"))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return JSON.readTree(r.body()).at("/usage/prompt_tokens").asInt(-1);
        }
    }

    /** The server lists no model, so the name cannot be discovered: the runner asks for it. */
    @Test
    void withoutAModelNameTheRunnerAsksForOne(@TempDir Path dir) throws Exception {
        List<String> args = common("completions", 4, 16, 4);
        int at = args.indexOf("--model");
        args.remove(at + 1);
        args.remove(at);
        Outcome o = run(dir.resolve("r"), args);
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--model");
        assertThat(o.profile()).isNull();
        assertThat(tap.exchanges(e -> e.path().endsWith("/v1/models")))
                .as("the discovery the runner tried")
                .isNotEmpty();
        assertThat(tap.exchanges(UsageTap.post("/v1/completions"))).isEmpty();
    }

    /**
     * The same server refuses an extension asked for explicitly - which shows that the requests
     * above were accepted because they carry OpenAI's fields only - and the runner names the flag.
     */
    @Test
    void ignoreEosAskedForIsRefusedByTheServerAndTheFlagIsNamed(@TempDir Path dir)
            throws Exception {
        List<String> args = common("completions", 4, 16, 4);
        args.addAll(List.of("--ignore-eos", "--no-self-warmup"));
        Outcome o = run(dir.resolve("r"), args);
        assertThat(o.code()).as(o.err()).isEqualTo(1);
        assertThat(o.err())
                .contains("HTTP 422")
                .contains("the server refuses a field outside OpenAI's API: ignore_eos")
                .contains("--ignore-eos false");
        List<UsageTap.Exchange> refused = tap.exchanges(UsageTap.post("/v1/completions"));
        assertThat(refused)
                .isNotEmpty()
                .allSatisfy(
                        e -> {
                            assertThat(e.status()).isEqualTo(422);
                            assertThat(e.bodyStart()).contains("ignore_eos");
                        });
    }
}
