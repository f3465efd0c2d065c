package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import io.inferencebench.runner.stub.VocabularyStub;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliTest {

    record Outcome(int code, String out, String err) {}

    /** The CLI run in-process ({@link SimServer#cli}). */
    static Outcome run(String... args) {
        SimServer.Outcome o = SimServer.cli(args);
        return new Outcome(o.code(), o.out(), o.err());
    }

    /** The OpenAI stub plus GET /v1/models, recording request headers. */
    static final class ModelServer implements StubServer.Handler {
        final OpenAiStub stub;
        final ConcurrentLinkedQueue<String> authorization = new ConcurrentLinkedQueue<>();

        ModelServer(double ttft, double itl) {
            stub = new OpenAiStub(ttft, itl, true);
        }

        @Override
        public void handle(StubServer.Request request, StubServer.Exchange exchange)
                throws Exception {
            if (request.header("authorization") != null) {
                authorization.add(request.header("authorization"));
            }
            if (request.method().equals("GET") && request.path().equals("/v1/models")) {
                exchange.respond(
                        200,
                        "application/json",
                        "{\"object\":\"list\",\"data\":[{\"id\":\"org/stub-model-7b\",\"object\":\"model\"}]}");
                return;
            }
            if (request.path().endsWith("tokenize")) {
                // As servers without tokenizer endpoints answer (VocabularyStub has them).
                exchange.respond(404, "application/json", "{\"detail\":\"Not Found\"}");
                return;
            }
            stub.handle(request, exchange);
        }
    }

    private static Outcome expectUsageError(String... args) {
        Outcome o = run(args);
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        return o;
    }

    @Test
    void badFlagsNameTheFlagAndWhatIsAllowed() {
        assertThat(expectUsageError("run", "--request-rate", "fast").err())
                .contains("--request-rate")
                .contains("'inf'");
        assertThat(expectUsageError("run", "--request-rate", "0").err()).contains("--request-rate");
        assertThat(expectUsageError("run", "--goodput", "latency:5").err())
                .contains("--goodput")
                .contains("ttft, tpot, e2el");
        assertThat(expectUsageError("run", "--goodput", "ttft:abc").err()).contains("--goodput");
        assertThat(expectUsageError("run", "--backend", "nope").err())
                .contains("--backend")
                .contains("vllm");
        assertThat(expectUsageError("run", "--api", "rest").err()).contains("--api");
        assertThat(expectUsageError("run", "--duration", "5 minutes").err())
                .contains("--duration")
                .contains("30s");
        assertThat(expectUsageError("run", "--burstiness", "0.5", "--arrival", "poisson").err())
                .contains("--burstiness")
                .contains("gamma");
        assertThat(expectUsageError("run", "--arrival", "bursty").err())
                .contains("--arrival")
                .contains("poisson");
        assertThat(expectUsageError("run", "--dataset-name", "alpaca").err())
                .contains("--dataset-name")
                .contains("random, prefix_repetition, multi-turn, sharegpt, jsonl, trace");
        assertThat(expectUsageError("run", "--dataset-name", "sharegpt").err())
                .contains("--dataset-path");
        assertThat(expectUsageError("run", "--request-rate", "inf", "--duration", "5s").err())
                .contains("--max-concurrency");
        assertThat(expectUsageError("run", "--num-prompts", "0").err()).contains("--num-prompts");
        assertThat(expectUsageError("run", "--header", "novalue").err()).contains("--header");
        assertThat(expectUsageError("run", "--tokenizer", "/nonexistent/tokenizer.json").err())
                .contains("--tokenizer");
        assertThat(expectUsageError("run", "--config", "/nonexistent.yaml").err())
                .contains("--config");
        assertThat(expectUsageError("run", "--num-prompts", "ten").err()).contains("--num-prompts");
        assertThat(expectUsageError("run", "--no-such-flag").err()).contains("--no-such-flag");
        assertThat(expectUsageError("run", "--progress", "fancy").err()).contains("--progress");
    }

    @Test
    void aConcurrencyAboveTheLimitNeedsPromptsToBoundIt() {
        assertThat(
                        expectUsageError(
                                        argv(
                                                "run --concurrency 2147483647 --duration 10s"
                                                        + " --base-url http://127.0.0.1:9"))
                                .err())
                .contains(
                        "--concurrency: at most 100000 requests in flight, got 2147483647 (more"
                                + " only with --num-prompts at most 100000");
        assertThat(
                        expectUsageError(
                                        argv(
                                                "run --concurrency 200000 --num-prompts 300000"
                                                        + " --base-url http://127.0.0.1:9"))
                                .err())
                .contains("--concurrency: at most 100000 requests in flight, got 200000");
        // An unbounded rate for a duration would start that many at once (it never returned to
        // its event loop); the warm-up sends all of its requests at once too.
        assertThat(
                        expectUsageError(
                                        argv(
                                                "run --request-rate inf --duration 2s"
                                                        + " --max-concurrency 2147483647 --base-url http://127.0.0.1:9"))
                                .err())
                .contains(
                        "--max-concurrency: at most 100000 requests in flight, got 2147483647"
                                + " (leave it out for no cap)");
        assertThat(
                        expectUsageError(
                                        "run",
                                        "--num-warmups",
                                        "2147483647",
                                        "--base-url",
                                        "http://127.0.0.1:9")
                                .err())
                .contains("--num-warmups: at most 100000, got 2147483647");
    }

    @Test
    void sweepWritesOneLpgProfilePerStageAndPrintsTheTable(@TempDir Path dir) throws Exception {
        ModelServer handler = new ModelServer(5, 1);
        VocabularyStub vocabulary = new VocabularyStub(200, true, handler);
        try (StubServer server = new StubServer(vocabulary)) {
            Path keyFile = dir.resolve("key");
            Files.writeString(keyFile, "sk-very-secret-123\n");
            Path results = dir.resolve("results");
            Outcome o =
                    run(
                            argv(
                                    "run --base-url %s --backend vllm --random-input-len 16"
                                            + " --random-output-len 8 --request-rate 40,inf"
                                            + " --num-prompts 20 --num-warmups 2 --cooldown 100ms --seed 3"
                                            + " --api-key-file %s --header X-Team=bench --result-dir %s"
                                            + " --progress lines",
                                    server.baseUrl(), keyFile.toString(), results.toString()));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.out()).contains("achieved").contains("lag p99").contains("ttft p50");
            List<Path> files;
            try (Stream<Path> s = Files.list(results)) {
                files = s.sorted().toList();
            }
            assertThat(files).hasSize(2);
            assertThat(files.get(0).getFileName().toString())
                    .matches("vllm-40\\.0qps-stub-model-7b-\\d{8}-\\d{6}\\.json");
            assertThat(files.get(1).getFileName().toString())
                    .matches("vllm-infqps-stub-model-7b-\\d{8}-\\d{6}\\.json");
            ObjectMapper mapper = new ObjectMapper();
            JsonNode first = mapper.readTree(files.get(0).toFile());
            assertThat(first.at("/metrics/num_prompts").asInt()).isEqualTo(20);
            assertThat(first.at("/metrics/request_rate").asDouble()).isEqualTo(40.0);
            assertThat(first.at("/metrics/completed").asInt()).isEqualTo(20);
            assertThat(first.at("/metrics/total_output_token").asInt()).isEqualTo(160);
            assertThat(first.at("/metrics/avg_input_len").asDouble()).isEqualTo(16.0);
            assertThat(first.at("/metrics/warmup_requests_excluded").asInt()).isEqualTo(2);
            assertThat(first.at("/metrics/output_token_source").asText()).isEqualTo("usage");
            assertThat(first.at("/dimensions/model_id").asText()).isEqualTo("org/stub-model-7b");
            assertThat(first.at("/dimensions/prompt_format").asText()).isEqualTo("token_ids");
            assertThat(first.at("/config/model").asText()).isEqualTo("org/stub-model-7b");
            assertThat(first.at("/metrics/achieved_rate").asDouble()).isBetween(20.0, 80.0);
            JsonNode second = mapper.readTree(files.get(1).toFile());
            assertThat(second.at("/metrics/request_rate").asText()).isEqualTo("inf");
            assertThat(second.at("/metrics/warmup_requests_excluded").asInt()).isZero();
            // Token-id prompts reached the server, and the key did too, but was never printed or
            // written.
            assertThat(handler.stub.bodies.peek().path("prompt").isArray()).isTrue();
            // ... ids of the server's own vocabulary, from its /tokenize.
            assertThat(vocabulary.rejected).hasValue(0);
            assertThat(vocabulary.tokenizeCalls.get()).isPositive();
            assertThat(first.at("/dimensions/tokenizer_id").asText()).endsWith("/tokenize");
            assertThat(handler.stub.bodies.peek().path("model").asText())
                    .isEqualTo("org/stub-model-7b");
            assertThat(handler.authorization).contains("Bearer sk-very-secret-123");
            assertThat(o.out() + o.err()).doesNotContain("sk-very-secret");
            for (Path f : files) {
                assertThat(Files.readString(f))
                        .doesNotContain("sk-very-secret")
                        .doesNotContain("X-Team");
            }
        }
    }

    @Test
    void exitsNonZeroWhenAStageHasNoSuccessfulRequest(@TempDir Path dir) throws IOException {
        try (StubServer server =
                new StubServer((req, ex) -> ex.respond(500, "text/plain", "broken"))) {
            Outcome o =
                    run(
                            argv(
                                    "run --base-url %s --model m --request-rate inf"
                                            + " --num-prompts 5 --result-dir %s --progress none"
                                            + " --no-self-warmup",
                                    server.baseUrl(), dir.toString()));
            assertThat(o.code()).isEqualTo(1);
            assertThat(o.err()).contains("no successful request").contains("http_5xx");
            try (Stream<Path> s = Files.list(dir)) {
                // Partial results are still written.
                JsonNode profile =
                        new ObjectMapper().readTree(s.findFirst().orElseThrow().toFile());
                assertThat(profile.at("/metrics/errors_by_class/http_5xx").asInt()).isEqualTo(5);
            }
        }
    }

    @Test
    void usageOnlyStreamsAreEmptyResponsesInTheSummaryAndTheProfile(@TempDir Path dir)
            throws IOException {
        try (StubServer server =
                new StubServer(
                        (req, ex) -> {
                            ex.startSse();
                            ex.chunk(
                                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
                                            + "\"completion_tokens\":0}}\n\n");
                            ex.chunk("data: [DONE]\n\n");
                            ex.endChunked();
                        })) {
            Outcome o =
                    run(
                            argv(
                                    "run --base-url %s --model m --num-prompts 4 --result-dir %s"
                                            + " --progress none --no-self-warmup",
                                    server.baseUrl(), dir.toString()));
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            assertThat(o.err())
                    .contains("no successful request")
                    .contains("empty_response")
                    .contains("no content");
            try (Stream<Path> s = Files.list(dir)) {
                JsonNode profile =
                        new ObjectMapper().readTree(s.findFirst().orElseThrow().toFile());
                assertThat(profile.at("/metrics/errors_by_class/empty_response").asInt())
                        .isEqualTo(4);
                assertThat(profile.at("/metrics/completed").asInt()).isZero();
            }
        }
    }

    @Test
    void exitsNonZeroWhenTheGoodputSloIsMissedAndZeroWhenMet(@TempDir Path dir) throws IOException {
        try (StubServer server = new StubServer(new ModelServer(30, 1))) {
            String[] base = {
                "run",
                "--base-url",
                server.baseUrl(),
                "--model",
                "m",
                "--request-rate",
                "inf",
                "--num-prompts",
                "6",
                "--random-output-len",
                "4",
                "--progress",
                "none",
                "--no-self-warmup"
            };
            Outcome missed =
                    run(
                            concat(
                                    base,
                                    "--goodput",
                                    "ttft:5",
                                    "--result-dir",
                                    dir.resolve("a").toString()));
            assertThat(missed.code()).isEqualTo(1);
            assertThat(missed.err()).contains("SLO missed");
            assertThat(missed.out()).contains("slo %");
            Outcome met =
                    run(
                            concat(
                                    base,
                                    "--goodput",
                                    "ttft:5000",
                                    "e2el:10000",
                                    "--result-dir",
                                    dir.resolve("b").toString()));
            assertThat(met.code()).as(met.err()).isZero();
        }
    }

    @Test
    void configFileGivesWorkloadAndStages(@TempDir Path dir) throws IOException {
        ModelServer handler = new ModelServer(1, 1);
        try (StubServer server = new StubServer(handler)) {
            Path config = dir.resolve("bench.yaml");
            Files.writeString(
                    config,
                    """
                    workload:
                      dataset:
                        type: random
                        inputTokens: {type: fixed, mean: 12}
                        outputTokens: {type: fixed, mean: 3}
                        seed: 9
                      streaming: true
                      ignoreEos: true
                    load:
                      stages:
                        - {requestRate: 30, numPrompts: 6}
                        - {concurrency: 2, numPrompts: 4}
                      arrival: constant
                      cooldown: 100ms
                    slo: {ttft: 10s}
                    """);
            Outcome o =
                    run(
                            argv(
                                    "run --base-url %s --config %s --backend openai"
                                            + " --result-dir %s --progress none --no-self-warmup",
                                    server.baseUrl(),
                                    config.toString(),
                                    dir.resolve("r").toString()));
            assertThat(o.code()).as(o.err()).isZero();
            List<JsonNode> profiles = new ArrayList<>();
            try (Stream<Path> s = Files.list(dir.resolve("r"))) {
                for (Path p : s.sorted().toList()) {
                    profiles.add(new ObjectMapper().readTree(p.toFile()));
                }
            }
            assertThat(profiles).hasSize(2);
            JsonNode rate =
                    profiles.stream()
                            .filter(p -> p.at("/metrics/request_rate").isNumber())
                            .findFirst()
                            .orElseThrow();
            assertThat(rate.at("/metrics/num_prompts").asInt()).isEqualTo(6);
            assertThat(rate.at("/metrics/avg_output_len").asDouble()).isEqualTo(3.0);
            assertThat(rate.at("/metrics/slo/ttft_ms").asDouble()).isEqualTo(10000.0);
            JsonNode closed =
                    profiles.stream()
                            .filter(p -> p.at("/metrics/request_rate").isTextual())
                            .findFirst()
                            .orElseThrow();
            assertThat(closed.at("/metrics/max_concurrency").asInt()).isEqualTo(2);
            assertThat(closed.at("/metrics/completed").asInt()).isEqualTo(4);
            // Backend openai sends text prompts (labelled as an approximation without tokenizer).
            assertThat(handler.stub.bodies.peek().path("prompt").isTextual()).isTrue();
            assertThat(rate.at("/metrics/input_token_source").asText()).isEqualTo("usage");
        }
    }

    @Test
    void configFileTargetSectionIsUsedAndFlagsWin(@TempDir Path dir) throws Exception {
        OpenAiStub stub = new OpenAiStub(1, 1, true);
        ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
        try (StubServer server =
                new StubServer(
                        (request, exchange) -> {
                            seen.add(
                                    request.path()
                                            + " model="
                                            + request.json().path("model").asText()
                                            + " config="
                                            + request.header("X-From-Config")
                                            + " both="
                                            + request.header("X-Both"));
                            stub.handle(request, exchange);
                        })) {
            Path config = dir.resolve("bench.yaml");
            Files.writeString(
                    config,
                    """
                    target:
                      url: %s
                      backend: openai
                      api: chat
                      model: cfg/model-1b
                      headers: {X-From-Config: "yes", X-Both: config}
                    workload:
                      dataset:
                        inputTokens: {type: fixed, mean: 8}
                        outputTokens: {type: fixed, mean: 2}
                    load:
                      stages:
                        - {requestRate: 40, numPrompts: 6}
                        - {concurrency: 2, numPrompts: 4}
                      cooldown: 0s
                    """
                            .formatted(server.baseUrl()));
            Outcome o =
                    run(
                            argv(
                                    "run --config %s --header X-Both=flag --num-prompts 3"
                                            + " --result-dir %s --progress none --no-self-warmup",
                                    config.toString(), dir.resolve("r").toString()));
            assertThat(o.code()).as(o.err()).isZero();
            // No --base-url: the config's target.url; its API, model and headers; --header wins.
            assertThat(seen)
                    .hasSize(6)
                    .containsOnly("/v1/chat/completions model=cfg/model-1b config=yes both=flag");
            List<JsonNode> profiles = new ArrayList<>();
            try (Stream<Path> files = Files.list(dir.resolve("r"))) {
                for (Path p : files.sorted().toList()) {
                    profiles.add(new ObjectMapper().readTree(p.toFile()));
                }
            }
            // --num-prompts applies to each of the config's stages.
            assertThat(profiles)
                    .hasSize(2)
                    .allSatisfy(
                            p -> {
                                assertThat(p.at("/metrics/num_prompts").asInt()).isEqualTo(3);
                                assertThat(p.at("/dimensions/model_id").asText())
                                        .isEqualTo("cfg/model-1b");
                            });
        }
    }

    @Test
    void configFileErrorsNameTheProblem(@TempDir Path dir) throws IOException {
        Path config = dir.resolve("bad.yaml");
        Files.writeString(config, "load:\n  stagez: []\n");
        assertThat(expectUsageError("run", "--config", config.toString()).err())
                .contains("--config")
                .contains("stagez");
    }

    @Test
    void liveMetricsAreServedWhileAStageRuns(@TempDir Path dir) throws Exception {
        try (StubServer server = new StubServer(new ModelServer(1500, 1))) {
            StringWriter err = new StringWriter();
            Thread run =
                    Thread.ofPlatform()
                            .start(
                                    () ->
                                            Main.execute(
                                                    new PrintWriter(new StringWriter(), true),
                                                    new PrintWriter(err, true),
                                                    argv(
                                                            "run --base-url %s --model m --request-rate inf"
                                                                    + " --num-prompts 3 --random-output-len 2 --metrics-port 0"
                                                                    + " --progress none --no-self-warmup --result-dir %s",
                                                            server.baseUrl(), dir.toString())));
            java.util.regex.Pattern url =
                    java.util.regex.Pattern.compile("live metrics on (http://\\S+/metrics)");
            String metricsUrl = null;
            for (int i = 0; i < 100 && metricsUrl == null; i++) {
                java.util.regex.Matcher m = url.matcher(err.toString());
                if (m.find()) {
                    metricsUrl = m.group(1);
                } else {
                    Thread.sleep(50);
                }
            }
            assertThat(metricsUrl).as(err.toString()).isNotNull();
            String body = "";
            for (int i = 0; i < 40 && !body.contains("inferencebench_in_flight_requests 3"); i++) {
                Thread.sleep(50);
                body =
                        java.net.http.HttpClient.newHttpClient()
                                .send(
                                        java.net.http.HttpRequest.newBuilder(
                                                        java.net.URI.create(metricsUrl))
                                                .build(),
                                        java.net.http.HttpResponse.BodyHandlers.ofString())
                                .body();
            }
            assertThat(body).contains("inferencebench_in_flight_requests 3");
            assertThat(body).contains("inferencebench_stage 0");
            run.join(20_000);
            assertThat(run.isAlive()).isFalse();
        }
    }

    @Test
    void shareGptWithTokenizerCountsTokensWhenTheServerReportsNoUsage(@TempDir Path dir)
            throws Exception {
        Path data = dir.resolve("sharegpt.json");
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < 10; i++) {
            json.append(i == 0 ? "" : ",")
                    .append("{\"conversations\":[{\"from\":\"human\",\"value\":\"the model server ")
                    .append("is fast and the latency is small number ".repeat(1 + i % 3))
                    .append(i)
                    .append("\"},{\"from\":\"gpt\",\"value\":\"")
                    .append("answer text ".repeat(5))
                    .append("\"}]}");
        }
        Files.writeString(data, json.append("]").toString());
        OpenAiStub stub = new OpenAiStub(1, 1, false);
        try (StubServer server = new StubServer(stub)) {
            Outcome o =
                    run(
                            argv(
                                    "run --base-url %s --model m --backend sglang --api chat"
                                            + " --dataset-name sharegpt --dataset-path %s"
                                            + " --tokenizer src/test/resources/tokenizer/tokenizer.json"
                                            + " --request-rate inf --num-prompts 6 --progress none"
                                            + " --no-self-warmup --result-dir %s",
                                    server.baseUrl(),
                                    data.toString(),
                                    dir.resolve("r").toString()));
            assertThat(o.code()).as(o.err()).isZero();
            JsonNode profile;
            try (Stream<Path> s = Files.list(dir.resolve("r"))) {
                profile = new ObjectMapper().readTree(s.findFirst().orElseThrow().toFile());
            }
            assertThat(profile.at("/metrics/output_token_source").asText()).isEqualTo("tokenizer");
            assertThat(profile.at("/metrics/input_token_source").asText()).isEqualTo("tokenizer");
            assertThat(profile.at("/metrics/total_output_token").asLong()).isPositive();
            assertThat(profile.at("/dimensions/tokenizer_id").asText()).contains("tokenizer.json");
            // ShareGPT replies set max_tokens; chat API got messages.
            JsonNode body = stub.bodies.peek();
            assertThat(body.path("messages").get(0).path("content").asText())
                    .startsWith("the model server");
            assertThat(body.path("max_tokens").asInt()).isPositive();
        }
    }

    @Test
    void closedLoopStageBoundedByDuration(@TempDir Path dir) throws Exception {
        try (StubServer server = new StubServer(new ModelServer(5, 1))) {
            long start = System.nanoTime();
            Outcome o =
                    run(
                            argv(
                                    "run --base-url %s --model m --concurrency 2 --duration 1s"
                                            + " --random-output-len 2 --progress none --no-self-warmup"
                                            + " --result-dir %s",
                                    server.baseUrl(), dir.toString()));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat((System.nanoTime() - start) / 1e9).isLessThan(10);
            JsonNode profile;
            try (Stream<Path> s = Files.list(dir)) {
                profile = new ObjectMapper().readTree(s.findFirst().orElseThrow().toFile());
            }
            assertThat(profile.at("/metrics/request_rate").asText()).isEqualTo("inf");
            assertThat(profile.at("/metrics/max_concurrency").asInt()).isEqualTo(2);
            assertThat(profile.at("/metrics/completed").asInt()).isGreaterThan(20);
            assertThat(profile.at("/metrics/in_flight_peak").asInt()).isEqualTo(2);
            assertThat(o.out()).contains("c=2");
        }
    }

    static String[] concat(String[] a, String... b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
