package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The openai backend against a server that refuses every field outside OpenAI's API (model-sim
 * --strict-openai answers as transformers serve does: HTTP 422 with a pydantic body): no request is
 * refused; an extension asked for explicitly is refused, and the message names the flag that drops
 * it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StrictOpenAiServerTest {

    private static final String[] LOAD = {
        "--request-rate", "inf", "--num-prompts", "6", "--no-self-warmup"
    };

    private static String[] args(String[] base, String... more) {
        List<String> all = new ArrayList<>(List.of(base));
        all.addAll(List.of(LOAD));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    private static JsonNode onlyProfile(Path dir) throws Exception {
        List<JsonNode> profiles = TrueNumbersTest.profiles(dir);
        assertThat(profiles).hasSize(1);
        return profiles.get(0).get("metrics");
    }

    @Test
    void completionsAndChatStreamWithoutARefusal(@TempDir Path tmp) throws Exception {
        try (SimServer sim = new SimServer(tmp.resolve("sim.log"), "--strict-openai")) {
            for (String api : List.of("completions", "chat")) {
                Path results = tmp.resolve(api);
                SimServer.Outcome o =
                        SimServer.cli(args(sim.runOpenAiFieldsOnly(results), "--api", api));
                assertThat(o.code()).as(api + ": " + o.err()).isZero();
                assertThat(o.err()).doesNotContain("http_4xx");
                JsonNode m = onlyProfile(results);
                assertThat(m.get("completed").asInt()).as(api).isEqualTo(6);
                assertThat(m.path("failed").asInt()).as(api).isZero();
                // streamed, with the server's usage (stream_options.include_usage is OpenAI's)
                assertThat(m.get("output_token_source").asText()).isEqualTo("usage");
                assertThat(m.path("non_streamed_requests").asInt()).isZero();
                assertThat(m.path("count_ttft_ms").asInt()).as("TTFT measured").isEqualTo(6);
            }
        }
    }

    @Test
    void anExtensionAskedForIsRefusedAndTheMessageNamesTheFlag(@TempDir Path tmp) throws Exception {
        try (SimServer sim = new SimServer(tmp.resolve("sim.log"), "--strict-openai")) {
            SimServer.Outcome ignoreEos =
                    SimServer.cli(
                            args(sim.runOpenAiFieldsOnly(tmp.resolve("eos")), "--ignore-eos"));
            assertThat(ignoreEos.code()).as(ignoreEos.err()).isEqualTo(1);
            assertThat(ignoreEos.err())
                    .contains("http_4xx x6, first: HTTP 422")
                    .contains(
                            "the server refuses a field outside OpenAI's API: ignore_eos (drop it"
                                    + " with --ignore-eos false (workload.ignoreEos: false))");

            SimServer.Outcome topK =
                    SimServer.cli(
                            args(
                                    sim.runOpenAiFieldsOnly(tmp.resolve("topk")),
                                    "--api",
                                    "chat",
                                    "--top-k",
                                    "5"));
            assertThat(topK.code()).as(topK.err()).isEqualTo(1);
            assertThat(topK.err())
                    .contains("top_k (drop it by leaving out --top-k (workload.sampling.topK))")
                    .doesNotContain("ignore_eos (");

            // The spec's field, set explicitly in --config, is an explicit request too.
            Path config = tmp.resolve("bench.yaml");
            Files.writeString(config, "workload:\n  ignoreEos: true\n");
            SimServer.Outcome fromConfig =
                    SimServer.cli(
                            args(
                                    sim.runOpenAiFieldsOnly(tmp.resolve("cfg")),
                                    "--config",
                                    config.toString()));
            assertThat(fromConfig.code()).as(fromConfig.err()).isEqualTo(1);
            assertThat(fromConfig.err()).contains("workload.ignoreEos: false");

            // vllm's requests carry ignore_eos by default: a strict server says which flag.
            String[] vllmArgs = args(sim.runOpenAiFieldsOnly(tmp.resolve("vllm")));
            vllmArgs[List.of(vllmArgs).indexOf("--backend") + 1] = "vllm";
            SimServer.Outcome vllm = SimServer.cli(vllmArgs);
            assertThat(vllm.code()).as(vllm.err()).isEqualTo(1);
            assertThat(vllm.err()).contains("ignore_eos (drop it with --ignore-eos false");
        }
    }
}
