package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --reset-prefix-cache} against model-sim with its prefix cache: every stage of a sweep
 * starts cold (the server counts one reset per stage per replica, and each stage hits what a cold
 * cache implies), and a server that refuses leaves the stages' cache state undeclared, said in the
 * profiles and on the terminal, the run going on.
 */
class PrefixCacheResetCliTest {

    private static final int BLOCK = 16;
    private static final int PREFIX = 100;
    private static final int SUFFIX = 20;
    private static final int GROUPS = 4;
    private static final int PROMPTS = 40;

    /** Hits a cold cache gives one stage: all but the first prompt of a group hit its prefix. */
    private static final double COLD_HITS = (double) (PROMPTS - GROUPS) * (PREFIX / BLOCK) * BLOCK;

    /** Hits a warm cache gives a stage that sends the same prompts again. */
    private static final double WARM_HITS =
            (double) PROMPTS * ((PREFIX + SUFFIX - 1) / BLOCK) * BLOCK;

    /** Two stages of the same prompts (each stage sends the prompts from the first). */
    private static String[] sweep(String baseUrl, Path results, String... extra) {
        String[] run =
                argv(
                        "run --base-url %s --backend openai --model sim --ignore-eos"
                                + " --dataset-name prefix_repetition"
                                + " --prefix-repetition-prefix-len %s --prefix-repetition-suffix-len %s"
                                + " --prefix-repetition-num-prefixes %s --prefix-repetition-output-len 2"
                                + " --num-prompts %s --request-rate inf,inf --max-concurrency 4 --seed 3"
                                + " --progress none --cooldown 0 --result-dir %s",
                        baseUrl,
                        Integer.toString(PREFIX),
                        Integer.toString(SUFFIX),
                        Integer.toString(GROUPS),
                        Integer.toString(PROMPTS),
                        results.toString());
        return with(run, extra);
    }

    /**
     * Two stages of the same 64-token random prompts against {@code loaded}, scraping it, with the
     * prefix cache of {@code reset} reset before each.
     */
    private static SimServer.Outcome randomSweep(SimServer loaded, SimServer reset, Path results) {
        return SimServer.cli(
                argv(
                        "run --base-url %s --backend openai --model sim --ignore-eos"
                                + " --dataset-name random --random-input-len 64"
                                + " --random-output-len 2 --num-prompts 20 --request-rate inf,inf"
                                + " --max-concurrency 4 --seed 3 --progress none --cooldown 0"
                                + " --scrape-metrics %s/metrics --reset-prefix-cache %s"
                                + " --result-dir %s",
                        loaded.baseUrl, loaded.baseUrl, reset.baseUrl, results.toString()));
    }

    /** {@code argv} and then {@code extra}. */
    private static String[] with(String[] argv, String... extra) {
        return Stream.concat(Arrays.stream(argv), Arrays.stream(extra)).toArray(String[]::new);
    }

    private static List<JsonNode> profiles(Path results) throws Exception {
        List<JsonNode> profiles = new ArrayList<>();
        try (Stream<Path> s = Files.list(results)) {
            for (Path p : s.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                profiles.add(new ObjectMapper().readTree(p.toFile()));
            }
        }
        return profiles;
    }

