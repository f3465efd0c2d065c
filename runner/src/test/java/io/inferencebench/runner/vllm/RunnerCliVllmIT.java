package io.inferencebench.runner.vllm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.server.CatalogEntry;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.runner.cli.Main;
import io.inferencebench.testkit.VllmCpu;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner CLI against a real vLLM (0.16.0 on the CPU, the project's tiny model; {@code make
 * test-vllm}). Every check compares the client with what the server itself counted over the same
 * stage window ({@code --scrape-metrics}: counters' increases and histogram deltas between the
 * stage's first and last scrape).
 *
 * <p>Latency bound: the server's histograms time a request from its arrival in the engine to its
 * first token / last token, so the client's means are larger by the HTTP, JSON and SSE work of the
 * API server and the client; on these 2-core machines (shared with the load generator) that is
 * between 0 and {@value #MAX_CLIENT_OVERHEAD_MS} ms. A client mean below the server's (beyond the 1
 * ms the histogram sums are rounded to) would be a clock-point error.
 */
@ExtendWith(VllmCpu.class)
class RunnerCliVllmIT {

    static final double MAX_CLIENT_OVERHEAD_MS = 75;
    private static final ObjectMapper JSON = new ObjectMapper();

    record Outcome(int code, String out, String err, JsonNode profile) {}

    static Outcome run(Path results, String... args) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
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

    static List<String> common(VllmCpu.Server vllm, int prompts, int in, int outLen) {
        return new ArrayList<>(
                List.of(
                        "run",
                        "--base-url",
                        vllm.baseUrl(),
                        "--backend",
                        "vllm",
                        "--dataset-name",
                        "random",
                        "--random-input-len",
                        "" + in,
                        "--random-output-len",
                        "" + outLen,
                        "--request-rate",
                        "4",
                        "--num-prompts",
                        "" + prompts,
                        "--seed",
                        "7",
                        "--scrape-metrics",
                        "--scrape-interval",
                        "1s"));
    }

    private static double num(JsonNode metrics, String name, String field) {
        JsonNode n = metrics.path("server_metrics").path(name).path(field);
        assertThat(n.isMissingNode()).as(name + " " + field + " in server_metrics").isFalse();
        return Double.parseDouble(n.asText());
    }

    /** Client minus server, both in ms: at least 0 (1 ms rounding), at most the stated bound. */
    private static void assertClientAfterServer(String what, double clientMs, double serverMs) {
        assertThat(clientMs - serverMs)
                .as("%s: client %.2f ms, server %.2f ms", what, clientMs, serverMs)
                .isBetween(-1.0, MAX_CLIENT_OVERHEAD_MS);
    }

    private static void assertAgreesWithServer(
            String label, JsonNode metrics, int requests, int outLen) {
        System.out.printf(
                java.util.Locale.ROOT,
                "[vllm-it] %s: %d requests; output tokens client %d, server +%.0f; prompt tokens"
                        + " client %d, server +%.0f; request_success +%.0f; TTFT mean client %.2f"
                        + " server %.2f ms; E2E mean client %.2f server %.2f ms; TPOT mean client"
                        + " %.2f server %.2f ms; ITL gaps client %d events, server %.0f tokens%n",
                label,
                metrics.path("completed").asInt(),
                metrics.path("total_output_token").asLong(),
                num(metrics, "vllm:generation_tokens_total", "Increase"),
                metrics.path("total_input_tokens").asLong(),
                num(metrics, "vllm:prompt_tokens_total", "Increase"),
                num(metrics, "vllm:request_success_total", "Increase"),
                metrics.path("avg_ttft_ms").asDouble(),
                1000 * num(metrics, "vllm:time_to_first_token_seconds", "Mean"),
                metrics.path("avg_e2el_ms").asDouble(),
                1000 * num(metrics, "vllm:e2e_request_latency_seconds", "Mean"),
                metrics.path("avg_tpot_ms").asDouble(),
                1000 * num(metrics, "vllm:request_time_per_output_token_seconds", "Mean"),
                metrics.path("count_itl_ms").asLong(),
                num(metrics, "vllm:inter_token_latency_seconds", "Count"));
        assertThat(metrics.path("completed").asInt()).isEqualTo(requests);
        assertThat(metrics.path("failures").asInt()).isZero();
        // Output: the requested length (ignore_eos), as counted by usage, and by the server.
        assertThat(metrics.path("output_token_source").asText()).isEqualTo("usage");
        assertThat(metrics.path("total_output_token").asLong()).isEqualTo((long) requests * outLen);
        assertThat(metrics.path("min_output_len").asInt()).isEqualTo(outLen);
        assertThat(metrics.path("max_output_len").asInt()).isEqualTo(outLen);
        assertThat(num(metrics, "vllm:request_success_total", "Increase")).isEqualTo(requests);
        assertThat(num(metrics, "vllm:generation_tokens_total", "Increase"))
                .isEqualTo(metrics.path("total_output_token").asDouble());
        assertThat(num(metrics, "vllm:prompt_tokens_total", "Increase"))
                .isEqualTo(metrics.path("total_input_tokens").asDouble());
        assertThat(num(metrics, "vllm:time_to_first_token_seconds", "Count")).isEqualTo(requests);
        assertThat(num(metrics, "vllm:e2e_request_latency_seconds", "Count")).isEqualTo(requests);
        // One inter-token gap per token after the first: the server counts tokens, the client
        // content events (one event can carry several tokens), never more events than tokens.
        assertThat(num(metrics, "vllm:inter_token_latency_seconds", "Count"))
                .isEqualTo((double) requests * (outLen - 1));
        assertThat(metrics.path("count_itl_ms").asDouble())
                .isLessThanOrEqualTo((double) requests * (outLen - 1));
        assertClientAfterServer(
                "TTFT mean",
                metrics.path("avg_ttft_ms").asDouble(),
                1000 * num(metrics, "vllm:time_to_first_token_seconds", "Mean"));
        assertClientAfterServer(
                "E2E latency mean",
                metrics.path("avg_e2el_ms").asDouble(),
                1000 * num(metrics, "vllm:e2e_request_latency_seconds", "Mean"));
        // TPOT is a difference of two instants each side takes: the overheads mostly cancel.
        double serverTpot =
                1000 * num(metrics, "vllm:request_time_per_output_token_seconds", "Mean");
        assertThat(metrics.path("avg_tpot_ms").asDouble())
                .as("TPOT mean, server %.2f ms", serverTpot)
                .isCloseTo(serverTpot, within(2.0 + 0.25 * serverTpot));
        // The client's summed gaps per request cover the same span as the server's per-token
        // gaps, so mean gap x count agrees within the same tolerance.
        double clientGapSum =
                metrics.path("avg_itl_ms").asDouble() * metrics.path("count_itl_ms").asDouble();
        double serverGapSum =
                1000
                        * num(metrics, "vllm:inter_token_latency_seconds", "Mean")
                        * num(metrics, "vllm:inter_token_latency_seconds", "Count");
        assertThat(clientGapSum)
                .as("sum of inter-token gaps, server %.1f ms", serverGapSum)
                .isCloseTo(serverGapSum, within(requests * 2.0 + 0.25 * serverGapSum));
        JsonNode coverage = metrics.path("server_metrics_coverage");
        assertThat(coverage.path("ratio").asDouble()).isEqualTo(1.0);
    }

    @Test
    void streamingCompletionsAgreeWithTheServersCountersAndHistograms(@TempDir Path dir)
            throws Exception {
        VllmCpu.Server vllm = VllmCpu.server();
        List<String> args = common(vllm, 24, 128, 32);
        Outcome o = run(dir.resolve("r"), args.toArray(String[]::new));
        assertThat(o.code()).as(o.err()).isZero();
        assertThat(o.err()).contains("built with the server's tokenizer");
        JsonNode metrics = o.profile().path("metrics");
        assertThat(o.profile().at("/dimensions/prompt_format").asText()).isEqualTo("token_ids");
        // Token-id prompts are exact: the server counted 128 for each.
        assertThat(metrics.path("input_token_source").asText()).isEqualTo("usage");
        assertThat(metrics.path("total_input_tokens").asLong()).isEqualTo(24L * 128);
        assertAgreesWithServer("completions 128/32 x24", metrics, 24, 32);
    }

    @Test
    void streamingChatAgreesWithTheServersCountersAndHistograms(@TempDir Path dir)
            throws Exception {
        VllmCpu.Server vllm = VllmCpu.server();
        List<String> args = common(vllm, 16, 64, 48);
        args.addAll(List.of("--api", "chat"));
        Outcome o = run(dir.resolve("r"), args.toArray(String[]::new));
        assertThat(o.code()).as(o.err()).isZero();
        JsonNode metrics = o.profile().path("metrics");
        assertThat(o.profile().at("/dimensions/prompt_format").asText()).isEqualTo("text");
        // The text has exactly 64 tokens by the server's count; the chat template adds its own
        // (the server's count of an empty message), give or take a merge at each seam.
        int template =
                tokenCount(
                        vllm,
                        "{\"messages\":[{\"role\":\"user\",\"content\":\"\"}],\"add_generation_prompt\":true}");
        assertThat(template).isPositive();
        assertThat(metrics.path("min_input_len").asInt()).isGreaterThanOrEqualTo(64 + template - 3);
        assertThat(metrics.path("max_input_len").asInt()).isLessThanOrEqualTo(64 + template + 3);
        assertAgreesWithServer("chat 64/48 x16", metrics, 16, 48);
    }

    static int tokenCount(VllmCpu.Server vllm, String body) throws Exception {
        String answer =
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .build()
                        .send(
                                HttpRequest.newBuilder(URI.create(vllm.baseUrl() + "/tokenize"))
                                        .header("Content-Type", "application/json")
                                        .POST(HttpRequest.BodyPublishers.ofString(body))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
        return JSON.readTree(answer).path("count").asInt(-1);
    }

    /**
     * vLLM 0.16's own page: every catalog metric it exports is summarised (under the current name,
     * the {@code engine} label aggregated, {@code _created} twins dropped), and the catalog names
     * it lacks are exactly the ones of older engines.
     */
    @Test
    void scrapedPageCoversTheVllmCatalog(@TempDir Path dir) throws Exception {
        VllmCpu.Server vllm = VllmCpu.server();
        String page =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(vllm.baseUrl() + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
        Set<String> onPage = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^# TYPE (vllm:\\S+) (\\S+)$").matcher(page);
        while (m.find()) {
            onPage.add(m.group(1));
        }
        // The premises: engine labels and _created twins are on the page.
        assertThat(page).contains("engine=\"0\"");
        assertThat(onPage).contains("vllm:request_success_created");

        Outcome o = run(dir.resolve("r"), common(vllm, 8, 32, 8).toArray(String[]::new));
        assertThat(o.code()).as(o.err()).isZero();
        JsonNode server = o.profile().path("metrics").path("server_metrics");
        Set<String> summarised = new TreeSet<>();
        server.fieldNames().forEachRemaining(summarised::add);
        assertThat(summarised).noneMatch(n -> n.endsWith("_created"));

        Set<String> absent = new TreeSet<>();
        for (CatalogEntry e : ServerMetricCatalog.forBackend("vllm").entries()) {
            boolean exported =
                    e.allNames().stream()
                            .anyMatch(
                                    n ->
                                            onPage.contains(n)
                                                    || onPage.contains(
                                                            n.replaceFirst("_total$", "")));
            if (!exported) {
                absent.add(e.name());
            } else if (!e.info()) {
                assertThat(summarised)
                        .as(e.name() + " is on the page")
                        .anyMatch(n -> n.equals(e.name()) || n.startsWith(e.name() + "{"));
            }
        }
        // V0-engine gauges and the LoRA info metric (only with LoRA adapters); a new vLLM that
        // brings one back, or drops another, fails here and the catalog is to be revisited.
        assertThat(absent)
                .containsExactlyInAnyOrder(
                        "vllm:num_requests_waiting_by_reason",
                        "vllm:num_requests_swapped",
                        "vllm:cpu_cache_usage_perc",
                        "vllm:avg_prompt_throughput_toks_per_s",
                        "vllm:avg_generation_throughput_toks_per_s",
                        "vllm:lora_requests_info");
    }

    @Test
    void blindTokenIdsStopAtTheWarmUpNamingTheTokenizerSettings(@TempDir Path dir)
            throws Exception {
        VllmCpu.Server vllm = VllmCpu.server();
        // As the generic OpenAI backend the runner does not ask /tokenize, and token ids drawn
        // blind (below 30,000) meet a vocabulary of 1,000.
        Outcome o =
                run(
                        dir.resolve("r"),
                        "run",
                        "--base-url",
                        vllm.baseUrl(),
                        "--backend",
                        "openai",
                        "--model",
                        vllm.modelName(),
                        "--dataset-name",
                        "random",
                        "--random-input-len",
                        "32",
                        "--random-output-len",
                        "8",
                        "--num-prompts",
                        "8",
                        "--request-rate",
                        "4",
                        "--prompt-format",
                        "token-ids");
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err())
                .contains("is out of vocabulary")
                .contains("--tokenizer")
                .contains("spec.workload.tokenizer");
        assertThat(o.profile()).isNull();
    }

    /**
     * Token ids drawn from the model's own tokenizer.json stay inside its 1,000 ids (its three
     * special tokens are listed both in the vocabulary and as added tokens: counted twice, ids up
     * to 1,002 were drawn, and vLLM refused them).
     */
    @Test
    void tokenIdsFromTheModelsTokenizerJsonAreAllInItsVocabulary(@TempDir Path dir)
            throws Exception {
        VllmCpu.Server vllm = VllmCpu.server();
        List<String> args = common(vllm, 16, 128, 4);
        args.addAll(
                List.of(
                        "--tokenizer",
                        vllm.tokenizerJson().toString(),
                        "--prompt-format",
                        "token-ids"));
        Outcome o = run(dir.resolve("r"), args.toArray(String[]::new));
        assertThat(o.code()).as(o.err()).isZero();
        JsonNode metrics = o.profile().path("metrics");
        assertThat(o.profile().at("/dimensions/prompt_format").asText()).isEqualTo("token_ids");
        assertThat(num(metrics, "vllm:prompt_tokens_total", "Increase")).isEqualTo(16 * 128);
        assertAgreesWithServer("token ids from tokenizer.json 128/4 x16", metrics, 16, 4);
    }

    /**
     * With the model's tokenizer.json the prompts are text of (nearly) the requested length: a
     * byte-level vocabulary decodes some random ids to U+FFFD, which re-encodes as three tokens, so
     * a few prompts keep a length of 1-3 tokens more after the trimming rounds - the runner then
     * reports the measured length, and the server agrees with it.
     */
    @Test
    void theModelsTokenizerJsonGivesTextPromptsTheServerCountsAlike(@TempDir Path dir)
            throws Exception {
        VllmCpu.Server vllm = VllmCpu.server();
        List<String> args = common(vllm, 8, 96, 8);
        args.addAll(List.of("--tokenizer", vllm.tokenizerJson().toString()));
        Outcome o = run(dir.resolve("r"), args.toArray(String[]::new));
        assertThat(o.code()).as(o.err()).isZero();
        JsonNode metrics = o.profile().path("metrics");
        assertThat(metrics.path("median_input_len").asDouble()).isEqualTo(96);
        assertThat(metrics.path("min_input_len").asInt()).isEqualTo(96);
        assertThat(metrics.path("max_input_len").asInt()).isLessThanOrEqualTo(96 + 3);
        assertAgreesWithServer("text from tokenizer.json 96/8 x8", metrics, 8, 8);
    }
}
