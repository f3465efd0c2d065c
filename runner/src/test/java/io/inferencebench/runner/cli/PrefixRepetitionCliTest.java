package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --dataset-name prefix_repetition} against model-sim with its prefix cache: the hits
 * the server counts are exactly those the workload implies, on a cold cache, a cache holding every
 * prompt and a warm one ({@code --warm-prefix-cache}), and the flags name themselves when refused.
 */
class PrefixRepetitionCliTest {

    private static final int BLOCK = 16;

    @Test
    void eightGroupsOfFiftyPromptsHitTheServersCacheExactlyAsImplied(@TempDir Path dir)
            throws Exception {
        int prefix = 100;
        int suffix = 20;
        int groups = 8;
        int prompts = 400;
        try (SimServer sim = new SimServer(dir.resolve("sim.log"), "--enable-prefix-caching")) {
            Path results = dir.resolve("results");
            String[] run =
                    argv(
                            "run --base-url %s --backend openai --model sim --ignore-eos"
                                    + " --dataset-name prefix_repetition"
                                    + " --prefix-repetition-prefix-len %s"
                                    + " --prefix-repetition-suffix-len %s"
                                    + " --prefix-repetition-num-prefixes %s"
                                    + " --prefix-repetition-output-len 4"
                                    + " --num-prompts %s --request-rate inf"
                                    + " --max-concurrency 8 --seed 5 --progress none"
                                    + " --cooldown 0 --result-dir %s",
                            sim.baseUrl,
                            Integer.toString(prefix),
                            Integer.toString(suffix),
                            Integer.toString(groups),
                            Integer.toString(prompts),
                            results.toString());
            SimServer.Outcome o = SimServer.cli(run);
            assertThat(o.code()).as(o.err()).isZero();
            // Every prompt is queried whole; all but the first of each group hit the prefix's
            // full blocks (6 of 16 tokens: 96 of the 100), whatever the concurrency, since the
            // server caches a prompt's blocks when it admits it.
            double queries = sim.counter("vllm:prefix_cache_queries_total");
            double hits = sim.counter("vllm:prefix_cache_hits_total");
            assertThat(queries).isEqualTo((double) prompts * (prefix + suffix));
            assertThat(hits).isEqualTo((double) (prompts - groups) * (prefix / BLOCK) * BLOCK);

            // The same seed sends the same 400 prompts again, now all cached: each hits every
            // full block but the one holding its last token (119 / 16 = 7 blocks, 112 tokens).
            Path again = dir.resolve("again");
            run[run.length - 1] = again.toString();
            o = SimServer.cli(run);
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(sim.counter("vllm:prefix_cache_queries_total") - queries)
                    .isEqualTo((double) prompts * (prefix + suffix));
            assertThat(sim.counter("vllm:prefix_cache_hits_total") - hits)
                    .isEqualTo((double) prompts * ((prefix + suffix - 1) / BLOCK) * BLOCK);

            // With --warm-prefix-cache the cache is emptied, then each of the 8 prefixes sent alone
            // (100 tokens, none cached after the reset): every one of the 400 prompts then hits
            // its prefix's 6 full blocks, the first of each group included.
            double queriesBefore = sim.counter("vllm:prefix_cache_queries_total");
            double hitsBefore = sim.counter("vllm:prefix_cache_hits_total");
            run[run.length - 1] = dir.resolve("warm").toString();
            String[] warm = java.util.Arrays.copyOf(run, run.length + 1);
            warm[run.length] = "--warm-prefix-cache";
            o = SimServer.cli(warm);
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(sim.counter("modelsim_prefix_cache_resets_total")).isEqualTo(1.0);
            assertThat(sim.counter("vllm:prefix_cache_queries_total") - queriesBefore)
                    .isEqualTo((double) groups * prefix + prompts * (prefix + suffix));
            assertThat(sim.counter("vllm:prefix_cache_hits_total") - hitsBefore)
                    .isEqualTo((double) prompts * (prefix / BLOCK) * BLOCK);

            List<Path> files;
            try (Stream<Path> s = Files.list(results)) {
                files = s.filter(p -> p.toString().endsWith(".json")).toList();
            }
            assertThat(files).hasSize(1);
            JsonNode profile = new ObjectMapper().readTree(files.get(0).toFile());
            assertThat(profile.at("/dimensions/dataset").asText()).isEqualTo("prefix_repetition");
            assertThat(profile.at("/dimensions/prefix_repetition").asText())
                    .isEqualTo("prefixes=8 prefix_len=100 suffix_len=20");
            assertThat(profile.at("/metrics/completed").asInt()).isEqualTo(prompts);
            assertThat(profile.at("/metrics/avg_input_len").asDouble())
                    .isEqualTo((double) prefix + suffix);
        }
    }

    private static String refused(String flags) {
        SimServer.Outcome o =
                SimServer.cli(argv("run --base-url http://127.0.0.1:9 --num-prompts 1 " + flags));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        return o.err();
    }

    @Test
    void refusalsNameTheFlag() {
        assertThat(refused("--prefix-repetition-prefix-len 64"))
                .contains(
                        "--prefix-repetition-prefix-len: applies only to --dataset-name"
                                + " prefix_repetition");
        assertThat(refused("--dataset-name prefix_repetition --random-input-len 64"))
                .contains("--random-input-len: applies to --dataset-name random");
        assertThat(refused("--dataset-name prefix_repetition --prefix-repetition-num-prefixes 0"))
                .contains("--prefix-repetition-num-prefixes: must be >= 1, got 0");
        assertThat(refused("--dataset-name prefix_repetition --output-len 8"))
                .contains("--output-len: applies to --dataset-name sharegpt or jsonl;")
                .contains("the --prefix-repetition-* flags");
        assertThat(refused("--dataset-name prefix_repetition --dataset-path /etc/hostname"))
                .contains("--dataset-path: needs --dataset-name sharegpt or jsonl");
        assertThat(refused("--dataset-name prefixes"))
                .contains(
                        "'prefixes' is not one of random, prefix_repetition, multi-turn, sharegpt, jsonl");
    }
}