    @Test
    void everyStageOfASweepStartsColdOnEveryReplica(@TempDir Path dir) throws Exception {
        try (SimServer a = new SimServer(dir.resolve("a.log"), "--enable-prefix-caching");
                SimServer b = new SimServer(dir.resolve("b.log"), "--enable-prefix-caching")) {
            // Without the flag the second stage finds the first stage's prompts cached.
            SimServer.Outcome o = SimServer.cli(sweep(a.baseUrl, dir.resolve("warm")));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(a.counter("vllm:prefix_cache_hits_total")).isEqualTo(COLD_HITS + WARM_HITS);
            assertThat(profiles(dir.resolve("warm")))
                    .allSatisfy(
                            p ->
                                    assertThat(p.at("/dimensions/prefix_cache").isMissingNode())
                                            .isTrue());

            // With it, each stage starts cold: the load goes to a, both replicas are reset.
            double before = a.counter("vllm:prefix_cache_hits_total");
            o =
                    SimServer.cli(
                            sweep(
                                    a.baseUrl,
                                    dir.resolve("cold"),
                                    "--reset-prefix-cache",
                                    a.baseUrl + "," + b.baseUrl,
                                    "--scrape-metrics",
                                    a.baseUrl + "/metrics," + b.baseUrl + "/metrics"));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.err())
                    .contains(
                            "prefix cache: reset before every stage at "
                                    + a.baseUrl
                                    + ", "
                                    + b.baseUrl)
                    .doesNotContain("warning");
            assertThat(a.counter("modelsim_prefix_cache_resets_total")).isEqualTo(2.0);
            assertThat(b.counter("modelsim_prefix_cache_resets_total")).isEqualTo(2.0);
            assertThat(a.counter("vllm:prefix_cache_hits_total") - before).isEqualTo(2 * COLD_HITS);
            List<JsonNode> cold = profiles(dir.resolve("cold"));
            assertThat(cold).hasSize(2);
            assertThat(cold)
                    .allSatisfy(
                            p -> {
                                assertThat(p.at("/dimensions/prefix_cache").asText())
                                        .isEqualTo("cold");
                                // The reuse the server measured in the stage's window, per
                                // replica too: b got no load and shows no counters, so it has
                                // no entry (nothing is made up for it).
                                JsonNode cache = p.at("/metrics/prefix_cache");
                                assertThat(cache.path("hits").asDouble()).isEqualTo(COLD_HITS);
                                assertThat(cache.path("queries").asInt())
                                        .isEqualTo(PROMPTS * (PREFIX + SUFFIX));
                                assertThat(cache.path("hit_rate").asDouble())
                                        .isEqualTo(COLD_HITS / (PROMPTS * (PREFIX + SUFFIX)));
                                String replicaA = a.baseUrl.substring("http://".length());
                                assertThat(cache.path("by_replica").fieldNames())
                                        .toIterable()
                                        .containsExactly(replicaA);
                                assertThat(
                                                cache.path("by_replica")
                                                        .path(replicaA)
                                                        .path("hits")
                                                        .asDouble())
                                        .isEqualTo(COLD_HITS);
                            });
        }
    }

    /**
     * The reset sent to the wrong replica: every server asked acknowledged it, but the one under
     * load still holds the first stage's random prompts, which a cold cache could not hit; its own
     * counters say so and the run warns, naming it. Resetting the right one, no warning.
     */
    @Test
    void aReplicaWhoseCountersContradictTheResetIsNamed(@TempDir Path dir) throws Exception {
        try (SimServer a = new SimServer(dir.resolve("a.log"), "--enable-prefix-caching");
                SimServer b = new SimServer(dir.resolve("b.log"), "--enable-prefix-caching")) {
            SimServer.Outcome wrong = randomSweep(a, b, dir.resolve("wrong"));
            assertThat(wrong.code()).as(wrong.err()).isZero();
            String replicaA = a.baseUrl.substring("http://".length());
            assertThat(wrong.err())
                    .doesNotContain("warning: stage 1:")
                    .contains(
                            "warning: stage 2: the prefix cache was reset but was not cold:"
                                    + " replica "
                                    + replicaA
                                    + " found 75.0 % of its prompt tokens cached (960 of 1280),"
                                    + " more than 5 %");

            SimServer.Outcome right = randomSweep(a, a, dir.resolve("right"));
            assertThat(right.code()).as(right.err()).isZero();
            assertThat(right.err()).doesNotContain("warning");
        }
    }

    @Test
    void aServerThatRefusesLeavesTheStateUndeclaredAndTheRunGoesOn(@TempDir Path dir)
            throws Exception {
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        "--enable-prefix-caching",
                        "--refuse-cache-reset")) {
            SimServer.Outcome o =
                    SimServer.cli(
                            sweep(
                                    sim.baseUrl,
                                    dir.resolve("results"),
                                    "--reset-prefix-cache",
                                    "--header",
                                    "Authorization=Bearer s3cret"));
            assertThat(o.code()).as(o.err()).isZero();
            // Both paths asked before each stage; what failed is said, the key never.
            assertThat(sim.counter("modelsim_prefix_cache_resets_refused_total")).isEqualTo(4.0);
            assertThat(o.err())
                    .contains(
                            "warning: stage 1: prefix cache not reset ("
                                    + sim.baseUrl
                                    + ": POST /reset_prefix_cache answered HTTP 404, POST"
                                    + " /flush_cache answered HTTP 404 (vLLM serves"
                                    + " /reset_prefix_cache only when started with"
                                    + " VLLM_SERVER_DEV_MODE=1)); the stage's cache state is"
                                    + " undeclared")
                    .contains("warning: stage 2: prefix cache not reset")
                    .doesNotContain("s3cret");
            List<JsonNode> profiles = profiles(dir.resolve("results"));
            assertThat(profiles).hasSize(2);
            assertThat(profiles)
                    .allSatisfy(
                            p -> {
                                assertThat(p.at("/dimensions/prefix_cache").asText())
                                        .isEqualTo("undeclared");
                                assertThat(p.at("/metrics/completed").asInt()).isEqualTo(PROMPTS);
                            });
        }
    }

    @Test
    void aConfigDeclaringAColdCacheResetsTheBaseUrlAsABenchmarkRunWould(@TempDir Path dir)
            throws Exception {
        try (SimServer sim = new SimServer(dir.resolve("sim.log"), "--enable-prefix-caching")) {
            Path config = dir.resolve("run.yaml");
            Files.writeString(config, "workload:\n  prefixCache: {state: cold}\n");
            SimServer.Outcome o =
                    SimServer.cli(
                            sweep(
                                    sim.baseUrl,
                                    dir.resolve("results"),
                                    "--config",
                                    config.toString()));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(sim.counter("modelsim_prefix_cache_resets_total")).isEqualTo(2.0);
            assertThat(sim.counter("vllm:prefix_cache_hits_total")).isEqualTo(2 * COLD_HITS);
            assertThat(profiles(dir.resolve("results")))
                    .allSatisfy(
                            p ->
                                    assertThat(p.at("/dimensions/prefix_cache").asText())
                                            .isEqualTo("cold"));
        }
    }

    /** Hits a warm stage gives: every prompt finds its prefix's full blocks (96 of 100 tokens). */
    private static final double WARMED_PREFIX_HITS = (double) PROMPTS * (PREFIX / BLOCK) * BLOCK;

    /**
     * {@code --warm-prefix-cache}: after each reset every prefix is sent alone to both replicas,
     * outside the stage's window, so each stage's every prompt finds its prefix cached: the hits
     * the server counts in the window are exactly those a warm cache implies, the profile says warm
     * and holds the implied rate beside the measured one.
     */
    @Test
    void everyStageOfASweepStartsWarmOnEveryReplica(@TempDir Path dir) throws Exception {
        try (SimServer a = new SimServer(dir.resolve("a.log"), "--enable-prefix-caching");
                SimServer b = new SimServer(dir.resolve("b.log"), "--enable-prefix-caching")) {
            SimServer.Outcome o =
                    SimServer.cli(
                            sweep(
                                    a.baseUrl,
                                    dir.resolve("warm"),
                                    "--reset-prefix-cache",
                                    a.baseUrl + "," + b.baseUrl,
                                    "--warm-prefix-cache",
                                    "--scrape-metrics",
                                    a.baseUrl + "/metrics," + b.baseUrl + "/metrics"));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.err())
                    .contains(
                            "prefix cache: reset and warmed before every stage at "
                                    + a.baseUrl
                                    + ", "
                                    + b.baseUrl)
                    .doesNotContain("warning");
            for (SimServer replica : List.of(a, b)) {
                assertThat(replica.counter("modelsim_prefix_cache_resets_total")).isEqualTo(2.0);
            }
            // Each replica was sent the 4 prefixes before each stage (none cached after the
            // reset); only a got the load, every prompt of it hitting its prefix.
            double warming = 2.0 * GROUPS * PREFIX;
            assertThat(b.counter("vllm:prefix_cache_queries_total")).isEqualTo(warming);
            assertThat(b.counter("vllm:prefix_cache_hits_total")).isZero();
            assertThat(a.counter("vllm:prefix_cache_queries_total"))
                    .isEqualTo(warming + 2.0 * PROMPTS * (PREFIX + SUFFIX));
            assertThat(a.counter("vllm:prefix_cache_hits_total"))
                    .isEqualTo(2 * WARMED_PREFIX_HITS)
                    .isGreaterThan(2 * COLD_HITS);
            List<JsonNode> warm = profiles(dir.resolve("warm"));
            assertThat(warm).hasSize(2);
            String replicaA = a.baseUrl.substring("http://".length());
            assertThat(warm)
                    .allSatisfy(
                            p -> {
                                assertThat(p.at("/dimensions/prefix_cache").asText())
                                        .isEqualTo("warm");
                                // The window holds the stage's requests only, not the warming.
                                JsonNode cache = p.at("/metrics/prefix_cache");
                                assertThat(cache.path("hits").asDouble())
                                        .isEqualTo(WARMED_PREFIX_HITS);
                                assertThat(cache.path("queries").asInt())
                                        .isEqualTo(PROMPTS * (PREFIX + SUFFIX));
                                assertThat(
                                                cache.at("/by_replica/" + replicaA + "/hit_rate")
                                                        .asDouble())
                                        .isEqualTo(
                                                WARMED_PREFIX_HITS / (PROMPTS * (PREFIX + SUFFIX)));
                                assertThat(cache.path("implied_hit_rate").asDouble())
                                        .isEqualTo((double) PREFIX / (PREFIX + SUFFIX));
                                assertThat(cache.path("verified").asBoolean()).isTrue();
                                assertThat(p.at("/metrics/completed").asInt()).isEqualTo(PROMPTS);
                            });
        }
    }

    /**
     * A replica that caches none of the prefixes contradicts a warm state (here its blocks of 128
     * tokens, vLLM's on CPU, are longer than the 120-token prompts): its counters say so, the run
     * warns naming it, and the profile says the state was not verified.
     */
    @Test
    void aReplicaThatCachesNothingContradictsTheWarmState(@TempDir Path dir) throws Exception {
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"), "--enable-prefix-caching", "--block-size", "128")) {
            SimServer.Outcome o =
                    SimServer.cli(
                            sweep(
                                    sim.baseUrl,
                                    dir.resolve("results"),
                                    "--warm-prefix-cache",
                                    "--scrape-metrics",
                                    sim.baseUrl + "/metrics"));
            assertThat(o.code()).as(o.err()).isZero();
            String replica = sim.baseUrl.substring("http://".length());
            assertThat(o.err())
                    .contains(
                            "warning: stage 1: the prefix cache was reset and warmed but was not"
                                    + " warm: replica "
                                    + replica
                                    + " found 0.0 % of its prompt tokens cached (0 of 4800),"
                                    + " less than the 83.3 % implied by more than 26.7 %");
            assertThat(profiles(dir.resolve("results")))
                    .allSatisfy(
                            p -> {
                                assertThat(p.at("/dimensions/prefix_cache").asText())
                                        .isEqualTo("warm");
                                assertThat(p.at("/metrics/prefix_cache/verified").asBoolean())
                                        .isFalse();
                                assertThat(p.at("/metrics/prefix_cache/message").asText())
                                        .startsWith("replica " + replica + " found 0.0 %");
                            });
        }
    }

    /**
     * A config declaring {@code prefixCache: {state: warm, reset: false}}: nothing is emptied, the
     * prefixes are sent on top of what the cache holds. The second stage then finds the first
     * stage's whole prompts (it sends the same ones), more than the warm state implies, and no
     * reset is counted.
     */
    @Test
    void aWarmStateWithoutTheResetWarmsOnTopOfWhatTheCacheHolds(@TempDir Path dir)
            throws Exception {
        try (SimServer sim = new SimServer(dir.resolve("sim.log"), "--enable-prefix-caching")) {
            Path config = dir.resolve("run.yaml");
            Files.writeString(config, "workload:\n  prefixCache: {state: warm, reset: false}\n");
            SimServer.Outcome o =
                    SimServer.cli(
                            sweep(
                                    sim.baseUrl,
                                    dir.resolve("results"),
                                    "--config",
                                    config.toString(),
                                    "--scrape-metrics",
                                    sim.baseUrl + "/metrics"));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.err())
                    .contains(
                            "prefix cache: warmed (not reset) before every stage at " + sim.baseUrl)
                    .doesNotContain("warning");
            assertThat(sim.counter("modelsim_prefix_cache_resets_total")).isZero();
            // Stage 1: every prompt finds its prefix; stage 2 finds whole prompts (and the
            // warming before it finds the prefixes stage 1 left).
            assertThat(sim.counter("vllm:prefix_cache_hits_total"))
                    .isEqualTo(WARMED_PREFIX_HITS + GROUPS * (PREFIX / BLOCK) * BLOCK + WARM_HITS);
            List<JsonNode> profiles = profiles(dir.resolve("results"));
            assertThat(profiles).hasSize(2);
            assertThat(profiles)
                    .allSatisfy(
                            p -> {
                                assertThat(p.at("/dimensions/prefix_cache").asText())
                                        .isEqualTo("warm");
                                assertThat(p.at("/metrics/prefix_cache/verified").asBoolean())
                                        .isTrue();
                            });
            // In the windows: stage 1 its prefixes, stage 2 its whole prompts (files in name
            // order).
            assertThat(profiles.stream().map(p -> p.at("/metrics/prefix_cache/hits").asDouble()))
                    .containsExactlyInAnyOrder(WARMED_PREFIX_HITS, WARM_HITS);

            // Naming servers to reset contradicts the config.
            o =
                    SimServer.cli(
                            sweep(
                                    sim.baseUrl,
                                    dir.resolve("refused"),
                                    "--config",
                                    config.toString(),
                                    "--reset-prefix-cache"));
            assertThat(o.code()).as(o.err()).isEqualTo(2);
            assertThat(o.err())
                    .contains(
                            "--reset-prefix-cache: not with the config's"
                                    + " workload.prefixCache.reset false");
        }
    }

    @Test
    void aWarmCacheNeedsSharedPrefixesToHold(@TempDir Path dir) throws Exception {
        SimServer.Outcome o =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --num-prompts 1"
                                        + " --warm-prefix-cache"));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err())
                .contains(
                        "--warm-prefix-cache: needs --dataset-name prefix_repetition, whose"
                                + " shared prefixes are what a warm cache holds");
        Path config = dir.resolve("run.yaml");
        Files.writeString(config, "workload:\n  prefixCache: {state: warm}\n");
        o =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --num-prompts 1 --config %s",
                                config.toString()));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err())
                .contains("workload.prefixCache.state: warm needs dataset.type prefix_repetition");
    }

    @Test
    void aBadResetUrlIsRefusedBeforeAnythingIsSent() {
        SimServer.Outcome o =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --num-prompts 1"
                                        + " --reset-prefix-cache ftp://replica:8000"));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--reset-prefix-cache: scheme 'ftp' is not supported");
    }
}
