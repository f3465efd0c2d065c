package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --model-mix} against model-sim serving a base model and a LoRA adapter (or several
 * model names): each request asks for one model drawn by weight, the profile's per-model counts are
 * the server's own, a session keeps its model, and refusals name the flag.
 */
class ModelMixCliTest {

    /**
     * A random workload against {@code sim} with {@code flags} (no --model: the mix names them).
     */
    private static String[] run(SimServer sim, Path results, String flags) {
        return argv(
                "run --base-url %s --backend openai --ignore-eos --random-input-len 16"
                        + " --random-output-len 16 --progress none --cooldown 0 --result-dir %s "
                        + flags,
                sim.baseUrl,
                results.toString());
    }

    private static Map<String, Long> byModel(List<SimServer.Seen> seen) {
        return seen.stream()
                .collect(Collectors.groupingBy(SimServer.Seen::model, Collectors.counting()));
    }

    @Test
    void eachRequestAsksForAModelDrawnByWeightAndTheProfileCountsPerModel(@TempDir Path dir)
            throws Exception {
        int prompts = 400;
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        "--served-model-name",
                        "base",
                        "--lora-modules",
                        "sql-lora=/adapters/sql",
                        "--request-log",
                        log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    SimServer.cli(
                            run(
                                    sim,
                                    results,
                                    "--model-mix base:3,sql-lora:1 --num-prompts "
                                            + prompts
                                            + " --request-rate inf --max-concurrency 8 --seed 4"));
            assertThat(o.code()).as(o.err()).isZero();
            Map<String, Long> seen = byModel(SimServer.requestLog(log, 0));
            assertThat(seen.keySet()).containsExactlyInAnyOrder("base", "sql-lora");
            assertThat(seen.get("base") + seen.get("sql-lora")).isEqualTo(prompts);
            // 3 to 1: a quarter asked for the adapter (4 standard deviations: 0.25 +- 0.087).
            assertThat(seen.get("sql-lora") / (double) prompts).isBetween(0.163, 0.337);
            JsonNode profile = LpgParityTest.onlyProfile(results);
            assertThat(profile.at("/dimensions/model_mix").asText()).isEqualTo("base:3 sql-lora:1");
            JsonNode models = profile.at("/metrics/by_model");
            for (String model : List.of("base", "sql-lora")) {
                // The profile's counts are exactly the server's.
                assertThat(models.at("/" + model + "/requests_sent").asLong())
                        .as(model)
                        .isEqualTo(seen.get(model));
                assertThat(models.at("/" + model + "/completed").asLong())
                        .isEqualTo(seen.get(model));
                assertThat(models.at("/" + model + "/output_tokens").asLong())
                        .isEqualTo(16 * seen.get(model));
                assertThat(models.at("/" + model + "/ttft_ms_p50").asDouble()).isPositive();
            }
            assertThat(models.at("/base/share").asDouble()).isEqualTo(0.75);

            // The same seed asks the same prompts of the same models.
            SimServer.Outcome again =
                    SimServer.cli(
                            run(
                                    sim,
                                    dir.resolve("again"),
                                    "--model-mix base:3,sql-lora:1 --num-prompts "
                                            + prompts
                                            + " --request-rate inf --max-concurrency 8 --seed 4"));
            assertThat(again.code()).as(again.err()).isZero();
            assertThat(byModel(SimServer.requestLog(log, prompts))).isEqualTo(seen);
        }
    }

    @Test
    void aSessionKeepsItsModel(@TempDir Path dir) throws Exception {
        int turns = 3;
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        "--served-model-name",
                        "a,b",
                        "--request-log",
                        log.toString())) {
            SimServer.Outcome o =
                    SimServer.cli(
                            run(
                                    sim,
                                    dir.resolve("results"),
                                    "--model-mix a,b --dataset-name multi-turn --turns 3"
                                            + " --sessions 1 --num-sessions 12 --seed 2"));
            assertThat(o.code()).as(o.err()).isZero();
            List<SimServer.Seen> seen = SimServer.requestLog(log, 0);
            assertThat(seen).hasSize(12 * turns);
            // One user: the sessions' turns arrive one after another.
            for (int s = 0; s < 12; s++) {
                String model = seen.get(s * turns).model();
                for (int t = 1; t < turns; t++) {
                    assertThat(seen.get(s * turns + t).model())
                            .as("session %d", s)
                            .isEqualTo(model);
                }
            }
            assertThat(byModel(seen).keySet()).containsExactlyInAnyOrder("a", "b");
        }
    }

    @Test
    void eachModelIsJudgedByItsOwnSloFromAConfigFile(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("mix.yaml");
        java.nio.file.Files.writeString(
                config,
                """
                workload:
                  models:
                    - {name: base, weight: 1, slo: {e2eLatency: 60s, minAttainment: 0.9}}
                    - {name: sql-lora, weight: 1, slo: {e2eLatency: 1ms}}
                    - {name: chat-lora, weight: 1}
                """);
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        "--served-model-name",
                        "base",
                        "--lora-modules",
                        "sql-lora=/a",
                        "chat-lora=/b",
                        "--time-to-first-token",
                        "5ms")) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    SimServer.cli(
                            run(
                                    sim,
                                    results,
                                    "--config "
                                            + config
                                            + " --num-prompts 60 --request-rate inf"
                                            + " --max-concurrency 4"));
            assertThat(o.code()).as(o.err()).isZero();
            JsonNode models = LpgParityTest.onlyProfile(results).at("/metrics/by_model");
            // base meets its 60 s; the adapter cannot answer within 1 ms; the other adapter has
            // no SLO and the run none either.
            assertThat(models.at("/base/slo/attainment").asDouble()).isEqualTo(1.0);
            assertThat(models.at("/base/slo/met").asBoolean()).isTrue();
            assertThat(models.at("/base/slo/min_attainment").asDouble()).isEqualTo(0.9);
            assertThat(models.at("/sql-lora/slo/attainment").asDouble()).isZero();
            assertThat(models.at("/sql-lora/slo/met").asBoolean()).isFalse();
            assertThat(models.at("/sql-lora/slo/e2el_ms").asDouble()).isEqualTo(1.0);
            assertThat(models.at("/chat-lora").has("slo")).isFalse();
            assertThat(
                            models.at("/base/requests_sent").asLong()
                                    + models.at("/sql-lora/requests_sent").asLong()
                                    + models.at("/chat-lora/requests_sent").asLong())
                    .isEqualTo(60);
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
        assertThat(refused("--model-mix a,b --model a")).contains("--model-mix: not with --model");
        assertThat(refused("--model-mix a:0")).contains("--model-mix: a's weight must be > 0");
        assertThat(refused("--model-mix a,a")).contains("--model-mix: a is listed twice");
        assertThat(refused("--model-mix a:x"))
                .contains("--model-mix: 'a:x': the weight after ':' is not a number");
    }
}
